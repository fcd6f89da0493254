"""The shapes of a conversation with a model, below everything that talks to one: a chat
message and a chat result (`shapes`), where a reply's program is and where it ends (`extract`),
and when a growing reply has fallen into a loop (`repetition`). Imports nothing of the
assistant's but its errors."""
