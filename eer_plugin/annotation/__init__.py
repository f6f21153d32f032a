"""What annotators and estimates do with a corpus: the annotation simulators (EE, NNS, random drop),
the entity-ratio estimate from complete documents, the bootstrap behind its interval and the
significance tests, and CBL's relabelling rules. No AllenNLP import; builds on :mod:`eer_plugin.corpus`."""
