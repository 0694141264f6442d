"""A host app under Flask-WTF's CSRFProtect: the buttons work, and both protections still hold.

CSRFProtect checks every POST of the app before any view runs. The status
page's forms carry its token beside their own (under another name), so a
click passes both checks; a POST missing either is refused and changes nothing.
"""

from __future__ import annotations

import re

import pytest
from flask import Flask
from flask_wtf.csrf import CSRFProtect

from flask_indexnow.status import csrf

from ..conftest import rows
from .conftest import PREFIX, allow, extension

BROWSER = {"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"}


def form_fields(page: str, action: str) -> dict[str, str]:
    """The hidden fields of the page's form that posts to ``action``, as a browser would send them."""
    form = re.search(rf'<form method="post" action="{re.escape(action)}">(.*?)</form>', page, re.S)
    assert form, f"no form posts to {action}"
    return dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form.group(1)))


@pytest.fixture
def guarded(make_app, endpoint) -> Flask:
    """A site under CSRFProtect, with its own form, and two URLs waiting."""
    app = allow(make_app(INDEXNOW_QUEUE_ENABLED=False))
    CSRFProtect(app)

    @app.post("/comment")
    def comment() -> str:
        return "saved"

    with app.app_context():
        for path in ("a", "b"):
            extension(app).enqueue(f"https://example.com/{path}")
    return app


def test_a_click_on_process_queue_passes_both_checks(guarded, endpoint):
    client = guarded.test_client()
    fields = form_fields(client.get(PREFIX + "/").get_data(as_text=True), PREFIX + "/process")
    assert set(fields) == {csrf.FIELD, "csrf_token"}  # ours, and the host's own
    response = client.post(PREFIX + "/process", data=fields, headers=BROWSER)
    assert response.status_code == 303, response.data[:300]
    assert sorted(endpoint.urls_received()) == ["https://example.com/a", "https://example.com/b"]
    assert rows(guarded) == []


@pytest.mark.parametrize("left_out", [csrf.FIELD, "csrf_token"])
def test_without_either_token_the_click_is_refused_and_changes_nothing(guarded, endpoint, left_out):
    client = guarded.test_client()
    fields = form_fields(client.get(PREFIX + "/").get_data(as_text=True), PREFIX + "/retry-failed")
    del fields[left_out]
    response = client.post(PREFIX + "/process", data=fields, headers=BROWSER)
    assert response.status_code == 400
    if left_out == "csrf_token":  # Flask-WTF must not take our field for its own
        assert b"The CSRF token is missing" in response.data
    assert endpoint.received == []
    assert len(rows(guarded)) == 2


def test_the_host_apps_own_forms_stay_protected(guarded):
    client = guarded.test_client()
    client.get(PREFIX + "/")  # a session with the status page's tokens does not open the site's forms
    assert client.post("/comment").status_code == 400


def test_without_csrfprotect_the_forms_carry_only_their_own_token(make_app):
    app = allow(make_app(INDEXNOW_QUEUE_ENABLED=False))
    page = app.test_client().get(PREFIX + "/").get_data(as_text=True)
    assert set(form_fields(page, PREFIX + "/process")) == {csrf.FIELD}


def test_with_csrf_checks_switched_off_the_forms_carry_only_their_own_token(make_app):
    app = allow(make_app(INDEXNOW_QUEUE_ENABLED=False, WTF_CSRF_ENABLED=False))
    CSRFProtect(app)
    page = app.test_client().get(PREFIX + "/").get_data(as_text=True)
    assert set(form_fields(page, PREFIX + "/process")) == {csrf.FIELD}
