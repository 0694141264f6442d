"""Packaging: one pyproject.toml, a wheel with its templates, a complete sdist, a clean twine check.

The build test runs ``python -m build`` (in its isolated environment, as CI and
a release do) once for the module and reads both archives.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import flask_indexnow

from .pyproject_file import pyproject

ROOT = Path(__file__).resolve().parents[1]


def test_everything_is_in_pyproject() -> None:
    assert not (ROOT / "pytest.ini").exists() and not (ROOT / "setup.py").exists()
    setup_cfg = ROOT / "setup.cfg"  # an unpacked sdist has the one setuptools writes: [egg_info] only
    assert not setup_cfg.exists() or setup_cfg.read_text().split() == ["[egg_info]", "tag_build", "=", "tag_date", "=", "0"]
    project = pyproject()["project"]
    assert project["dynamic"] == ["version"] and "version" not in project
    assert pyproject()["build-system"]["requires"] == ["setuptools>=77"]


def test_no_flask_commands_entry_point() -> None:
    """``init_app`` adds ``flask indexnow`` to the apps that use the extension; an entry
    point would add it to every Flask app of the environment, where it fails."""
    project = pyproject()["project"]
    assert "flask.commands" not in project.get("entry-points", {})
    assert "scripts" not in project and "gui-scripts" not in project


def test_dependencies_have_lower_bounds_only() -> None:
    project = pyproject()["project"]
    specs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        specs.extend(extra)
    for spec in specs:
        requirement = spec.split(";")[0]
        assert not re.search(r"[<~!]|==", requirement), spec


def test_the_test_extra_is_not_a_developer_toolbox() -> None:
    test = " ".join(pyproject()["project"]["optional-dependencies"]["test"]).lower()
    for tool in ("mypy", "types-", "ruff", "sphinx", "build", "twine", "tox"):
        assert tool not in test, tool
    dev = (ROOT / "requirements" / "dev.txt").read_text().lower()
    for tool in ("mypy", "types-requests", "ruff", "build", "twine"):
        assert tool in dev, tool


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    pytest.importorskip("build")
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    yield out


@pytest.mark.slow
def test_the_wheel_ships_the_package_data_and_nothing_else(dist: Path) -> None:
    (wheel,) = dist.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for needed in ("flask_indexnow/py.typed", "flask_indexnow/templates/indexnow/status.html",
                   "flask_indexnow/templates/indexnow/message.html", "flask_indexnow/static/indexnow/status.css"):
        assert needed in names, needed
    assert all(n.startswith(("flask_indexnow/", "flask_indexnow-")) for n in names), names
    info = next(n for n in names if n.endswith(".dist-info/METADATA"))
    metadata = zipfile.ZipFile(wheel).read(info).decode()
    assert f"\nVersion: {flask_indexnow.__version__}\n" in metadata
    assert "Classifier: Framework :: Flask" in metadata and "License-Expression: MIT" in metadata
    # One entry point: the pytest plugin for site owners; no `flask.commands` (init_app adds the group).
    entry_points = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "[pytest11]" in entry_points and "flask.commands" not in entry_points


@pytest.mark.slow
def test_the_sdist_ships_the_whole_test_suite(dist: Path) -> None:
    (sdist,) = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    tracked = subprocess.run(["git", "ls-files", "tests", "demo"], cwd=ROOT, capture_output=True, text=True)
    if tracked.returncode != 0:
        pytest.skip("not a git checkout")
    wanted = {name for name in tracked.stdout.splitlines() if not name.endswith((".pyc", ".sqlite", ".db"))}
    assert wanted and wanted <= names, sorted(wanted - names)
    assert {"pyproject.toml", "README.md", "LICENSE", "SECURITY.md", "tests/conftest.py"} <= names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


@pytest.mark.slow
def test_twine_check_passes(dist: Path) -> None:
    pytest.importorskip("twine")
    done = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, dist.iterdir())],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
