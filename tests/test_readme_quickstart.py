"""The README's quick start runs exactly as written and its page reaches an endpoint.

The Python block(s) under "## Quick start" are written to a file in a temp dir
and run in a fresh interpreter there (SQLite lands in its ``instance/``
folder). The quick start reads ``FLASK_*`` variables with Flask's
``from_prefixed_env()``, which is how the test points it at a local endpoint
instead of api.indexnow.org; the code itself runs unchanged.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from .endpoint_server import EndpointServer

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def quick_start_code() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```python\n(.*?)^```", section, re.S | re.M)
    assert blocks, "the README's quick start has no ```python block"
    return "\n".join(blocks)


def quick_start_output() -> str:
    """The output the README shows for ``python quickstart.py``."""
    section = README.read_text(encoding="utf-8").split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    [console] = re.findall(r"^```console\n\$ python quickstart.py\n(.*?)^```", section, re.S | re.M)
    return console.strip()


def run_quick_start(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "quickstart.py"
    script.write_text(quick_start_code(), encoding="utf-8")
    environ = {k: v for k, v in os.environ.items() if not k.startswith("FLASK_")}
    environ.update(env, PYTHONPATH=str(ROOT) + os.pathsep + environ.get("PYTHONPATH", ""))
    result = subprocess.run([sys.executable, "-W", "error", str(script)], cwd=tmp_path, env=environ,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result


def test_the_quick_start_delivers_its_page(tmp_path: Path, endpoint: EndpointServer) -> None:
    result = run_quick_start(
        tmp_path,
        FLASK_INDEXNOW_ENDPOINT=endpoint.url,
        FLASK_INDEXNOW_ALLOW_PRIVATE_ENDPOINT="true",
        FLASK_INDEXNOW_DRY_RUN="false",
    )
    assert endpoint.urls_received() == ["https://example.com/hello"]
    [request] = endpoint.received
    assert request.json["host"] == "example.com" and request.json["key"] == "3f1c0d7e8a9b4c5d"
    assert "succeeded 1" in result.stdout
    assert (tmp_path / "instance" / "site.db").exists()


def test_as_written_it_sends_nothing_and_prints_what_the_readme_shows(tmp_path: Path,
                                                                     endpoint: EndpointServer) -> None:
    # Only the endpoint is overridden, so a broken dry run would show up here, not on the internet.
    result = run_quick_start(tmp_path, FLASK_INDEXNOW_ENDPOINT=endpoint.url,
                             FLASK_INDEXNOW_ALLOW_PRIVATE_ENDPOINT="true")
    assert endpoint.received == []
    assert result.stdout.strip() == quick_start_output()


def test_it_can_be_run_twice(tmp_path: Path, endpoint: EndpointServer) -> None:
    """The second run finds the page of the first (site.db stays): it edits it, and the edit is delivered."""
    env = {"FLASK_INDEXNOW_ENDPOINT": endpoint.url, "FLASK_INDEXNOW_ALLOW_PRIVATE_ENDPOINT": "true"}
    first = run_quick_start(tmp_path, **env)
    second = run_quick_start(tmp_path, **env)  # a UNIQUE constraint failure here before issue 19.5
    assert first.stdout.strip() == second.stdout.strip() == quick_start_output()
    third = run_quick_start(tmp_path, **env, FLASK_INDEXNOW_DRY_RUN="false")
    assert "succeeded 1" in third.stdout
    assert endpoint.urls_received() == ["https://example.com/hello"]


def test_the_readme_stays_short_and_keeps_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    assert "python3 dev.py demo" in text and "python3 dev.py test" in text
    assert "INDEXNOW_ALLOWED_HOSTS" in quick_start_code() and "indexnow.watch(Page, url=" in quick_start_code()
    # PyPI renders the README away from the repository: images need absolute URLs.
    assert all(src.startswith("https://") for src in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text))


def test_the_readme_links_to_pages_that_exist() -> None:
    pages = re.findall(r"https://flask-indexnow\.readthedocs\.io/en/latest/([\w-]+)\.html",
                       README.read_text(encoding="utf-8"))
    assert len(pages) >= 10
    assert [p for p in pages if not (ROOT / "docs" / f"{p}.md").exists()] == []
