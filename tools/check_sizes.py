"""The house's size limits: no module of the package over 500 lines, no function over 60 lines
(numba kernels excepted: a function decorated with ``njit``/``jit``). Prints each breach;
exit status 1 when there is one.

Usage: python tools/check_sizes.py [PACKAGE_DIR] [--max-module 500] [--max-function 60] [--exempt FILE ...]
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

# modules another change owns and is splitting (issue 37 leaves them to it)
EXEMPT_MODULES: tuple[str, ...] = ()  # none: every module and function is held to the limits


def _is_kernel(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether ``node`` is decorated as a numba kernel (``@njit``, ``@numba.njit(...)``, ``@jit``)."""
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in ("njit", "jit"):
            return True
    return False


def breaches(root: Path, max_module: int, max_function: int, exempt: tuple[str, ...]) -> list[str]:
    """One line per module over ``max_module`` lines and per function over ``max_function``."""
    found = []
    base = root.resolve().parent
    for path in sorted(root.rglob("*.py")):
        relative = path.resolve().relative_to(base).as_posix()
        source = path.read_text(encoding="utf-8")
        lines = source.count("\n")
        if lines > max_module and relative not in exempt:
            found.append(f"{relative}: {lines} lines (at most {max_module})")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not _is_kernel(node):
                length = node.end_lineno - node.lineno + 1
                if length > max_function and relative not in exempt:
                    found.append(f"{relative}:{node.lineno}: function {node.name} is {length} lines "
                                 f"(at most {max_function})")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default=str(Path(__file__).resolve().parent.parent / "hgner"))
    parser.add_argument("--max-module", type=int, default=500)
    parser.add_argument("--max-function", type=int, default=60)
    args = parser.parse_args()
    found = breaches(Path(args.root), args.max_module, args.max_function, EXEMPT_MODULES)
    print("\n".join(found) or "sizes: every module and function within the limits")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
