"""The pytest plugin as a site owner uses it: the worked example of the docs, run by pytest itself."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import flask_indexnow.testing.pytest_plugin as plugin

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = Path(__file__).parent / "example"
DOC = ROOT / "docs" / "testing.md"
#: name in the site's project → file here (named so this project's own run does not collect them)
SITE_FILES = {"blog.py": "blog.py", "conftest.py": "conftest_example.py", "test_articles.py": "articles_checks.py"}


#: This project's own test tools are no part of a site's project: Hypothesis's plugin alone took
#: half of each pytest start (importing Hypothesis), three times per run of this file.
NOT_THE_SITES = ["-p", "no:hypothesispytest"]


def _entry_point_installed() -> bool:
    return any(ep.name == "indexnow" for ep in entry_points(group="pytest11"))


def run_site_tests(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Lay out the example as a site's project and run pytest there, in its own process."""
    project = tmp_path / "site"
    project.mkdir()
    for target, source in SITE_FILES.items():
        (project / target).write_text((EXAMPLE / source).read_text())
    (project / "pytest.ini").write_text("[pytest]\nfilterwarnings =\n    error\n")
    # Installed, the plugin comes through its entry point; from a source tree, name it once with -p.
    plugin_args = [] if _entry_point_installed() else ["-p", "flask_indexnow.testing.pytest_plugin"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(project)])}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *NOT_THE_SITES, *plugin_args, *args],
        cwd=project, env=env, capture_output=True, text=True, timeout=300,
    )


@pytest.mark.slow  # a whole pytest run in a subprocess: not the fast tier
def test_the_worked_example_passes(tmp_path: Path) -> None:
    result = run_site_tests(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "6 passed" in result.stdout


@pytest.mark.slow  # two pytest runs in subprocesses
def test_the_plugin_does_nothing_for_a_test_that_does_not_ask(tmp_path: Path) -> None:
    """No autouse fixture, no hook: a test without the fixtures sets up nothing of ours."""
    assert [name for name in vars(plugin) if name.startswith("pytest_")] == []
    result = run_site_tests(tmp_path, "--setup-plan", "-k", "a_draft or publishing")
    assert result.returncode == 0, result.stdout + result.stderr
    plan = result.stdout
    assert "indexnow_endpoint" in plan  # used where asked ...
    project = tmp_path / "site"
    (project / "test_plain.py").write_text("def test_plain():\n    assert True\n")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *NOT_THE_SITES, "--setup-plan", "test_plain.py",
         *([] if _entry_point_installed() else ["-p", "flask_indexnow.testing.pytest_plugin"])],
        cwd=project, env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(project)])},
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "indexnow" not in result.stdout  # ... and nowhere else


def test_the_docs_show_the_example_as_tested() -> None:
    doc = DOC.read_text(encoding="utf-8")
    for source in SITE_FILES.values():
        assert (EXAMPLE / source).read_text().strip() in doc, f"{source} differs from its copy in {DOC}"


def test_the_entry_point_is_declared() -> None:
    """What pytest finds once the package is installed (setup.cfg or pyproject.toml)."""
    declared = [
        path for path in (ROOT / "setup.cfg", ROOT / "pyproject.toml")
        if path.exists() and "flask_indexnow.testing.pytest_plugin" in path.read_text()
    ]
    assert declared, "the pytest11 entry point 'indexnow' is declared nowhere"
