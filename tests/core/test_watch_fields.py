"""Issue 9, points 2 and 3: collection changes count; ``watch(fields=…)`` ignores the rest at no cost."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from flask_sqlalchemy import SQLAlchemy

from flask_indexnow import IndexNow

from .blog import Blog, close_blog, define_models, make_blog

pytestmark = pytest.mark.every_backend  # the statements counted differ by database


@pytest.fixture
def blog_factory(make_app) -> Iterator[Callable[..., Blog]]:
    made: list[Blog] = []

    def build(**watch_kwargs: Any) -> Blog:
        def watch(ext: Any, Post: Any) -> None:
            ext.watch(Post, url=lambda p: f"https://example.com/posts/{p.slug}",
                      published=lambda p: p.is_published, **watch_kwargs)

        blog = make_blog(make_app, watch)
        made.append(blog)
        return blog

    yield build
    for blog in made:
        close_blog(blog)


class Statements:
    """Every statement sent to the database while it is active."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self.seen: list[str] = []

    def _record(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        self.seen.append(statement)

    def __enter__(self) -> Statements:
        sa.event.listen(self.engine, "before_cursor_execute", self._record)
        return self

    def __exit__(self, *exc: object) -> None:
        sa.event.remove(self.engine, "before_cursor_execute", self._record)


# -- point 2: collections ---------------------------------------------------------


def test_adding_a_tag_queues_the_post(blog_factory) -> None:
    blog = blog_factory()
    post = blog.post("hello")
    post.tags.append(blog.Tag(name="flask"))
    blog.session.commit()
    assert blog.queue() == {"https://example.com/posts/hello": "update"}


def test_removing_a_tag_queues_the_post(blog_factory) -> None:
    blog = blog_factory()
    post = blog.post("hello", tags=[])
    post.tags.append(blog.Tag(name="flask"))
    blog.session.commit()
    blog.clear_queue()
    post.tags.clear()
    blog.session.commit()
    assert blog.queue() == {"https://example.com/posts/hello": "update"}


# -- point 3: fields= -----------------------------------------------------------------


def test_a_change_outside_fields_queues_nothing_and_runs_no_extra_sql(blog_factory) -> None:
    blog = blog_factory(fields=("title", "tags"))
    post = blog.post("hello")
    _ = post.title  # loaded, as the request that touches last_seen has it
    post.last_seen = 1234
    with Statements(blog.db.engine) as statements:
        blog.session.commit()
    updates = [s for s in statements.seen if s.lstrip().upper().startswith("UPDATE")]
    assert len(updates) == 1 and "last_seen" in updates[0]
    # Only the content's UPDATE (and the COMMIT some drivers send as a statement).
    assert [s for s in statements.seen if s not in updates and s.strip().upper() != "COMMIT"] == []
    assert blog.queue() == {}


def test_the_statement_count_sees_the_queue_writes(blog_factory) -> None:
    """The control of the test above: a watched field changes, the queue's statements show up."""
    blog = blog_factory(fields=("title", "tags"))
    post = blog.post("hello")
    _ = post.title
    post.title = "Edited"
    with Statements(blog.db.engine) as statements:
        blog.session.commit()
    assert len(statements.seen) > 1
    assert blog.queue() == {"https://example.com/posts/hello": "update"}


def test_a_relationship_named_in_fields_counts(blog_factory) -> None:
    blog = blog_factory(fields=("tags",))
    post = blog.post("hello")
    post.tags.append(blog.Tag(name="flask"))
    blog.session.commit()
    assert blog.queue() == {"https://example.com/posts/hello": "update"}


def test_a_move_outside_fields_is_still_queued(blog_factory) -> None:
    blog = blog_factory(fields=("title",))
    post = blog.post("old")
    post.slug = "new"
    blog.session.commit()
    assert blog.queue() == {"https://example.com/posts/old": "delete", "https://example.com/posts/new": "update"}


def test_an_unpublish_outside_fields_is_still_queued(blog_factory) -> None:
    blog = blog_factory(fields=("title",))
    post = blog.post("hello")
    post.status = "draft"
    blog.session.commit()
    assert blog.queue() == {"https://example.com/posts/hello": "delete"}
    post.status = "published"
    blog.session.commit()
    assert blog.queue() == {"https://example.com/posts/hello": "update"}


def test_without_fields_every_change_counts(blog_factory) -> None:
    blog = blog_factory()
    post = blog.post("hello")
    post.last_seen = 99
    blog.session.commit()
    assert blog.queue() == {"https://example.com/posts/hello": "update"}


@pytest.mark.parametrize("backend", ["sqlite"])
@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        (("title", "titel"), ValueError, "'titel', which is not a column or relationship of Post"),
        (("nope", "nada"), ValueError, "'nope', 'nada', which are not columns or relationships"),
        ("title", TypeError, "must be a list of attribute names"),
        ((1,), TypeError, "attribute names"),
        (("is_published",), ValueError, "'is_published'"),
    ],
)
def test_fields_are_checked_at_watch(backend: str, fields: Any, error: type, message: str) -> None:
    models = define_models(SQLAlchemy())
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        IndexNow().watch(models["Post"], url=lambda p: "https://example.com/", fields=fields)


@pytest.mark.parametrize("backend", ["sqlite"])
def test_fields_need_an_sqlalchemy_model(backend: str) -> None:
    class Plain:
        pass

    with pytest.raises(TypeError, match="needs an SQLAlchemy model"):
        IndexNow().watch(Plain, url=lambda p: "https://example.com/", fields=("title",))


def test_a_new_publication_date_outside_fields_is_still_queued(make_app, clock) -> None:
    from datetime import timedelta

    def watch(ext: Any, Post: Any) -> None:
        ext.watch(Post, url=lambda p: f"https://example.com/posts/{p.slug}", published=lambda p: p.is_published,
                  published_at=lambda p: None if p.last_seen is None else clock.now + timedelta(days=p.last_seen),
                  fields=("title",))

    blog = make_blog(make_app, watch)
    try:
        post = blog.post("later")
        post.last_seen = 2  # here: "publish in two days"
        blog.session.commit()
        assert blog.queue() == {"https://example.com/posts/later": "update"}
        assert rows_of(blog)[0].available_at == clock.now + timedelta(days=2)
    finally:
        close_blog(blog)


def rows_of(blog: Blog) -> list[Any]:
    from ..conftest import rows

    return rows(blog.app)
