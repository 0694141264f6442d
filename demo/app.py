"""A small site whose pages are a watched SQLAlchemy model: the whole flow in a browser.

Edit a page → the change is queued in the same transaction → after the
response a tick delivers it → the local sandbox receiver (never a real search
engine) shows what arrived, and the status page shows the queue and history.

Run it with ``python3 dev.py demo`` (or ``flask --app 'demo.app:create_app()' run``).
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import sqlalchemy as sa
from flask import Flask, abort, flash, redirect, render_template, request, session, url_for
from flask_caching import Cache
from flask_sqlalchemy import SQLAlchemy
from werkzeug.security import check_password_hash, generate_password_hash

from flask_indexnow import IndexNow

from .sandbox import recorder, sandbox

db = SQLAlchemy()
cache = Cache()
indexnow = IndexNow()

#: The public address the pages are submitted under. The demo serves them on
#: localhost, which IndexNow would refuse; a public-looking host shows the real
#: URLs while the sandbox endpoint makes sure nothing leaves this machine.
SITE_URL = os.environ.get("DEMO_SITE_URL", "https://demo.example.com")


class Page(db.Model):  # type: ignore[name-defined,misc]
    __tablename__ = "demo_pages"
    id = sa.Column(sa.Integer, primary_key=True)
    title = sa.Column(sa.String(200), nullable=False)
    slug = sa.Column(sa.String(200), nullable=False, unique=True)
    body = sa.Column(sa.Text, nullable=False, default="")
    published = sa.Column(sa.Boolean, nullable=False, default=True)
    publish_at = sa.Column(sa.DateTime, nullable=True)

    @property
    def public_url(self) -> str:
        return f"{SITE_URL}/pages/{self.slug}"


def is_local_path(target: str) -> bool:
    """True for a path on this site only, the one place a login may send the browser back to.

    Browsers drop tabs and newlines inside a URL and read "\\" as "/", so
    "//host", "/\\host" and "/<tab>/host" all lead to another site: a target
    with any control character, space or backslash is refused outright.
    """
    if not target.startswith("/") or target.startswith("//"):
        return False
    if any(ord(char) <= 0x20 or char in "\\\x7f" for char in target):
        return False
    parts = urlsplit(target)
    return not parts.scheme and not parts.netloc


def create_app(config: dict[str, Any] | None = None) -> Flask:
    app = Flask(__name__, instance_relative_config=True)
    os.makedirs(app.instance_path, exist_ok=True)
    app.config.update(
        SECRET_KEY=os.environ.get("DEMO_SECRET_KEY", "demo-only-secret-change-me"),
        SQLALCHEMY_DATABASE_URI=f"sqlite:///{os.path.join(app.instance_path, 'demo.sqlite')}",
        CACHE_TYPE="SimpleCache",
        INDEXNOW_KEY="d3m0k3y0f1ndexn0w",
        # The sandbox recorder on 127.0.0.1 (demo/sandbox.py): nothing goes to a real engine.
        INDEXNOW_ENDPOINT=recorder().url,
        INDEXNOW_ALLOW_PRIVATE_ENDPOINT=True,
        # The allow-list is closed by default; the demo's pages live on SITE_URL's host only.
        INDEXNOW_ALLOWED_HOSTS=[urlsplit(SITE_URL).hostname],
        DEMO_PASSWORD_HASH=generate_password_hash(os.environ.get("DEMO_PASSWORD", "demo")),
    )
    app.config.update(config or {})
    db.init_app(app)
    cache.init_app(app)
    indexnow.init_app(app, db=db, cache=cache)
    app.register_blueprint(sandbox)
    register_views(app)
    with app.app_context():
        db.create_all()
    return app


indexnow.watch(
    Page,
    url=lambda page: page.public_url,
    published=lambda page: page.published,
    published_at=lambda page: page.publish_at,
    fingerprint=lambda page: (page.title, page.body),
    related=lambda page: [f"{SITE_URL}/"],
)


@indexnow.status_auth
def may_see_status() -> bool:
    """The demo's "simple auth": log in at /login with the demo password."""
    return bool(session.get("admin"))


def register_views(app: Flask) -> None:
    @app.get("/")
    def home() -> str:
        pages = db.session.scalars(sa.select(Page).where(Page.published.is_(True)).order_by(Page.title)).all()
        return render_template("home.html", pages=pages)

    @app.get("/pages/<slug>")
    def show(slug: str) -> str:
        page = db.session.scalar(sa.select(Page).where(Page.slug == slug, Page.published.is_(True)))
        if page is None:
            abort(404)
        return render_template("page.html", page=page)

    @app.route("/login", methods=["GET", "POST"])
    def login() -> Any:
        if request.method == "POST":
            if check_password_hash(app.config["DEMO_PASSWORD_HASH"], request.form.get("password", "")):
                session["admin"] = True
                target = request.args.get("next", "")
                return redirect(target if is_local_path(target) else url_for("admin"))
            flash("Wrong password.")
        return render_template("login.html")

    @app.post("/logout")
    def logout() -> Any:
        session.clear()
        return redirect(url_for("home"))

    @app.errorhandler(403)
    def forbidden(error: Any) -> Any:
        """The status page refuses strangers; in the demo, send them to the login form."""
        if request.path.startswith("/indexnow") and not session.get("admin"):
            return redirect(url_for("login", next=request.path))
        return error

    @app.get("/admin")
    def admin() -> Any:
        if not session.get("admin"):
            return redirect(url_for("login", next=request.path))
        pages = db.session.scalars(sa.select(Page).order_by(Page.id)).all()
        return render_template("admin.html", pages=pages)

    @app.route("/admin/new", methods=["GET", "POST"], defaults={"page_id": None})
    @app.route("/admin/<int:page_id>", methods=["GET", "POST"])
    def edit(page_id: int | None) -> Any:
        if not session.get("admin"):
            return redirect(url_for("login", next=request.path))
        page = db.session.get(Page, page_id) if page_id else Page(title="", slug="", body="", published=True)
        if page is None:
            abort(404)
        error = None
        if request.method == "POST":
            error = _apply_form(page)
            if error is None:
                db.session.add(page)
                db.session.commit()  # the queue rows commit in this same transaction
                flash(f"Saved “{page.title}”. The change is queued; see the sandbox for what arrives.")
                return redirect(url_for("admin"))
            db.session.rollback()
        return render_template("edit.html", page=page, error=error)

    @app.post("/admin/<int:page_id>/delete")
    def delete(page_id: int) -> Any:
        if not session.get("admin"):
            abort(403)
        page = db.session.get(Page, page_id)
        if page is not None:
            db.session.delete(page)
            db.session.commit()
            flash(f"Deleted “{page.title}”: a delete notification is queued.")
        return redirect(url_for("admin"))


def _apply_form(page: Page) -> str | None:
    title = request.form.get("title", "").strip()
    slug = request.form.get("slug", "").strip().lower()
    if not title or not slug or not all(c.isalnum() or c == "-" for c in slug):
        return "A title and a slug of letters, digits and '-' are needed."
    clash = db.session.scalar(sa.select(Page).where(Page.slug == slug, Page.id != (page.id or -1)))
    if clash is not None:
        return f"Another page already uses the slug {slug!r}."
    publish_at = request.form.get("publish_at", "").strip()
    try:
        when = datetime.fromisoformat(publish_at).replace(tzinfo=None) if publish_at else None
    except ValueError:
        return "Publish time must look like 2026-12-24T09:00 (UTC)."
    page.title, page.slug, page.body = title, slug, request.form.get("body", "")
    page.published = request.form.get("published") == "on"
    page.publish_at = when
    return None

