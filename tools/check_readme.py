"""Run every command the README and the documentation show, as written, and say which fail (not
part of CI: some take minutes, and the first downloads CoNLL-2003 when the data home does not have it).

The documents are README.md, docs/**/*.md and the pages the site generates at build time
(``docs/hooks/render.py``: the results pages' commands, the decoder listing). The commands are the
lines of their ```bash and ```console blocks (in console blocks, the lines after ``$``; a bash block
that starts a background job with ``&``, such as a server, runs whole, as one shell session that
stops at its first failing line and stops its background jobs when it ends) and the
inline code spans that are ``hgner`` commands with arguments (```hgner tag``` alone only names a
command, and ```hgner evaluate --set``` an option). ``tests/test_readme.py`` parses every ``hgner``
command found here with the CLI's own parser, and runs every Python example that shows what it
prints; this script runs the commands::

    python tools/check_readme.py               # run everything (about 30 minutes on 2 cores)
    python tools/check_readme.py --list        # show the commands and what would be skipped
    python tools/check_readme.py --match tag   # only commands containing "tag"

Each command runs through bash in a fresh temporary folder (outputs such as ``f1.png`` and
``models/my-model`` land there), which has an ``article.txt`` for the example that tags one, and
folders ``notes/`` and ``corpus/`` holding a copy of it for the examples that tag a folder.
``pip install`` steps are left out (the script checks the installed ``hgner``), as are the test
command and commands with placeholders (``CORPUS``, ``FILE``, ``models/NAME``, ``...``). A console block's
printed output (up to the next ``$``, leading and trailing blank lines aside) is compared with what
the command prints now.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
RENDER = ROOT / "docs" / "hooks" / "render.py"
# generated from module docstrings, which quote code, not commands; the research log, which quotes past runs' commands
NOT_COMMANDS = {"development/modules.md", "development/research-log.md"}
ARTICLE = "Jim Smith flew from New York to Paris on Monday.\n\nAngela Merkel met the European Union's leaders in Brussels.\n"
PLACEHOLDER = re.compile(r"\b(CORPUS|FILE|DIR|NAME|PATH|TEXT|INPUT|MODEL)\b|\.\.\.")
_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.M | re.S)
_INLINE = re.compile(r"`(hgner [^`]+)`")
_OPTION_NAME = re.compile(r"hgner [a-z]+ --[a-z-]+")  # `hgner evaluate --set` names an option, it is no command
_PRINTS = re.compile(r"\s*(?:which )?prints:?\s*(?:<!--[^>]*-->\s*)?(?:```\w*\n(.*?)```|`([^`]*)`)", re.S)
_OPERATORS = {"&&", "||", "|", ";", "&"}
_REDIRECTS = {">", ">>", "<", "2>", "&>"}


@dataclass
class Command:
    """A command line of the README, the README line it is on, and the output shown (console blocks)."""

    text: str
    line: int
    output: str | None = None
    source: str = "README.md"

    def where(self) -> str:
        return f"{self.source}:{self.line}"


@dataclass
class Example:
    """A Python example (a ```python block) and what the document says it prints."""

    code: str
    printed: str
    inline: bool  # printed shown as an inline code span (compare stripped) rather than a block
    source: str
    line: int


def documents() -> dict[str, str]:
    """The README, every Markdown file under docs/, and the generated pages, by path."""
    found = {"README.md": README.read_text(encoding="utf-8")}
    for path in sorted((ROOT / "docs").rglob("*.md")):
        found[path.relative_to(ROOT).as_posix()] = path.read_text(encoding="utf-8")
    spec = importlib.util.spec_from_file_location("hgner_docs_render", RENDER)
    render = sys.modules.setdefault("hgner_docs_render", importlib.util.module_from_spec(spec))
    spec.loader.exec_module(render)
    for uri, make in render.PAGES.items():
        if uri not in NOT_COMMANDS:
            found.setdefault(f"docs/{uri}", make())
    return found


def all_commands() -> list[Command]:
    """Every document's commands, each knowing its document."""
    return [Command(c.text, c.line, c.output, source) for source, text in documents().items()
            if source.removeprefix("docs/") not in NOT_COMMANDS for c in readme_commands(text)]


def python_examples(text: str, source: str = "README.md") -> list[Example]:
    """The ```python blocks of ``text`` that are followed by what they print ("prints:" and a
    block, or "prints `...`")."""
    found = []
    for block in _FENCE.finditer(text):
        if block.group(1) != "python":
            continue
        shown = _PRINTS.match(text, block.end())
        if shown:
            inline = shown.group(1) is None
            found.append(Example(block.group(2), shown.group(2) if inline else shown.group(1), inline, source,
                                 text.count("\n", 0, block.start()) + 1))
    return found


def readme_commands(text: str) -> list[Command]:
    """The commands in ``text`` (see the module docstring), in README order."""
    found: list[Command] = []
    fenced_spans: list[tuple[int, int]] = []
    for block in _FENCE.finditer(text):
        fenced_spans.append(block.span())
        language, body = block.group(1), block.group(2)
        first_line = text.count("\n", 0, block.start(2)) + 1
        if language == "bash":
            lines = [(first_line + offset, line.strip()) for offset, line in enumerate(body.splitlines())
                     if line.strip() and not line.lstrip().startswith("#")]
            if any(line.endswith("&") and not line.endswith("&&") for _, line in lines):
                # a block that starts a background job (a server) is one shell session, as a user pastes it
                found.append(Command("\n".join(line for _, line in lines), lines[0][0]))
            else:
                found.extend(Command(line, number) for number, line in lines)
        elif language == "console":
            current: Command | None = None
            for offset, line in enumerate(body.splitlines()):
                if line.startswith("$ "):
                    current = Command(line[2:].strip(), first_line + offset, "")
                    found.append(current)
                elif current is not None:  # the output runs to the next "$ " (blank lines included)
                    current.output += line + "\n"
    for span in _INLINE.finditer(text):
        if any(start <= span.start() < end for start, end in fenced_spans):
            continue
        words = " ".join(span.group(1).split())
        if len(words.split()) > 2 and not _OPTION_NAME.fullmatch(words):
            found.append(Command(words, text.count("\n", 0, span.start()) + 1))
    return sorted(found, key=lambda c: c.line)


def hgner_argvs(command: str) -> list[list[str]]:
    """The argument lists of the ``hgner`` invocations in a shell line (``a && hgner ... | b``; the
    lines of a session each), without leading ``VAR=value`` assignments, redirections or comments."""
    lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    segments: list[list[str]] = [[]]
    for token in lexer:
        if token in _OPERATORS:
            segments.append([])
        else:
            segments[-1].append(token)
    argvs = []
    for segment in segments:
        words = []
        skip_next = False
        for token in segment:
            if skip_next:
                skip_next = False
            elif token in _REDIRECTS:
                skip_next = True
            else:
                words.append(token)
        while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
            words.pop(0)
        if words and words[0] == "hgner":
            argvs.append(words[1:])
    return argvs


def runnable(command: Command) -> tuple[str | None, str]:
    """The shell line to run (None when it is skipped) and why."""
    parts = [p.strip() for p in command.text.split("&&")]
    parts = [p for p in parts if not p.startswith("pip install")]
    if not parts:
        return None, "installs the package"
    line = " && ".join(parts)
    if "pytest" in line:
        return None, "the test command"
    if PLACEHOLDER.search(line.split("#")[0]):
        return None, "has placeholders"
    return line, ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="print the commands, run nothing")
    parser.add_argument("--match", help="run only commands containing this text")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per command (default 3600)")
    args = parser.parse_args()
    failures = 0
    commands = [c for c in all_commands() if args.match is None or args.match in c.text]
    with tempfile.TemporaryDirectory(prefix="hgner-readme-") as folder:
        (Path(folder) / "article.txt").write_text(ARTICLE, encoding="utf-8")
        for example in ("notes", "corpus"):  # the folders the folder examples tag
            (Path(folder) / example).mkdir()
            (Path(folder) / example / "article.txt").write_text(ARTICLE, encoding="utf-8")
        for command in commands:
            line, why = runnable(command)
            if line is None or args.list:
                print(f"{command.where()}: {'skipped (' + why + ')' if line is None else 'would run'}: {command.text}")
                continue
            start = time.perf_counter()
            if "\n" in line:  # a session: stop at the first failing line, and stop its background jobs in any case
                line = f"trap 'kill $(jobs -p) 2>/dev/null' EXIT\nset -e\n{line}"
            try:
                result = subprocess.run(["bash", "-o", "pipefail", "-c", line], cwd=folder, capture_output=True,
                                        text=True, timeout=args.timeout)
            except subprocess.TimeoutExpired:
                failures += 1
                print(f"{command.where()}: FAILED (timed out after {args.timeout:.0f} s): {command.text}")
                continue
            seconds = time.perf_counter() - start
            problem = None
            if result.returncode != 0:
                last = (result.stderr.strip().splitlines() or ["(no message)"])[-1]
                problem = f"exit status {result.returncode}: {last}"
            elif command.output is not None and result.stdout.strip() != command.output.strip():
                problem = f"printed something else:\n{result.stdout}"
            failures += problem is not None
            status = f"FAILED ({problem})" if problem else "ok"
            print(f"{command.where()}: {status} [{seconds:.1f} s]: {command.text}", flush=True)
    print(f"{failures} of {len(commands)} commands failed" if failures else f"all {len(commands)} commands ok (or skipped)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
