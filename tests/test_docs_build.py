"""The documentation site builds with warnings as errors, its doctests pass, and its words hold.

Sphinx is a development requirement: without it the build tests are skipped,
except under ``CI=true``, where a missing Sphinx fails them.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import dev
from flask_indexnow.config import DEFAULTS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
DOC_TOOLS = ("sphinx", "myst_parser", "furo", "sphinx_click")


def require_sphinx() -> None:
    missing = [name for name in DOC_TOOLS if importlib.util.find_spec(name) is None]
    if not missing:
        return
    message = f"documentation tools not installed: {', '.join(missing)}"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message + " (they are development requirements)")
    pytest.skip(message)


def sphinx(builder: str, out: Path, doctrees: Path, *, fresh: bool) -> subprocess.CompletedProcess[str]:
    """Build as ``python3 dev.py docs`` does (its very arguments), quietly, with ``doctrees`` shared."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    again = ["-E"] if fresh else []  # -E: read every page again, whatever ``doctrees`` holds
    result = subprocess.run(
        [sys.executable, *dev.sphinx_command(builder, out, "-q", *again, "-d", str(doctrees))],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result


@pytest.fixture(scope="module")
def doctrees(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One read of the sources for both builds: the HTML build reads every page (-E) into here,
    the doctest build reuses what it read (the sources cannot change in between)."""
    return tmp_path_factory.mktemp("doctrees")


@pytest.fixture(scope="module")
def html(doctrees: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_sphinx()
    out = tmp_path_factory.mktemp("html")
    sphinx("html", out, doctrees, fresh=True)
    return out


@pytest.mark.slow  # a Sphinx build: seconds, not the fast tier
def test_the_site_builds_with_warnings_as_errors(html: Path) -> None:
    configuration = (html / "configuration.html").read_text(encoding="utf-8")
    for key in DEFAULTS:  # the generated table has every key
        assert f'id="{key.lower().replace("_", "-")}"' in configuration, key
    cli = (html / "cli.html").read_text(encoding="utf-8")
    assert 'id="cmdoption-flask-indexnow-status-json"' in cli  # sphinx-click read the group
    api = (html / "api.html").read_text(encoding="utf-8")
    assert "process_queue" in api and "InvalidURLError" in api  # autodoc read the docstrings
    assert (html / "changelog.html").read_text(encoding="utf-8").count("0.1.0") >= 1


@pytest.mark.slow  # a Sphinx build (on the pages the HTML build read)
def test_the_doctests_pass(html: Path, doctrees: Path, tmp_path: Path) -> None:
    sphinx("doctest", tmp_path / "doctest", doctrees, fresh=False)
    output = (tmp_path / "doctest" / "output.txt").read_text(encoding="utf-8")
    assert re.search(r"\b0 failures in tests", output) and not re.search(r"\b0 tests\b", output)


def published_text() -> dict[Path, str]:
    """README, the docs pages, and the package's sources and templates (docstrings are published)."""
    files = [ROOT / "README.md", *DOCS.glob("*.md"), *(ROOT / "flask_indexnow").rglob("*.py"),
             *(ROOT / "flask_indexnow" / "templates").rglob("*.html")]
    return {path: path.read_text(encoding="utf-8") for path in files}


def test_no_spec_section_numbers_are_published() -> None:
    found = [str(path.relative_to(ROOT)) for path, text in published_text().items() if re.search(r"SPEC\s*§", text)]
    assert found == []


def test_delivery_is_never_promised_exactly_once() -> None:
    wrong = re.compile(r"exactly[- ]once delivery|delivery exactly[- ]once|never sent twice|"
                       r"keeps delivery exactly|without sending a URL twice", re.I)
    found = [str(path.relative_to(ROOT)) for path, text in published_text().items() if wrong.search(text)]
    assert found == []
    assert "at-least-once" in (ROOT / "README.md").read_text(encoding="utf-8").lower()
