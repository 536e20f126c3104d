"""Training models (``hgner train``): the options (:mod:`.options`), fitting the CRF
(:mod:`.crf`), learning the skip potential (:mod:`.skip`) and the calibration factor
(:mod:`.calibration`) on a development corpus, the word tables from outside the corpus
(:mod:`.tables`), and all of it in one call (:mod:`.build`)."""

from .build import build_model
from .crf import train
from .options import TrainOptions, WordTables

__all__ = ["TrainOptions", "WordTables", "build_model", "train"]
