"""Headless Chromium, a live server and a foreign page for the browser tests.

Chromium and chromedriver come from Debian (``scripts/install_browser.sh``);
Selenium is pointed at both explicitly, so Selenium Manager never runs and
nothing is downloaded. A missing browser skips the tests, except under
``CI=true``, where it fails them.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from ..conftest import unavailable
from ..server_thread import QuietHTTPServer, ServerThread

CHROMIUM = os.environ.get("INDEXNOW_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("INDEXNOW_TEST_CHROMEDRIVER", "/usr/bin/chromedriver")
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
FLAGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
    "--disable-background-networking", "--disable-quic", "--no-first-run", "--disable-component-update",
    "--disable-sync", "--disable-default-apps", "--disable-extensions", "--no-default-browser-check",
    "--disable-features=Translate,OptimizationHints,MediaRouter", "--hide-scrollbars",
]


def require_browser() -> None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        unavailable("selenium", "pip install selenium (the test extra)")
    for path in (CHROMIUM, CHROMEDRIVER):
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            unavailable("Chromium", f"{path} is missing: run scripts/install_browser.sh")


@contextmanager
def chromium(width: int = 1280, height: int = 900) -> Iterator[Any]:
    """A fresh headless Chromium (own profile directory) driven by Selenium."""
    require_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="indexnow-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        driver.set_page_load_timeout(30)
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


class StaticPage(ServerThread):
    """Serves one HTML page from another origin (another port): the attacker's site."""

    def __init__(self, html: str) -> None:
        body = html.encode("utf-8")
        self.requests = 0
        page = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                page.requests += 1
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        super().__init__(QuietHTTPServer(("127.0.0.1", 0), Handler))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"
