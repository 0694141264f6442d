"""Issue 9, points 1 and 11: adapter functions see the state before the change.

Whatever a ``url=`` or ``published=`` function reads (a ``@property``, a
``hybrid_property``, a method, a related object), an unpublish, a delete or a
move queues ``delete`` for the old URL; ``related=`` pages are queued with them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import sqlalchemy as sa

from .blog import Blog, close_blog, make_blog

pytestmark = pytest.mark.every_backend  # flush and bulk-write behaviour differ by database

Watch = Callable[[Any, Any], None]

#: Each kind of reader: how ``url`` and ``published`` are read.
KINDS: dict[str, Watch] = {
    "property": lambda ext, Post: ext.watch(
        Post, url=lambda p: f"https://example.com/posts/{p.slug}", published=lambda p: p.is_published),
    "hybrid": lambda ext, Post: ext.watch(
        Post, url=lambda p: f"https://example.com/posts{p.path}", published=lambda p: p.live),
    "method": lambda ext, Post: ext.watch(
        Post, url=lambda p: p.absolute_url(), published=lambda p: p.is_visible()),
}


@pytest.fixture
def blog_factory(make_app) -> Iterator[Callable[..., Blog]]:
    made: list[Blog] = []

    def build(watch: Watch | None = None, **config: Any) -> Blog:
        blog = make_blog(make_app, watch, **config)
        made.append(blog)
        return blog

    yield build
    for blog in made:
        close_blog(blog)


@pytest.mark.parametrize("kind", KINDS)
def test_unpublish_through_a_computed_reader_deletes_the_url(blog_factory, kind: str) -> None:
    blog = blog_factory(KINDS[kind])
    post = blog.post("hello")
    post.status = "draft"
    blog.session.commit()
    assert blog.queue() == {"https://example.com/posts/hello": "delete"}


@pytest.mark.parametrize("kind", KINDS)
def test_a_move_through_a_computed_reader_deletes_the_old_url(blog_factory, kind: str) -> None:
    blog = blog_factory(KINDS[kind])
    post = blog.post("old")
    post.slug = "new"
    blog.session.commit()
    assert blog.queue() == {"https://example.com/posts/old": "delete", "https://example.com/posts/new": "update"}


@pytest.mark.parametrize("kind", KINDS)
def test_a_delete_after_a_change_in_the_same_flush_deletes_the_old_url(blog_factory, kind: str) -> None:
    blog = blog_factory(KINDS[kind])
    post = blog.post("kept")
    post.slug = "renamed-then-deleted"
    blog.session.delete(post)
    blog.session.commit()
    assert blog.queue() == {"https://example.com/posts/kept": "delete"}


def by_category(ext: Any, Post: Any) -> None:
    ext.watch(Post, url=lambda p: f"https://example.com/{p.category.slug}/{p.slug}",
              published=lambda p: p.is_published,
              related=lambda p: [f"https://example.com/{p.category.slug}/"])


def test_a_new_category_target_deletes_the_url_under_the_old_one(blog_factory) -> None:
    blog = blog_factory(by_category)
    post = blog.post("hello", category="news")
    post.category = blog.Category(slug="sport")
    blog.session.commit()
    assert blog.queue() == {
        "https://example.com/news/hello": "delete",
        "https://example.com/news/": "update",  # the old listing lost the post
        "https://example.com/sport/hello": "update",
        "https://example.com/sport/": "update",
    }


def test_a_related_column_changed_in_the_same_flush_is_read_old(blog_factory) -> None:
    blog = blog_factory(by_category)
    post = blog.post("hello", category="news")
    post.category.slug = "updates"
    post.title = "Edited"
    blog.session.commit()
    assert blog.queue() == {
        "https://example.com/news/hello": "delete",
        "https://example.com/news/": "update",
        "https://example.com/updates/hello": "update",
        "https://example.com/updates/": "update",
    }


def test_a_many_to_one_set_while_unloaded_still_knows_its_old_target(blog_factory) -> None:
    blog = blog_factory(by_category)
    post = blog.post("hello", category="news")
    sport = blog.Category(slug="sport")
    blog.session.add(sport)
    blog.session.commit()
    blog.clear_queue()
    blog.session.expire_all()  # nothing loaded: the old target must be fetched when it is replaced
    post.category = sport
    blog.session.commit()
    assert blog.queue()["https://example.com/news/hello"] == "delete"


def test_unpublish_and_delete_queue_the_related_pages(blog_factory) -> None:
    """Point 11: the listing changed too, computed from the state before the change."""
    blog = blog_factory(by_category)
    first = blog.post("first", category="news")
    second = blog.post("second", category="sport")
    first.status = "draft"
    first.category = blog.Category(slug="drafts")  # read before: the listing it was on
    blog.session.commit()
    assert blog.queue() == {"https://example.com/news/first": "delete", "https://example.com/news/": "update"}
    blog.clear_queue()
    blog.session.delete(second)
    blog.session.commit()
    assert blog.queue() == {"https://example.com/sport/second": "delete", "https://example.com/sport/": "update"}


def test_the_before_state_runs_no_sql_of_its_own(blog_factory) -> None:
    """Everything the functions read was loaded: building the old state issues no statement."""
    blog = blog_factory(by_category)
    post = blog.post("hello", category="news")
    _ = post.category.slug, post.title  # loaded, as a page edit would have
    post.category.slug = "updates"
    post.slug = "moved"
    statements: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(statement)

    blog.session.flush()  # the content's own statements
    post.title = "again"
    engine = blog.db.engine
    sa.event.listen(engine, "before_cursor_execute", record)
    try:
        blog.session.flush()
    finally:
        sa.event.remove(engine, "before_cursor_execute", record)
    # One UPDATE of the post, then the inbox INSERT (in a savepoint where one is needed): no SELECT from the shadow.
    assert not [s for s in statements if s.lstrip().upper().startswith("SELECT")
                and ("categories" in s or "posts" in s)], statements
    blog.session.commit()


def test_the_shadow_is_never_added_to_the_session(blog_factory) -> None:
    blog = blog_factory(by_category)
    post = blog.post("hello", category="news")
    post.slug = "moved"
    blog.session.commit()
    posts = blog.session.scalars(sa.select(blog.Post)).all()
    categories = blog.session.scalars(sa.select(blog.Category)).all()
    assert [p.slug for p in posts] == ["moved"]
    assert [c.slug for c in categories] == ["news"]
