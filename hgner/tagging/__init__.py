"""Tagging raw text (``hgner tag``, :func:`hgner.load`, the spaCy component): the settings of one
use (:mod:`.settings`, defaults in :mod:`.defaults`), the tagger (:mod:`.tagger`), what it reads
(:mod:`.inputs`), the output formats (:mod:`.writers`) and tagging many inputs into one of them
(:mod:`.run`). Importing the package loads none of them (``hgner tag --help`` stays quick)."""
