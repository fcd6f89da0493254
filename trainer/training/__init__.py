"""LoRA GRPO as a contextual bandit: the trainer, the reward, generation stops, launching."""
