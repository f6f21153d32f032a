"""Training components registered with AllenNLP: the step-budget trainer, the ratio-calibrated start, checkpointing."""
