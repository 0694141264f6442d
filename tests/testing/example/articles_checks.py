from blog import Article, create_app, db

from flask_indexnow.testing import Reply

URL = "https://www.example.com/articles/hello"


def publish(app, slug="hello"):
    with app.app_context():
        db.session.add(Article(slug=slug, published=True))
        db.session.commit()


def test_publishing_queues_the_url_and_sends_nothing_yet(app, indexnow):
    publish(app)
    assert indexnow.queued_urls(app) == [URL]
    assert indexnow.sent_urls == []


def test_a_draft_queues_nothing(app, indexnow):
    with app.app_context():
        db.session.add(Article(slug="draft", published=False))
        db.session.commit()
    assert indexnow.queued_urls(app) == []


def test_deliver_sends_what_is_queued(app, indexnow):
    publish(app)
    result = indexnow.deliver(app)
    assert result.succeeded == 1
    assert indexnow.sent_urls == [URL]
    [request] = indexnow.requests
    assert request.host == "www.example.com"
    assert request.key_location == "https://www.example.com/5f2b8c1d9e7a4b3c.txt"
    assert indexnow.queued_urls(app) == []


def test_unpublishing_sends_a_delete(app, indexnow):
    publish(app)
    indexnow.deliver(app)
    with app.app_context():
        db.session.execute(db.select(Article).filter_by(slug="hello")).scalar_one().published = False
        db.session.commit()
    assert indexnow.queued_urls(app, action="delete") == [URL]
    indexnow.deliver(app)
    assert indexnow.sent_urls == [URL, URL]  # IndexNow has one message for both: "this URL changed"


def test_a_throttled_engine_is_retried_later(app, indexnow):
    indexnow.reply(Reply(429, retry_after=120))
    publish(app)
    result = indexnow.deliver(app)
    assert result.retried == 1
    [row] = indexnow.queued(app)
    assert (row.status, row.attempts, row.last_http_status) == ("pending", 1, 429)


def test_an_app_built_elsewhere_can_be_aimed_at_the_recorder(tmp_path, indexnow):
    app = indexnow.use(create_app({"SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'other.db'}"}))
    publish(app, "elsewhere")
    indexnow.deliver(app)
    assert indexnow.sent_urls == ["https://www.example.com/articles/elsewhere"]
    with app.app_context():
        db.engine.dispose()
