"""The foundation every other layer stands on, with no knowledge of models or corpora: the error
hierarchy (:mod:`~hgner.core.errors`), the process and its signals, files written atomically and
never over an input (:mod:`~hgner.core.fileio`), strict reading of JSON on disk
(:mod:`~hgner.core.validation`), folder seals (:mod:`~hgner.core.integrity`), the open registries,
tag schemes and entity scoring (:mod:`~hgner.core.schemes`, :mod:`~hgner.core.scoring`), waits with a
deadline, the version, and the wording of messages and tables."""
