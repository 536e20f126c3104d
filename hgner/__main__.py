"""``python -m hgner``: the ``hgner`` command (signals handled from the first moment)."""

import sys

from hgner.entry import entry

sys.exit(entry())
