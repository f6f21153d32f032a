"""Corpus files in: the :class:`~eer_plugin.corpus.documents.Document` every reader produces, the file
formats (CoNLL, OntoNotes, JSON lines), the importers of annotation tools, the one input text
normalisation and the inspection of a data file. No AllenNLP import; builds on :mod:`eer_plugin.core`."""
