"""After training: the gate, the adapter registry, merging, and the nightly job that runs it all."""
