"""The package version (one place: the root package, the CLI and model files read it)."""

__version__ = "0.1.0"
