"""pyproject.toml as data, on every Python the suite runs on (tomllib is 3.11+; tomli before)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # the minimum-versions pass runs on the oldest Python; the test extra brings tomli there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())
