def __getattr__(name):
    raise AttributeError(f"torchvision.ops.boxes.{name} is unavailable (allennlp-torchvision-stub).")
