"""mkdocs hook: adds the generated reference, results and module-map pages (``render.PAGES``) to
the site at build time, and a stand-in for ``serve.md`` while that page is not written yet."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from mkdocs.structure.files import File, Files

_spec = importlib.util.spec_from_file_location("hgner_docs_render", Path(__file__).with_name("render.py"))
render = sys.modules.setdefault("hgner_docs_render", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(render)

SERVE_STANDIN = """# Serving over HTTP

`hgner serve` is documented here once it lands (this page is generated while `docs/serve.md` does
not exist).
"""


def on_files(files: Files, config) -> Files:
    for uri, make in render.PAGES.items():
        files.append(File.generated(config, uri, content=make()))
    for uri, draw in render.IMAGES.items():
        files.append(File.generated(config, uri, content=draw()))
    if files.get_file_from_path("serve.md") is None:
        files.append(File.generated(config, "serve.md", content=SERVE_STANDIN))
    return files
