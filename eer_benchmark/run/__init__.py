"""Run: the execution of a plan's runs (subprocesses, retries, jobs, resuming), the simulated training data,
the per-document evaluation of a trained model, and the finished runs' records."""
