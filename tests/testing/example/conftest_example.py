import pytest
from blog import create_app, db


@pytest.fixture
def app(tmp_path, indexnow_config):
    app = create_app({
        "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'blog.db'}",
        "INDEXNOW_QUEUE_ENABLED": False,  # nothing is sent until a test calls deliver()
        **indexnow_config,  # every POST goes to the local recorder, never to a search engine
    })
    yield app
    with app.app_context():
        db.engine.dispose()
