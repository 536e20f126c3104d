"""The generated pages of the documentation site, as Markdown text by site path: the reference
pages and the module map (``docs_reference.py``) and the results pages (``docs_results.py``).
``pages.py`` (the mkdocs hook) adds them to the site; ``tools/check_readme.py`` and the tests
import this module (by path) to check them."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import docs_adapt as adapt  # noqa: E402
import docs_confidence as confidence  # noqa: E402
import docs_models as models  # noqa: E402
import docs_reference as reference  # noqa: E402
import docs_results as results  # noqa: E402

ROOT = results.ROOT
RESULTS = results.RESULTS
LOADED = results.LOADED
load = results.load

PAGES: dict[str, Callable[[], str]] = {
    "reference/cli.md": reference.cli_page,
    "reference/decoders.md": reference.decoders_page,
    "reference/schemas.md": reference.schemas_page,
    "reference/errors.md": reference.errors_page,
    "reference/api.md": reference.api_page,
    "development/modules.md": reference.modules_page,
    "results/table3.md": results.table3_page,
    "results/skip-chain.md": results.skip_page,
    "results/herded-family.md": results.variants_page,
    "results/models.md": lambda: models.models_page() + "\n" + confidence.confidence_section(),
    "results/tuning.md": results.tuning_page,
    "results/speed.md": results.speed_page,
    "results/reliability.md": results.reliability_page,
    "results/adapting.md": adapt.adapt_page,
}
# images drawn from the results when the site is built
IMAGES: dict[str, Callable[[], bytes]] = {"results/adapt-curve.png": adapt.adapt_curve_png,
                                          "results/confidence-curve.png": confidence.confidence_curve_png}
