#!/usr/bin/env python3
"""Set everything up and run the demo or the test suite, on a fresh clone with only Python 3.

    python3 dev.py demo    # venv + install + demo site on http://127.0.0.1:5000
    python3 dev.py test    # venv + install + services + mypy + the whole test suite
    python3 dev.py bench   # venv + install + services + the benchmark table (python -m benchmarks)

Everything lives in ./.venv; running again reuses it. Extra arguments after
``test`` go to pytest (``python3 dev.py test -k tick``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")


def run(*args: str | os.PathLike[str], check: bool = True, **kwargs: object) -> int:
    print("+", " ".join(str(a) for a in args), flush=True)
    return subprocess.run([str(a) for a in args], check=check, cwd=ROOT, **kwargs).returncode  # type: ignore[call-overload,no-any-return]


def ensure_venv(extras: str) -> None:
    """Create .venv and install the package (editable) with ``extras``; quiet when up to date."""
    if not PYTHON.exists():
        venv.EnvBuilder(with_pip=True, upgrade_deps=False).create(VENV)
    stamp = VENV / f".installed-{extras or 'base'}"
    setup_changed = max((ROOT / "setup.cfg").stat().st_mtime, (ROOT / "pyproject.toml").stat().st_mtime)
    if stamp.exists() and stamp.stat().st_mtime >= setup_changed:
        return
    run(PYTHON, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    target = f".[{extras}]" if extras else "."
    run(PYTHON, "-m", "pip", "install", "--quiet", "-e", target)
    stamp.touch()


def start_services() -> None:
    """Start the local services the tests use, where this machine has them and they are down."""
    if (ROOT / "scripts" / "services.sh").exists():
        run("bash", ROOT / "scripts" / "services.sh", check=False)


def demo(args: list[str]) -> int:
    ensure_venv("")
    env = dict(os.environ, FLASK_APP="demo.app:create_app()")
    port = os.environ.get("FLASK_RUN_PORT", "5000")
    print(f"\n  Demo: http://127.0.0.1:{port}/  (status page password: demo)\n", flush=True)
    return run(BIN / "flask", "run", "--port", port, *args, check=False, env=env)


def test(args: list[str]) -> int:
    ensure_venv("test")
    start_services()
    if shutil.which("bash") and (ROOT / "scripts" / "install_browser.sh").exists():
        run("bash", ROOT / "scripts" / "install_browser.sh", check=False)
    status = run(BIN / "mypy", check=False)
    code = run(PYTHON, "-m", "pytest", *args, check=False)
    if code == 5:  # pytest ran no test: that is a failure, not a pass
        print("pytest collected no tests", file=sys.stderr)
        return 1
    return code or status


def bench(args: list[str]) -> int:
    ensure_venv("test")  # the database drivers
    start_services()
    return run(PYTHON, "-m", "benchmarks", *args, check=False)


def main() -> int:
    commands = {"demo": demo, "test": test, "bench": bench}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        print(__doc__)
        return 2
    return commands[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
