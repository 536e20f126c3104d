"""Reference pages of the documentation site, generated when it is built: the CLI walked from
``hgner.cli.build_parser()``, the decoders from the registry, the JSON schemas, the errors and exit
statuses, the Python API (mkdocstrings directives for ``hgner.__all__``) and the module map from the
package's module docstrings (read without importing)."""

from __future__ import annotations

import argparse
import ast
import contextlib
import inspect
import io
import json
import os
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HELP_COLUMNS = 80


def _help(parser: argparse.ArgumentParser) -> str:
    """A parser's help at a fixed width, so the page does not depend on the terminal: HELP_COLUMNS,
    what a code block of the site shows whole beside the navigation on a 1440-pixel-wide screen."""
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(HELP_COLUMNS)
    try:
        return parser.format_help()
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    """The parser's subcommands, in the order they were added."""
    found = []
    for action in parser._actions:  # noqa: SLF001 (argparse has no public walk of its subparsers)
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            seen: set[int] = set()
            for name, sub in action.choices.items():
                if id(sub) not in seen:  # aliases point at the same parser
                    seen.add(id(sub))
                    found.append((name, sub))
    return found


def cli_page() -> str:
    """Every command's ``--help``, walked from the parser the ``hgner`` command uses."""
    from hgner.cli import build_parser

    parser = build_parser()
    lines = ["# Command line", "",
             "Generated from `hgner.cli.build_parser()` when the site is built: each section is the",
             "command's own `--help`.", "", "```text", _help(parser).rstrip(), "```", ""]

    def walk(prefix: str, parent: argparse.ArgumentParser, depth: int) -> None:
        for name, sub in _subcommands(parent):
            command = f"{prefix} {name}"
            lines.extend([f"{'#' * depth} {command}", "", "```text", _help(sub).rstrip(), "```", ""])
            walk(command, sub, min(depth + 1, 4))

    walk("hgner", parser, 2)
    return "\n".join(lines)


def _run_cli(argv: list[str]) -> str:
    from hgner.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    if code != 0:
        raise RuntimeError(f"hgner {' '.join(argv)} exited with {code}")
    return out.getvalue()


def _first_paragraph(text: str | None) -> str:
    return " ".join((text or "").strip().split("\n\n")[0].split())


def decoders_page() -> str:
    """The registered decoders: what ``hgner decoders`` prints, and each class's docstring."""
    import hgner
    from hgner.core import registry

    lines = ["# Decoders", "",
             "Generated from the decoder registry when the site is built. `hgner decoders` prints:", "",
             "```console", "$ hgner decoders", _run_cli(["decoders"]).rstrip(), "```", ""]
    for name in hgner.available_decoders():
        cls = registry.lookup(registry.decoders, name)
        lines.extend([f"## `{name}`", "", f"`{cls.__module__}.{cls.__qualname__}`", "",
                      (cls.__doc__ or "").strip() and _dedent_doc(cls.__doc__), ""])
    return "\n".join(lines)


def _dedent_doc(doc: str) -> str:
    return inspect.cleandoc(doc)


def _schema_rows(schema: dict[str, Any], prefix: str = "") -> list[str]:
    rows = []
    required = set(schema.get("required", []))
    for name, spec in schema.get("properties", {}).items():
        kind = spec.get("type", "")
        kind = " or ".join(kind) if isinstance(kind, list) else kind
        what = " ".join(str(spec.get("description", "")).split()).replace("|", "\\|")
        rows.append(f"| `{prefix}{name}` | {kind} | {'yes' if name in required else ''} | {what} |")
        if isinstance(spec, dict) and spec.get("type") == "object" and "properties" in spec:
            rows.extend(_schema_rows(spec, f"{prefix}{name}."))
    return rows


def schemas_page() -> str:
    """Every JSON schema the package validates files with (``hgner/schemas/*.json``)."""
    lines = ["# File schemas", "",
             "Generated from `hgner/schemas/*.json` and `corpora/manifest.schema.json`, the schemas every",
             "model folder file, word table, job manifest and corpus manifest is checked against before use",
             "(errors name the field). Fields hgner does not read are allowed unless a schema says otherwise.", ""]
    for path in [*sorted((ROOT / "hgner" / "schemas").glob("*.json")), ROOT / "corpora" / "manifest.schema.json"]:
        schema = json.loads(path.read_text(encoding="utf-8"))
        title = schema.get("title") or path.name
        lines.extend([f"## `{path.name}`", "", _first_paragraph(schema.get("description")) or title, ""])
        rows = _schema_rows(schema)
        if rows:
            lines.extend(["| field | type | required | what |", "| --- | --- | --- | --- |", *rows, ""])
        lines.extend(["??? note \"The schema\"", "", "    ```json",
                      *("    " + line for line in json.dumps(schema, indent=2, ensure_ascii=False).splitlines()),
                      "    ```", ""])
    return "\n".join(lines)


EXIT_CODES = [
    ("0", "success (also when the reader of standard output goes away early, as `head` does)"),
    ("1", "a bug in hgner: one line asking for a report (`--debug` before the command prints the traceback); "
          "`hgner corpora verify` also exits 1 on a checksum mismatch"),
    ("2", "bad input: an argument, file, model, corpus or setting that cannot be used, an unreadable or "
          "unwritable file, a full disk: one line on standard error, the command's name, `error:` and what is "
          "wrong, naming the file, line, argument or field"),
    ("129", "hung up (SIGHUP): one line, the command's name and `hung up`; temporary files and folders removed"),
    ("130", "interrupted (Ctrl-C, SIGINT): one line, the command's name and `interrupted`; temporary files and folders removed"),
    ("143", "terminated (SIGTERM): one line, the command's name and `terminated`; temporary files and folders removed"),
]


def errors_page() -> str:
    """The error hierarchy of ``hgner.core.errors`` and the command's exit statuses."""
    from hgner.core import errors

    lines = ["# Errors and exit statuses", "",
             "Every problem with the user's input is an `hgner.core.errors.HgnerError` (generated from",
             "`hgner/core/errors.py`); the command turns it into one line on standard error and exit status 2.",
             "", "| exit status | meaning |", "| --- | --- |", *(f"| {c} | {m.replace('|', chr(92) + '|')} |" for c, m in EXIT_CODES), "",
             "| error | base | when |", "| --- | --- | --- |"]

    def walk(cls: type) -> None:
        for sub in sorted(cls.__subclasses__(), key=lambda c: c.__name__):
            if sub.__module__.startswith("hgner"):
                lines.append(f"| `{sub.__module__}.{sub.__name__}` | `{cls.__name__}` | "
                             f"{_first_paragraph(sub.__doc__).replace('|', chr(92) + '|')} |")
                walk(sub)

    base = errors.HgnerError
    lines.append(f"| `{base.__module__}.{base.__name__}` | `Exception` | {_first_paragraph(base.__doc__)} |")
    _import_all_modules()  # errors defined in other modules register as subclasses once imported
    walk(base)
    return "\n".join(lines) + "\n"


def _package_files() -> list[Path]:
    return sorted(p for p in (ROOT / "hgner").rglob("*.py") if "__pycache__" not in p.parts)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _import_all_modules() -> None:
    import importlib

    for path in _package_files():
        name = _module_name(path)
        if name.endswith(".__main__"):  # running it is the command, not an import
            continue
        with contextlib.suppress(ImportError):  # optional extras (dask, pyarrow) may be missing
            importlib.import_module(name)


def module_docstrings() -> dict[str, str]:
    """Each module of the package and the first paragraph of its docstring, read without importing."""
    found = {}
    for path in _package_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found[_module_name(path)] = _first_paragraph(ast.get_docstring(tree))
    return found


def modules_page() -> str:
    """The module map: every module of ``hgner`` with its docstring's first paragraph."""
    lines = ["# Module map", "",
             "Generated from the package's module docstrings when the site is built, so it follows the code.",
             "", "| module | what it holds |", "| --- | --- |"]
    for name, doc in module_docstrings().items():
        lines.append(f"| `{name}` | {doc.replace('|', chr(92) + '|') or '(no docstring)'} |")
    lines.extend([
        "", "Outside the package:", "",
        "| folder | what it holds |", "| --- | --- |",
        "| `models/` | the shipped models (installed as `hgner.models`) |",
        "| `corpora/` | the corpus catalogue: one manifest per corpus and its schema (installed as `hgner.corpora`) |",
        "| `benchmarks/` | what the results pages are built from (`decoder_results.sh` writes `docs/results/*.json`) |",
        "| `tools/` | the build of the shipped models, the fuzzers, the house checks |",
        "| `experiments/` | tuning experiments and their logs (the [research log](research-log.md)) |",
        "| `tests/` | mirrors the package; see [Tests](tests.md) |",
        "| `docs/` | this site; `docs/hooks/` generates its reference and results pages |", ""])
    return "\n".join(lines)


def api_page() -> str:
    """The public API, ``hgner.__all__``, each name rendered from its docstring by mkdocstrings."""
    import hgner

    lines = ["# Python API", "", "Generated from the docstrings of `hgner.__all__` when the site is built; the",
             "[guide](../guide/python.md) shows them in use.", ""]
    lines.extend(f"::: hgner.{name}\n" for name in hgner.__all__ if not name.startswith("_"))
    return "\n".join(lines)
