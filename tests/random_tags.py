"""Random tag sequences for the scheme and scoring tests."""

from __future__ import annotations

import numpy as np


def random_tags(rng: np.random.Generator, length: int, prefixes: str, types: list[str]) -> list[str]:
    """Any sequence of tags from ``prefixes`` (``O`` among them for outside) and ``types`` (``""``
    gives untyped tags); usually invalid in every scheme."""
    tags = []
    for _ in range(length):
        prefix = prefixes[int(rng.integers(len(prefixes)))]
        entity_type = types[int(rng.integers(len(types)))]
        tags.append("O" if prefix == "O" else f"{prefix}-{entity_type}" if entity_type else prefix)
    return tags
