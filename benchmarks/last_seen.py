"""Figure 8: a request that writes ``User.last_seen`` on a model watched with ``fields=``.

Real apps write a watched row on every logged-in request (``last_seen``, a
view counter). With ``watch(User, fields=("name", "bio"))`` such a flush must
cost nothing: no savepoint, no lookup, no write. Three in-process apps run
side by side (Flask's test client, so no socket noise): the app with the
extension, the same app without it, and a second app without it, whose ratio
to the first shows what two identical apps differ by in this run.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from flask import Flask
from flask_sqlalchemy import SQLAlchemy

from flask_indexnow import IndexNow

from .harness import Figure, backend_name, median, ms
from .site import KEY, new_prefix, register


def _app(database_url: str, *, extension: bool) -> Flask:
    prefix = new_prefix()
    app = Flask("bench_last_seen")
    app.config.update(
        SQLALCHEMY_DATABASE_URI=database_url,
        INDEXNOW_TABLE_PREFIX=prefix,
        INDEXNOW_KEY=KEY,
        INDEXNOW_ENDPOINT="http://127.0.0.1:9/indexnow",
        INDEXNOW_ALLOW_PRIVATE_ENDPOINT=True,
        INDEXNOW_ALLOWED_HOSTS=["www.example.com"],
    )
    db = SQLAlchemy()
    db.init_app(app)

    class User(db.Model):  # type: ignore[name-defined,misc]
        __tablename__ = f"{prefix}users"
        id = sa.Column(sa.Integer, primary_key=True)
        name = sa.Column(sa.String(100), nullable=False)
        bio = sa.Column(sa.Text, nullable=False, default="")
        last_seen = sa.Column(sa.Float, nullable=True)

    if extension:
        indexnow = IndexNow(app, db=db)
        indexnow.watch(User, url=lambda u: f"https://www.example.com/users/{u.name}", fields=("name", "bio"))

    @app.route("/profile/<int:user_id>")
    def profile(user_id: int) -> str:
        user = db.session.get(User, user_id)
        assert user is not None
        user.last_seen = time.time()  # what a login manager's before_request does
        db.session.commit()
        return f"<h1>{user.name}</h1>"

    with app.app_context():
        db.metadata.create_all(db.engine)
        register(db, list(db.metadata.sorted_tables), app)
        db.session.add(User(id=1, name="ada", bio="Analyst"))
        db.session.commit()  # queues the new user: cleared, so that the figure can check nothing more is
        if extension:
            db.session.execute(app.extensions["indexnow"].models.Queue.__table__.delete())
            db.session.commit()
        db.session.remove()
    return app


def last_seen(number: int, database_url: str, workdir: Path | None, rounds: int, requests_per_sample: int) -> Figure:
    backend = backend_name(database_url)

    def url(name: str) -> str:  # SQLite: a file per app, so no app waits for another's lock
        return f"sqlite:///{workdir / f'last_seen_{name}.db'}" if backend == "sqlite" and workdir else database_url

    apps = {"ext": _app(url("ext"), extension=True), "plain": _app(url("plain"), extension=False),
            "same": _app(url("same"), extension=False)}
    clients = {name: app.test_client() for name, app in apps.items()}

    def request(name: str) -> float:
        started = time.perf_counter()
        response = clients[name].get("/profile/1")
        elapsed = time.perf_counter() - started
        assert response.status_code == 200
        return elapsed

    names = list(apps)
    for name in names:
        for _ in range(requests_per_sample):
            request(name)  # warm up
    # Interleaved request by request (the order turning each time), and the median request of
    # each app: a commit's fsync stall on SQLite, or any other burst of the machine's, falls on
    # every app alike and moves no median, where blocks of requests took it whole.
    timings: dict[str, list[float]] = {name: [] for name in names}
    for turn in range(rounds * requests_per_sample):
        for offset in range(len(names)):
            name = names[(turn + offset) % len(names)]
            timings[name].append(request(name))
    ext, plain, same = (median(timings[name]) for name in ("ext", "plain", "same"))
    _check_nothing_queued(apps["ext"])
    ratio = ext / plain
    return Figure(
        number, f"request writing last_seen, watched with fields= ({backend})", ms(ext), ms(plain), ratio,
        "<= 1.03", ratio <= 1.03,
        f"last_seen: two identical apps without the extension differ by {same / plain:.3f} in this run; "
        f"{rounds * requests_per_sample} requests per app (Flask test client), interleaved one by one; medians.",
    )


def _check_nothing_queued(app: Flask) -> None:
    state: Any = app.extensions["indexnow"]
    with app.app_context(), state.db.engine.connect() as connection:
        count = connection.execute(sa.select(sa.func.count()).select_from(state.models.Queue.__table__)).scalar()
    assert count == 0, "a last_seen write queued the user: fields= did not hold"
