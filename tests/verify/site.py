"""A small real site for the verification tests: one view per row of the verdict table.

``add_site(app)`` registers the views on an app made by ``make_app``. What a
page answers can be changed while a test runs (``app.config["SITE_…"]``), and
every request the views see is recorded in ``app.config["SITE_SEEN"]``.
"""

from __future__ import annotations

from typing import Any

from flask import Flask, Response, abort, current_app, redirect, request

HOST = "www.example.com"
BASE = f"https://{HOST}"


def page(head: str = "", body: str = "<p>Hello</p>") -> str:
    return f"<!doctype html><html><head><title>A page</title>{head}</head><body>{body}</body></html>"


def add_site(app: Flask, *, robots: str | None = "User-agent: *\nDisallow: /private/\n") -> Flask:
    """The site's views; ``robots``: the robots.txt body (None: no robots.txt, a 404)."""
    app.config.setdefault("SITE_ROBOTS", robots)
    app.config.setdefault("SITE_FLIP_NOINDEX", False)
    app.config["SITE_SEEN"] = []

    @app.before_request
    def record() -> None:
        seen: list[dict[str, Any]] = current_app.config["SITE_SEEN"]
        seen.append({"path": request.path, "query": request.query_string.decode(), "host": request.host,
                     "scheme": request.scheme, "user_agent": request.headers.get("User-Agent"),
                     "verify": request.environ.get("indexnow.verify"), "cookies": dict(request.cookies)})

    @app.route("/robots.txt")
    def robots_txt() -> Any:
        text = current_app.config["SITE_ROBOTS"]
        if text is None:
            abort(404)
        return Response(text, mimetype="text/plain")

    @app.route("/ok")
    def ok() -> Any:
        response = Response(page('<meta name="description" content="fine">'))
        response.set_cookie("session", "visitor")  # a verification keeps no cookie
        return response

    @app.route("/googlebot-only")
    def googlebot_only() -> str:
        return page('<meta name="googlebot" content="noindex">')

    @app.route("/noindex-meta")
    def noindex_meta() -> str:
        return page('<meta name="robots" content="noindex, follow">')

    @app.route("/none-bingbot")
    def none_bingbot() -> str:
        return page('<META NAME="BingBot" CONTENT="none">')

    @app.route("/noindex-yandex")
    def noindex_yandex() -> str:
        return page('<meta name="yandex" content="noindex">')

    @app.route("/noindex-header")
    def noindex_header() -> Any:
        return Response(page(), headers={"X-Robots-Tag": "noindex"})

    @app.route("/header-other-bot")
    def header_other_bot() -> Any:
        return Response(page(), headers={"X-Robots-Tag": "googlebot: noindex"})

    @app.route("/canonical")
    def canonical() -> str:
        return page(f'<link rel="canonical" href="{BASE}/ok">')

    @app.route("/canonical-relative")
    def canonical_relative() -> str:
        return page('<link rel="canonical" href="/ok">')

    @app.route("/self")
    def self_canonical() -> str:
        return page(f'<link rel="canonical" href="{BASE}/self">')

    @app.route("/moved")
    def moved() -> Any:
        return redirect("/ok", code=301)

    @app.route("/gone")
    def gone() -> Any:
        abort(410)

    @app.route("/broken")
    def broken() -> Any:
        abort(503)

    @app.route("/raises")
    def raises() -> Any:
        raise RuntimeError("the template is missing")

    @app.route("/private/<name>")
    def private(name: str) -> str:
        return page()

    @app.route("/flips")
    def flips() -> str:
        noindex = current_app.config["SITE_FLIP_NOINDEX"]
        return page('<meta name="robots" content="noindex">' if noindex else "")

    @app.route("/search")
    def search() -> str:
        return page(f"<title>{request.args.get('q', '')}</title>")

    return app


def seen(app: Flask) -> list[dict[str, Any]]:
    return list(app.config["SITE_SEEN"])
