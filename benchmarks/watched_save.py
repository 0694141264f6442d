"""Figure 13: what a watched save costs, the same save without the extension as the floor (issue 18).

A content change of a watched model writes the model's UPDATE and the
extension's event in one transaction. Since issue 18 the event is an INSERT
into the inbox (no pass ever locks it) instead of an upsert of the queue row a
pass may hold. Two sites run side by side in one run, each on its own table
prefix: the watched one and the same one without the extension.
"""

from __future__ import annotations

import functools
import time

import sqlalchemy as sa

from .harness import Figure, backend_name, interleave, median, ms
from .web import _article_site


def watched_save(number: int, database_url: str, rounds: int, saves_per_sample: int) -> Figure:
    sites = {name: _article_site(database_url, "http://127.0.0.1:9/indexnow", watched=name == "watched")
             for name in ("watched", "plain")}

    def sample(name: str) -> float:
        app, db, article_model = sites[name]
        with app.app_context():
            article = db.session.get(article_model, 1)
            assert article is not None
            started = time.perf_counter()
            for n in range(saves_per_sample):
                article.title = f"Revision {time.perf_counter_ns()} {n}"
                db.session.commit()
            elapsed = time.perf_counter() - started
            db.session.remove()
        return elapsed / saves_per_sample

    for name in sites:
        sample(name)  # warm up
    timings = interleave({name: functools.partial(sample, name) for name in sites}, rounds)
    watched, plain = median(timings["watched"]), median(timings["plain"])
    app, db, _ = sites["watched"]
    with app.app_context():
        app.extensions["indexnow"].extension.merge_inbox()  # what the next pass does first
        with db.engine.connect() as connection:
            queue = app.extensions["indexnow"].models.queue
            assert connection.execute(sa.select(sa.func.count()).select_from(queue)).scalar() == 1
    ratio = watched / plain
    return Figure(
        number, f"a watched save vs the same save without the extension ({backend_name(database_url)})",
        ms(watched), ms(plain), ratio, "reported", None,
        f"watched save: the event adds {ms(watched - plain)} per save; {rounds} interleaved rounds of "
        f"{saves_per_sample} saves per site.",
    )
