"""What every command runs on: model archives, atomic writes and the output policy, the user errors and
how they are printed, encoders and their packages, the settings table, config files by name, and
:mod:`eer_plugin.patches`, the one place that installs (and lists) every AllenNLP internal
replaced at import time."""
