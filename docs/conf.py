"""Sphinx configuration of the Flask-IndexNow documentation (MyST Markdown, furo)."""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))  # the package from this checkout, not an installed copy
sys.path.insert(0, str(DOCS / "_ext"))

import flask_indexnow  # noqa: E402

project = "Flask-IndexNow"
author = "Flask-IndexNow contributors"
copyright = "Flask-IndexNow contributors"
release = flask_indexnow.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "sphinx_click",
    "indexnow_config",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": False}

html_theme = "furo"
html_title = f"Flask-IndexNow {release}"
html_static_path: list[str] = []


def _escape_stars(app: object, ctx: object, lines: list[str]) -> None:
    """Click help texts are plain text: a cron example's ``* * *`` is not RST emphasis."""
    lines[:] = [line.replace("*", r"\*") for line in lines]


def setup(app: object) -> None:
    app.connect("sphinx-click-process-options", _escape_stars)  # type: ignore[attr-defined]
