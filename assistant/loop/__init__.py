"""The multi-turn loop: prompts -> reply -> program -> sandbox -> feedback, and its recorder."""
