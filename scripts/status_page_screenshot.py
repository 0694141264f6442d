"""Make docs/status-page.png: the status page of a realistic demo site, in headless Chromium.

    .venv/bin/python scripts/status_page_screenshot.py [OUTPUT.png] [--width 1280]

The demo lives in a temporary SQLite database: three hosts (one verified, one
pending, one whose key was rejected), three days of deliveries, a few failed
rows, schedules and jobs. Nothing is sent anywhere: the page is only looked at.
Needs Chromium and chromedriver (scripts/install_browser.sh) and selenium.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from flask import Flask
from flask_sqlalchemy import SQLAlchemy
from werkzeug.serving import make_server

from flask_indexnow import IndexNow
from flask_indexnow.models import url_hash

ROOT = Path(__file__).resolve().parents[1]
HOSTS = {"www.example.com": 200, "blog.example.com": 202, "shop.example.net": 403}
PAGES = ["/", "/about", "/pricing", "/blog/launch-notes", "/blog/why-indexnow", "/docs/getting-started",
         "/docs/configuration", "/products/red-kettle", "/products/blue-kettle", "/careers", "/contact"]


def demo_app(database: str) -> Flask:
    app = Flask("demo")
    app.config.update(
        SECRET_KEY="demo", SQLALCHEMY_DATABASE_URI=f"sqlite:///{database}", INDEXNOW_KEY="3f1c0d7e8a9b4c5d",
        INDEXNOW_QUEUE_ENABLED=False,  # the demo only shows; nothing is delivered
        INDEXNOW_ALLOWED_HOSTS=["www.example.com", "blog.example.com", "shop.example.net"],
    )
    db = SQLAlchemy(app)
    indexnow = IndexNow(app, db=db)
    indexnow.status_auth(lambda: True)
    with app.app_context():
        db.create_all()
        fill(app, datetime.now(timezone.utc).replace(microsecond=0))
    return app


def fill(app: Flask, now: datetime) -> None:
    rng = random.Random(7)
    models = app.extensions["indexnow"].models
    history: list[dict[str, Any]] = []
    for hours_ago in range(71, -1, -1):
        hour = now - timedelta(hours=hours_ago)
        busy = 3 + int(9 * max(0.0, 1 - abs(hour.hour - 14) / 8))  # a working-day curve
        for _ in range(rng.randint(busy // 2, busy)):
            host = rng.choice(["www.example.com"] * 3 + ["blog.example.com"])
            status, http = ("success", 200 if host == "www.example.com" else 202)
            roll = rng.random()
            if roll < 0.06:
                status, http = "retry", rng.choice([429, 503])
            elif roll < 0.08:
                status, http = "failed", 422
            history.append(_history(host, rng.choice(PAGES), status, http,
                                    hour - timedelta(minutes=rng.randint(0, 59))))
    history.append(_history("shop.example.net", "/products/red-kettle", "success", 200, now - timedelta(hours=30)))
    history.append(_history("shop.example.net", "/products/blue-kettle", "failed", 403, now - timedelta(minutes=42),
                            error='HTTP 403: {"code":"UserForbiddedToAccessSite","message":"Key not valid"}'))
    history.append(_history("www.example.com", "/pricing", "success", 200, now - timedelta(minutes=3)))
    history.sort(key=lambda row: row["created_at"])
    queue = [
        _queue("www.example.com", "/blog/launch-notes", "pending", now - timedelta(seconds=40)),
        _queue("www.example.com", "/docs/configuration", "pending", now - timedelta(seconds=95)),
        _queue("blog.example.com", "/2024/05/spring-sale", "pending", now + timedelta(hours=9)),
        _queue("shop.example.net", "/products/blue-kettle", "failed", now - timedelta(minutes=42), attempts=1,
               http=403, error='HTTP 403: {"code":"UserForbiddedToAccessSite","message":"Key not valid"}'),
        _queue("www.example.com", "/old-campaign?utm_source=<newsletter>", "failed", now - timedelta(hours=5),
               attempts=1, http=422, error="HTTP 422: URL does not belong to the host or the key does not match"),
    ]
    schedules = [
        {"handler": "indexnow.process_queue", "queue": "default", "kind": "interval", "expression": "1 minute",
         "timezone": "UTC", "overlap": "skip", "next_run": now + timedelta(seconds=35),
         "last_run": now - timedelta(seconds=25), "enabled": True, "created_at": now - timedelta(days=20)},
        {"handler": "indexnow.prune_history", "queue": "maintenance", "kind": "interval", "expression": "1 day",
         "timezone": "UTC", "overlap": "skip", "next_run": now + timedelta(hours=7),
         "last_run": now - timedelta(hours=17), "enabled": True, "created_at": now - timedelta(days=20)},
        {"handler": "daily_report", "queue": "reports", "kind": "cron", "expression": "0 3 * * *",
         "timezone": "Europe/Berlin", "overlap": "allow", "next_run": now + timedelta(hours=15),
         "last_run": now - timedelta(hours=9), "enabled": True, "created_at": now - timedelta(days=9)},
    ]
    jobs = [
        _job("indexnow.prune_history", "maintenance", "completed", now - timedelta(hours=17)),
        _job("daily_report", "reports", "failed", now - timedelta(hours=9), attempts=3,
             error="SMTPServerDisconnected: Connection unexpectedly closed"),
        _job("indexnow.process_queue", "default", "completed", now - timedelta(minutes=1)),
        _job("indexnow.process_queue", "default", "completed", now - timedelta(seconds=25)),
    ]
    engine = app.extensions["indexnow"].engine()
    with engine.begin() as connection:
        connection.execute(sa.insert(models.History.__table__), history)
        connection.execute(sa.insert(models.Queue.__table__), queue)
        connection.execute(sa.insert(models.Schedule.__table__), schedules)
        for job in jobs:
            connection.execute(sa.insert(models.Job.__table__), job)


def _history(host: str, path: str, status: str, http: int, when: datetime, error: str | None = None) -> dict[str, Any]:
    if error is None and status != "success":
        error = {429: "HTTP 429: Too Many Requests", 503: "HTTP 503: Service Unavailable",
                 422: "HTTP 422: URL does not belong to the host"}.get(http)
    return {"host": host, "url": f"https://{host}{path}", "action": "update", "status": status,
            "http_status": http, "error": error, "attempts": 1, "created_at": when}


def _queue(host: str, path: str, status: str, when: datetime, attempts: int = 0, http: int | None = None,
           error: str | None = None) -> dict[str, Any]:
    url = f"https://{host}{path}"
    return {"host": host, "url": url, "url_hash": url_hash(url), "action": "update", "status": status,
            "attempts": attempts, "available_at": when, "last_error": error, "last_http_status": http,
            "created_at": min(when, when - timedelta(seconds=1)), "updated_at": when}


def _job(handler: str, queue: str, status: str, when: datetime, attempts: int = 1,
         error: str | None = None) -> dict[str, Any]:
    return {"handler": handler, "queue": queue, "status": status, "attempts": attempts, "max_attempts": 3,
            "available_at": when, "claimed_at": when, "last_error": error, "created_at": when,
            "finished_at": when + timedelta(seconds=2)}


def screenshot(url: str, output: Path, width: int) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="indexnow-shot-")
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-quic", "--no-first-run", "--disable-component-update", "--disable-sync",
                 "--hide-scrollbars", "--force-color-profile=srgb", f"--user-data-dir={profile}",
                 f"--window-size={width},900"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)
    try:
        driver.get(url)
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(width, int(height) + 100)
        driver.get(url)
        output.parent.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(output))
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", nargs="?", default=str(ROOT / "docs" / "status-page.png"))
    parser.add_argument("--width", type=int, default=1280)
    args = parser.parse_args(argv)
    folder = tempfile.mkdtemp(prefix="indexnow-demo-")
    try:
        app = demo_app(str(Path(folder) / "demo.db"))
        server = make_server("127.0.0.1", 0, app, threaded=True)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            screenshot(f"http://127.0.0.1:{server.server_port}/indexnow/?per_page=10", Path(args.output), args.width)
        finally:
            server.shutdown()
            server.server_close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
