"""hgner for code already on Dask: ``from hgner.dask import tag_bag, tag_dataframe`` (see
:mod:`hgner.distributed`; README "Scaling out")."""

from .distributed.connect import connect
from .distributed.evaluate import cluster_outcomes
from .distributed.frames import tag_bag, tag_dataframe
from .distributed.jobs import tag_to_folder
from .tagging.settings import TagSettings

__all__ = ["TagSettings", "cluster_outcomes", "connect", "tag_bag", "tag_dataframe", "tag_to_folder"]
