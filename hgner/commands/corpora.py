"""``hgner corpora list|fetch|verify|info``: the catalogue and what of it is in the data home."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from .. import commands
from ..core.errors import HgnerError
from ..core.wording import aligned
from ..data import datahome
from ..data.catalog import Manifest, Split, catalogue, find_manifest, resolve
from ..data.corpus import load_corpus
from .arguments import OFFLINE_HELP

NAME = "corpora"
_LICENSE_DETAILS = re.compile(r" \(|, ")  # "CC-BY 4.0 (https://...)": the license's name comes first


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(NAME, help=commands.COMMANDS[NAME],
        description="The corpus catalogue (corpora/*.json) and the data home ($HGNER_DATA, else the user data "
                    "folder). A missing corpus is fetched from $HGNER_MIRROR (a folder or URL laid out as "
                    "CORPUS/FILE, NLTK packages as nltk_data/corpora/PACKAGE.zip) first, then its public sources; "
                    "every file's size and sha256 are verified.")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    list_parser = actions.add_parser("list", help="every corpus split: counts once present, present or not, license")
    list_parser.add_argument("-v", "--verbose", action="store_true",
                             help="the licenses in full and each split's path (wider than a terminal)")
    fetch_parser = actions.add_parser("fetch", help="fetch and verify corpora (a corpus name fetches all its splits)")
    fetch_parser.add_argument("names", nargs="+", metavar="NAME",
                              help="corpus or split, e.g. conll2003 wikigold nltk:ieer")
    fetch_parser.add_argument("--offline", action="store_true", help=OFFLINE_HELP)
    verify_parser = actions.add_parser("verify", help="check the size and sha256 of the files present (exit status 2 "
                                                      "on a mismatch)")
    verify_parser.add_argument("names", nargs="*", metavar="NAME", help="corpora or splits (default: all)")
    info_parser = actions.add_parser("info", help="a corpus's manifest: splits, sources, label map, license, citation")
    info_parser.add_argument("name", metavar="NAME")
    return parser


def _split_location(manifest: Manifest, split: Split) -> tuple[bool, str]:
    """Whether a split is present, and its path (where it would be, for a missing file)."""
    if manifest.nltk_package is None:
        path = datahome.file_path(manifest, split)
        return path.is_file(), str(path)
    package = datahome.nltk_location(manifest)
    if package is None:
        return False, str(datahome.nltk_dir() / "corpora" / f"{manifest.nltk_package}.zip")
    where = f"{package}/{split.file}" if split.file else package
    present = split.file is None or datahome.nltk_find(f"corpora/{manifest.nltk_package}/{split.file}") is not None
    return present, where


def _selected(names: Iterable[str]) -> list[tuple[Manifest, list[Split]]]:
    """(manifest, splits) for each name: a corpus (all its splits) or one split; every corpus when
    no name is given."""
    names = list(names)
    if not names:
        return [(m, list(m.splits.values())) for m in catalogue().values()]
    chosen = []
    for name in names:
        found = resolve(name)
        if found is None:
            raise HgnerError(f"corpus {name!r}: not in the catalogue (corpora: {', '.join(catalogue())})")
        manifest, split = found
        chosen.append((manifest, [split] if split is not None and name != manifest.name else list(manifest.splits.values())))
    return chosen


def list_corpora(out: TextIO, verbose: bool = False) -> int:
    """One row per split: name, counts once present, present or not, license (its first words;
    in full and the split's path with ``verbose``)."""
    rows = [("name", "documents", "sentences", "tokens", "present", "license", *(("path",) if verbose else ()))]
    for manifest in catalogue().values():
        for split in manifest.splits.values():
            present, where = _split_location(manifest, split)
            counts = ("-", "-", "-")
            name = manifest.split_name(split.name)
            status = "yes" if present else "no"
            if present:
                try:
                    corpus = load_corpus(name, offline=True)
                except HgnerError:  # a file that does not verify: `hgner corpora verify` says why
                    status = "changed"
                else:
                    counts = (f"{len(corpus.documents):,}", f"{len(corpus.sentences):,}", f"{corpus.n_tokens:,}")
            license = manifest.license if verbose else _LICENSE_DETAILS.split(manifest.license, 1)[0]
            rows.append((name, *counts, status, license, *((where,) if verbose else ())))
    out.writelines(line + "\n" for line in aligned(rows))
    out.write(f"data home: {datahome.data_home()}\n")
    return 0


def fetch(names: list[str], offline: bool, out: TextIO) -> int:
    """Fetch (or find) and verify every split of the named corpora."""
    for manifest, splits in _selected(names):
        for split in splits:
            location = datahome.ensure(manifest, split, offline=offline)
            if manifest.nltk_package is None:
                out.write(f"{manifest.split_name(split.name)}: verified (size and sha256) {location}\n")
            else:
                out.write(f"{manifest.split_name(split.name)}: present {_split_location(manifest, split)[1]}\n")
    return 0


def verify(names: list[str], out: TextIO) -> int:
    """Check the size and sha256 of every present file; 2 when one does not match (exit status 1
    is kept for bugs)."""
    failed = 0
    for manifest, splits in _selected(names):
        for split in splits:
            present, where = _split_location(manifest, split)
            name = manifest.split_name(split.name)
            if not present and manifest.nltk_package is None and Path(where).exists():
                failed += 1  # a folder (or device) where the file belongs
                out.write(f"{name}: FAILED: not a file {where}\n")
            elif not present:
                out.write(f"{name}: missing ({where})\n")
            elif manifest.nltk_package is not None:
                out.write(f"{name}: present, NLTK package (checked by NLTK's downloader when installed) {where}\n")
            else:
                problem = datahome.check_file(datahome.file_path(manifest, split), split)
                failed += problem is not None
                out.write(f"{name}: {'ok' if problem is None else 'FAILED: ' + problem} {where}\n")
    if failed:
        print(f"hgner corpora verify: error: {failed} file(s) do not match the catalogue; delete them to fetch them again",
              file=sys.stderr)
    return 2 if failed else 0


def _documents_marked(manifest: Manifest) -> str:
    """``yes``, ``no``, or which splits mark their documents (``-DOCSTART-``) and which do not."""
    marked = {split.documents_marked for split in manifest.splits.values()}
    if len(marked) == 1:
        return "yes" if marked.pop() else "no"
    unmarked = [name for name, split in manifest.splits.items() if not split.documents_marked]
    return f"yes, but not in {', '.join(unmarked)} (read in groups of sentences: --documents)"


def info(name: str, out: TextIO) -> int:
    """Everything the manifest says about a corpus, and where its files are."""
    manifest = find_manifest(name)
    out.write(f"{manifest.name}: {manifest.title}\n{manifest.description}\n")
    if manifest.nltk_package is not None:
        out.write(f"source: NLTK data package {manifest.nltk_package!r} (nltk.download)\n")
    else:
        out.write("sources, in order: $HGNER_MIRROR/" + manifest.name + "/FILE when set, then "
                  + ", ".join(manifest.urls) + "\n")
    label_map = ", ".join(f"{k} -> {v}" for k, v in manifest.label_map.items()) or "none (the corpus uses these types)"
    out.write(f"reader: {manifest.reader}\nlanguages: {', '.join(manifest.languages)}\n"
              f"tag scheme: {manifest.scheme}\nentity types: {', '.join(manifest.entity_types)}\n"
              f"label map: {label_map}\ndocuments marked: {_documents_marked(manifest)}\n"
              f"license: {manifest.license}\ncitation: {manifest.citation}\nsplits:\n")
    for split in manifest.splits.values():
        present, where = _split_location(manifest, split)
        checksum = f" {split.size:,} bytes, sha256 {split.sha256}" if split.sha256 else ""
        out.write(f"  {manifest.split_name(split.name)}: {split.file or 'the whole package'}{checksum}; "
                  f"{'present' if present else 'missing'} {where}\n")
    return 0


ACTIONS = {
    "list": lambda args: list_corpora(sys.stdout, args.verbose),
    "fetch": lambda args: fetch(args.names, datahome.is_offline(args.offline), sys.stdout),
    "verify": lambda args: verify(args.names, sys.stdout),
    "info": lambda args: info(args.name, sys.stdout),
}


def run(args: argparse.Namespace) -> int:
    """The ``hgner corpora`` subcommands."""
    return ACTIONS[args.action](args)
