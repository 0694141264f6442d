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


def test_the_minimum_versions_pass_takes_a_python_that_runs() -> None:
    """The oldest supported Python when one is here (a pyenv shim that cannot run is passed over), else this one."""
    import subprocess
    import sys

    python = dev.oldest_python()
    version = subprocess.run([python, "-c", "import sys; print(tuple(sys.version_info[:2]))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    assert version in (str(dev.OLDEST_PYTHON), str(tuple(sys.version_info[:2])))
    if python != sys.executable:
        assert version == str(dev.OLDEST_PYTHON)

