"""The declared floors are the tested ones (issue 19.1): requirements/minimum.txt pins each at its bound.

``dev.py test`` installs requirements/minimum.txt as constraints in .venv-min and runs the
suite there; these tests keep that file and pyproject.toml saying the same thing, and
prove that the pass really runs at the floors.
"""

from __future__ import annotations

import os
import re
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

import dev

from .pyproject_file import pyproject

ROOT = Path(__file__).resolve().parents[1]


def _name(spec: str) -> str:
    return re.split(r"[\s\[<>=;!~]", spec.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _lower_bounds() -> dict[str, str]:
    project = pyproject()["project"]
    extras = project["optional-dependencies"]
    specs = [*project["dependencies"], *extras["postgres"], *extras["mysql"], *extras["redis"]]
    bounds = {}
    for spec in specs:
        if ";" in spec:
            continue  # tzdata, on Windows only
        match = re.search(r">=\s*([\w.]+)", spec)
        assert match, f"{spec}: every runtime dependency has a lower bound"
        bounds[_name(spec)] = match[1]
    return bounds


def pins() -> dict[str, str]:
    found = {}
    for line in dev.MINIMUM.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, pinned = line.partition("==")
            found[_name(name)] = pinned.strip()
    return found


def _same(bound: str, pinned: str) -> bool:
    """``2.0`` and ``2.0.0`` name the same release."""
    def parts(text: str) -> list[int]:
        numbers = [int(p) for p in text.split(".")]
        return numbers + [0] * (3 - len(numbers))
    return parts(bound) == parts(pinned)


def test_every_runtime_dependency_is_pinned_at_its_floor() -> None:
    bounds, pinned = _lower_bounds(), pins()
    wrong = {name: (bound, pinned.get(name)) for name, bound in bounds.items()
             if name not in pinned or not _same(bound, pinned[name])}
    assert wrong == {}, "pyproject.toml's lower bound vs requirements/minimum.txt"
    # The file pins nothing else but the psycopg binary wheel that psycopg[binary] brings.
    assert set(pinned) - set(bounds) == {"psycopg-binary"}


@pytest.mark.skipif(os.environ.get("INDEXNOW_MINIMUM_VERSIONS") != "1",
                    reason="checks the minimum-versions pass itself (dev.py test sets INDEXNOW_MINIMUM_VERSIONS=1)")
def test_the_minimum_versions_pass_runs_at_the_floors() -> None:
    installed: dict[str, str | None] = {}
    for name in pins():
        try:
            installed[name] = version(name)
        except PackageNotFoundError:
            installed[name] = None
    assert {n: v for n, v in installed.items() if v is None or not _same(pins()[n], v)} == {}
