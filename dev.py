#!/usr/bin/env python3
"""Set everything up and run the demo or the test suite, on a fresh clone with only Python 3.

    python3 dev.py demo          # venv + install + demo site on http://127.0.0.1:5000
    python3 dev.py test          # venv + install + services + browser + ruff + deptry + mypy + the whole
                                 # suite, then the suite again in .venv-min (every dependency at its floor)
    python3 dev.py test --fast   # ruff + deptry + the pure tier (no database, no service, no browser)
    python3 dev.py test --no-browser   # everything but the browser tests (no Chromium installed)
    python3 dev.py test --no-min       # skip the minimum-versions pass (local runs only; CI always runs it)
    python3 dev.py test --min-only     # only the minimum-versions pass
    python3 dev.py bench         # venv + install + services + the benchmark table
    python3 dev.py docs          # venv + install + the documentation site in docs/_build/html

Everything lives in ./.venv; running again reuses it. Other arguments after
``test`` go to pytest (``python3 dev.py test -k tick``). Nothing is asked
interactively: what needs root is tried with ``sudo -n`` and skipped when it
cannot run. ``INDEXNOW_SKIP_BROWSER=1`` is the same as ``--no-browser``; both
are for local runs only: under ``CI=true`` the browser tests always run.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import venv
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
DEV_REQUIREMENTS = ROOT / "requirements" / "dev.txt"
#: Every runtime dependency pinned at its floor: the constraints of the minimum-versions pass.
MINIMUM = ROOT / "requirements" / "minimum.txt"
MIN_VENV = ROOT / ".venv-min"
MIN_BIN = MIN_VENV / ("Scripts" if os.name == "nt" else "bin")
MIN_PYTHON = MIN_BIN / ("python.exe" if os.name == "nt" else "python")
#: The oldest Python the package supports (requires-python): the minimum-versions pass runs on it when it is here.
OLDEST_PYTHON = (3, 10)
DOCS_HTML = ROOT / "docs" / "_build" / "html"
#: The pure tier: no database (SQLite included), no Redis, no browser, no long runs.
FAST_TIER = "not db and not slow"


def parallel(per_core: int = 2) -> list[str]:
    """pytest-xdist arguments: ``per_core`` workers per core (at least two, at most eight).

    Most of the suite waits on a database, a socket or a child process, not on
    the CPU: on a quiet 2-core machine the whole suite took 2 min 26 s with two
    workers, 1 min 41 s with four and 1 min 59 s with six (CPU-bound again).
    The fast tier waits on nothing: one worker per core.
    ``--dist loadfile`` keeps each test file on one worker: a module's costly
    fixture (one browser, one package build) is made once. (``loadgroup`` would be finer, but pytest-xdist 3.8 cannot regroup
    tests under pytest 9: its ``xdist_group`` marks are ignored there.) Files go
    in collection order (``--no-loadscope-reorder``), where tests/conftest.py puts
    the files with ``slow`` tests first: the long runs overlap the short ones.
    ``INDEXNOW_TEST_WORKERS`` overrides the count (0: no workers, one process);
    so does a ``-n`` among the arguments, which comes later and wins.
    """
    workers = os.environ.get("INDEXNOW_TEST_WORKERS") or str(min(max(per_core * (os.cpu_count() or 1), 2), 8))
    return ["-n", workers, "--dist", "loadfile", "--no-loadscope-reorder"]


def run(*args: str | os.PathLike[str], check: bool = True, **kwargs: object) -> int:
    print("+", " ".join(str(a) for a in args), flush=True)
    return subprocess.run([str(a) for a in args], check=check, cwd=ROOT, **kwargs).returncode  # type: ignore[call-overload,no-any-return]


def ensure_venv(extras: str, dev: bool = False) -> None:
    """Create .venv and install the package (editable) with ``extras`` (and the dev tools).

    Quiet when up to date: an install of these extras or more (the test set-up
    covers the demo and the docs) is newer than pyproject.toml and, for the
    dev tools, requirements/dev.txt.
    """
    if not PYTHON.exists():
        venv.EnvBuilder(with_pip=True, upgrade_deps=False).create(VENV)
    if _installed(extras, dev):
        return
    run(PYTHON, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    target = f".[{extras}]" if extras else "."
    # pip reads no dependency groups from pyproject.toml: the dev tools are a requirements file.
    dev_args = ["-r", str(DEV_REQUIREMENTS)] if dev else []
    run(PYTHON, "-m", "pip", "install", "--quiet", "-e", target, *dev_args)
    (VENV / f".installed-{extras or 'base'}{'-dev' if dev else ''}").touch()


def _installed(extras: str, dev: bool) -> bool:
    """True when a stamp in .venv covers ``extras`` (and the dev tools) and is newer than its sources."""
    wanted = set(filter(None, extras.split(",")))
    for stamp in VENV.glob(".installed-*"):
        name = stamp.name.removeprefix(".installed-")
        with_dev = name.endswith("-dev")
        have = set(name.removesuffix("-dev").split(",")) - {"base"}
        sources = [ROOT / "pyproject.toml"] + ([DEV_REQUIREMENTS] if with_dev else [])
        if wanted <= have and (with_dev or not dev) and \
                stamp.stat().st_mtime >= max(p.stat().st_mtime for p in sources):
            return True
    return False


def oldest_python() -> str:
    """The oldest supported Python found on this machine (``python3.10`` on PATH or under pyenv), else this one.

    The floors are the floors on the oldest Python too; where it is missing the
    pass still proves them on the Python that runs dev.py.
    """
    name = "python{}.{}".format(*OLDEST_PYTHON)
    candidates = [shutil.which(name)]
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates += sorted(str(p) for p in pyenv.glob("{}.{}.*/bin/{}".format(*OLDEST_PYTHON, name)))
    for candidate in filter(None, candidates):
        probe = subprocess.run([candidate, "-c", "import sys, venv; print(sys.version_info[:2])"],
                               capture_output=True, text=True)
        if probe.returncode == 0 and probe.stdout.strip() == str(OLDEST_PYTHON):  # a pyenv shim may not run
            return candidate
    return sys.executable


def ensure_min_venv() -> None:
    """Create .venv-min: the package with its test extra, every runtime dependency at its floor.

    ``pip install -c requirements/minimum.txt``: the constraints pin the runtime
    dependencies (and the extras' drivers); the test tools take their newest
    release that installs beside them. Quiet when the stamp is newer than
    pyproject.toml and the constraints.
    """
    stamp = MIN_VENV / ".installed-min"
    if stamp.exists() and stamp.stat().st_mtime >= max(p.stat().st_mtime for p in (ROOT / "pyproject.toml", MINIMUM)):
        return
    if not MIN_PYTHON.exists():
        run(oldest_python(), "-m", "venv", MIN_VENV)
    run(MIN_PYTHON, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    run(MIN_PYTHON, "-m", "pip", "install", "--quiet", "-c", MINIMUM, "-e", ".[test]", "pytest-xdist")
    run(MIN_PYTHON, "-m", "pip", "check")
    stamp.touch()


def min_versions_pass(args: list[str], env: dict[str, str]) -> int:
    """The suite again in .venv-min: proves the floors pyproject.toml declares are true."""
    print("dev.py test: the minimum-versions pass (.venv-min, requirements/minimum.txt).", flush=True)
    ensure_min_venv()
    run(MIN_PYTHON, "-c", "import sys; from importlib.metadata import version; print('minimum versions: Python', "
        "sys.version.split()[0], *(f'{n} {version(n)}' for n in ('flask', 'sqlalchemy', 'flask-sqlalchemy', "
        "'requests', 'urllib3')))", check=False)
    # The docs build proves the docs tools (development requirements, not runtime ones): once, in .venv, is enough.
    # INDEXNOW_MINIMUM_VERSIONS=1: tests/test_dependency_floors.py checks that the floors are what is installed.
    return _pytest_code(run(MIN_PYTHON, "-m", "pytest", *parallel(), "-p", "no:cacheprovider",
                            "--ignore", "tests/test_docs_build.py", *args, check=False,
                            env={**env, "INDEXNOW_MINIMUM_VERSIONS": "1"}))


def lint_step() -> int:
    """ruff, deptry and lint-imports, every one of them even when an earlier one fails; 0 when all pass."""
    codes = [run(BIN / "ruff", "check", ".", check=False), run(BIN / "deptry", "flask_indexnow", check=False),
             run(BIN / "lint-imports", "--no-cache", check=False)]
    return next((code for code in codes if code), 0)


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


def _flag(args: list[str], name: str) -> bool:
    if name in args:
        args.remove(name)
        return True
    return False


def test(args: list[str]) -> int:
    fast = _flag(args, "--fast")
    no_min = _flag(args, "--no-min")
    min_only = _flag(args, "--min-only")
    in_ci = os.environ.get("CI", "").lower() == "true"
    no_browser = _flag(args, "--no-browser") or os.environ.get("INDEXNOW_SKIP_BROWSER", "").lower() in ("1", "true", "yes")
    if in_ci:
        no_browser = False  # CI proves the browser tests, whatever the environment says
    ensure_venv("test,docs", dev=True)
    env = dict(os.environ)
    if fast:
        print(f"dev.py test --fast: ruff and the pure tier (-m '{FAST_TIER}'); no service, no browser.", flush=True)
        lint = lint_step()
        code = run(PYTHON, "-m", "pytest", "-m", FAST_TIER, *parallel(per_core=1), *args, check=False, env=env)
        return _pytest_code(code) or lint
    if no_browser:
        env["INDEXNOW_SKIP_BROWSER"] = "1"
        print("dev.py test: browser tests skipped (--no-browser / INDEXNOW_SKIP_BROWSER=1); nothing is "
              "installed system-wide.", flush=True)
    else:
        print("dev.py test: installs Debian's chromium and chromium-driver system-wide when they are missing "
              "(scripts/install_browser.sh: apt-get, as root or with `sudo -n`, never a password prompt). "
              "Use --no-browser to skip the browser tests instead.", flush=True)
    start_services()
    if not no_browser and shutil.which("bash") and (ROOT / "scripts" / "install_browser.sh").exists():
        run("bash", ROOT / "scripts" / "install_browser.sh", check=False, stdin=subprocess.DEVNULL)
    if min_only:
        return min_versions_pass(args, env)
    lint = lint_step()
    with beside(BIN / "mypy") as mypy:
        code = _pytest_code(run(PYTHON, "-m", "pytest", *parallel(), *args, check=False, env=env))
    if no_min and not in_ci:
        print("dev.py test: the minimum-versions pass skipped (--no-min).", flush=True)
        minimum = 0
    else:
        minimum = min_versions_pass(args, env)
    return code or minimum or lint or mypy.returncode


@contextlib.contextmanager
def beside(*args: str | os.PathLike[str]) -> Iterator[subprocess.Popen[str]]:
    """Run a command while the block runs; print its output after the block's.

    mypy on a clean clone (no cache: CI) keeps one core busy for some 20 s;
    beside pytest it uses the time the workers wait on databases, sockets and
    child processes, instead of adding its own to the run.
    """
    print("+", " ".join(str(a) for a in args), "(beside what follows; its report comes after)", flush=True)
    process = subprocess.Popen([str(a) for a in args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    try:
        yield process
    except BaseException:  # Ctrl-C or an error in the block: no report is awaited
        process.kill()
        raise
    finally:
        output, _ = process.communicate()
        print(f"+ {' '.join(str(a) for a in args)}:\n{output}", end="" if output.endswith("\n") else "\n",
              flush=True)


def _pytest_code(code: int) -> int:
    if code == 5:  # pytest ran no test: that is a failure, not a pass
        print("pytest collected no tests", file=sys.stderr)
        return 1
    return code


def bench(args: list[str]) -> int:
    ensure_venv("test")  # the database drivers
    start_services()
    return run(PYTHON, "-m", "benchmarks", *args, check=False)


def sphinx_command(builder: str, out: Path, *options: str) -> list[str]:
    """``python -m sphinx`` arguments for the docs site: warnings are errors, every one reported.

    tests/test_docs_build.py builds with the same arguments, so what it proves
    is what ``dev.py docs`` (and Read the Docs, with ``fail_on_warning``) runs.
    """
    return ["-m", "sphinx", "-W", "--keep-going", *options, "-b", builder, str(ROOT / "docs"), str(out)]


def docs(args: list[str]) -> int:
    ensure_venv("docs")
    code = run(PYTHON, *sphinx_command("html", DOCS_HTML, *args), check=False)
    if code == 0:
        print(f"\n  Docs: {(DOCS_HTML / 'index.html').as_uri()}\n", flush=True)
    return code


def main() -> int:
    commands = {"demo": demo, "test": test, "bench": bench, "docs": docs}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        print(__doc__)
        return 2
    return commands[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
