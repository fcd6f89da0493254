"""`cobalt debug`: fix a file of a user's own project against its test command."""
