"""dev.py reuses .venv: an install of more extras covers a command that needs fewer."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import dev


@pytest.fixture
def venv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(dev, "VENV", tmp_path)
    return tmp_path


def stamp(venv: Path, name: str, age: float = 0) -> None:
    path = venv / f".installed-{name}"
    path.touch()
    newest = max((dev.ROOT / "pyproject.toml").stat().st_mtime, dev.DEV_REQUIREMENTS.stat().st_mtime)
    os.utime(path, (newest + 1 - age, newest + 1 - age))


def test_the_test_set_up_covers_the_demo_and_the_docs(venv: Path) -> None:
    assert not dev._installed("docs", dev=False)
    stamp(venv, "test,docs-dev")
    assert dev._installed("", dev=False)
    assert dev._installed("docs", dev=False)
    assert dev._installed("test,docs", dev=True)


def test_fewer_extras_or_no_dev_tools_do_not_cover_more(venv: Path) -> None:
    stamp(venv, "base")
    stamp(venv, "docs")
    assert dev._installed("", dev=False)
    assert not dev._installed("test", dev=False)
    assert not dev._installed("docs", dev=True)


def test_an_install_older_than_pyproject_covers_nothing(venv: Path) -> None:
    stamp(venv, "test,docs-dev", age=3600)
    assert not dev._installed("docs", dev=False)
