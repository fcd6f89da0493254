"""Stored sessions -> the bandit dataset: selection, held-out splits, perturbed contexts, files."""
