"""Reading the bytes of an input as text: UTF-8 (:func:`~hgner.core.fileio.decode_utf8`), and
UTF-16 refused with a line naming the input (read as UTF-8, its NUL bytes would tag as nothing,
silently)."""

from __future__ import annotations

from ..core.errors import HgnerError
from ..core.fileio import decode_utf8

SNIFF_BYTES = 4096  # the start of an input that the UTF-16 check reads
SNIFF_MIN_BYTES = 8  # shorter inputs are not told by their NUL bytes
UTF16_NUL_SHARE = 0.6  # of the bytes in one position (odd or even) that are NUL: UTF-16 text
_BOMS = {b"\xff\xfe": "UTF-16LE", b"\xfe\xff": "UTF-16BE"}


def utf16_kind(raw: bytes) -> str | None:
    """``UTF-16LE`` or ``UTF-16BE`` when ``raw`` (the start of an input) is UTF-16 text, by its
    byte-order mark or, without one, by NUL bytes in every other position (the high bytes of
    Latin-script characters); None otherwise. UTF-8 text holds NUL bytes in no such pattern."""
    head = raw[:SNIFF_BYTES]
    for bom, kind in _BOMS.items():
        if head.startswith(bom) and not head.startswith(b"\xff\xfe\x00\x00"):  # (not UTF-32)
            return kind
    if len(head) < SNIFF_MIN_BYTES:
        return None
    even, odd = head[0::2], head[1::2]
    odd_nul, even_nul = odd.count(0) / len(odd), even.count(0) / len(even)
    if odd_nul >= UTF16_NUL_SHARE and even_nul < UTF16_NUL_SHARE / 4:
        return "UTF-16LE"
    if even_nul >= UTF16_NUL_SHARE and odd_nul < UTF16_NUL_SHARE / 4:
        return "UTF-16BE"
    return None


def check_not_utf16(raw: bytes, where: str) -> None:
    """An :class:`HgnerError` naming ``where`` when ``raw`` (an input, or its start) is UTF-16."""
    kind = utf16_kind(raw)
    if kind is not None:
        shown = where if where not in ("<stdin>", "-") else "standard input"
        raise HgnerError(f"{shown}: looks like {kind} text; hgner reads UTF-8: convert it first, e.g. "
                         f"iconv -f {kind} -t UTF-8")


def decode_input(raw: bytes, where: str) -> str:
    """``raw`` as UTF-8 text (:func:`~hgner.core.fileio.decode_utf8`), UTF-16 refused (:func:`check_not_utf16`)."""
    check_not_utf16(raw, where)
    return decode_utf8(raw, where)
