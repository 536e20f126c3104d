"""hgner for code already on Dask: ``from hgner.dask import tag_bag, tag_dataframe`` (see
:mod:`hgner.cluster`; README "Scaling out")."""

from .cluster import connect, tag_bag, tag_dataframe, tag_to_folder, TagSettings

__all__ = ["TagSettings", "connect", "tag_bag", "tag_dataframe", "tag_to_folder"]
