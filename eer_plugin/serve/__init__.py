"""``eer-ner serve``: a Label Studio ML backend (pre-annotations, learning from partial annotations, ranking).

The protocol and mapping logic lives in modules that need no HTTP framework and are tested without a server:
:mod:`~eer_plugin.serve.label_config` (the project's ``<Labels>`` and the model's types),
:mod:`~eer_plugin.serve.tasks` (tasks in, Label Studio predictions out, which annotations are complete),
:mod:`~eer_plugin.serve.client` (the Label Studio API), :mod:`~eer_plugin.serve.models` (the served model, its
versions in the work directory and the background training) and :mod:`~eer_plugin.serve.backend` (the
endpoints as plain methods). Only :mod:`~eer_plugin.serve.app` imports FastAPI and uvicorn (the ``serve``
extra: ``pip install eer-ner[serve]``); importing :mod:`eer_plugin` imports none of this package.
See docs/label-studio.md.
"""
