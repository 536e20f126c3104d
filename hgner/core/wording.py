"""Small text helpers for messages and tables: counted nouns, aligned columns."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def counted(n: int, noun: str) -> str:
    """``n`` and the noun, plural unless ``n`` is 1: ``counted(1, "document")``, ``counted(3, "entity")``."""
    if n == 1:
        return f"{n} {noun}"
    return f"{n} {noun[:-1]}ies" if noun.endswith("y") else f"{n} {noun}s"


def name_width(names: Iterable[str], heading: str = "decoder") -> int:
    """Width of a table's first column: its longest name or its heading."""
    return max([len(heading), *map(len, names)])


def aligned(rows: Sequence[Sequence[str]]) -> list[str]:
    """``rows`` as lines of left-aligned columns, two spaces apart."""
    widths = [max(map(len, column)) for column in zip(*rows)]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]


def printable(text: object) -> str:
    """``text`` safe to print on a terminal: control characters (escape sequences, carriage
    returns, bidirectional overrides) and undecodable bytes shown as Python escapes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))
