"""Serving a model: the litellm chat client, the model catalog, the local vLLM process, adapters."""
