"""``hgner serve``: a JSON API under ``/v1`` and a web page where decoders compete on one text.

:mod:`hgner.server.settings` holds the validated options (no web framework), :mod:`.engine` tags
and compares (no web framework), :mod:`.limits` the admission queue and deadlines,
:mod:`.metrics` the Prometheus metrics, :mod:`.bodies` reads request bodies as strict JSON and names
the field an error is about (no web framework), and :mod:`.app` is the one module that talks to the web
framework (FastAPI on uvicorn: ``pip install 'hgner[serve]'``).
"""
