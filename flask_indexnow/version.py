"""The package's version, in one place: setuptools reads it at build time, and modules low in the
layers (the verifier's User-Agent) import it without importing the whole package."""

from __future__ import annotations

__version__ = "0.1.0.dev0"
