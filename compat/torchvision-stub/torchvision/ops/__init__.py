def __getattr__(name):
    raise AttributeError(f"torchvision.ops.{name} is unavailable (allennlp-torchvision-stub).")
