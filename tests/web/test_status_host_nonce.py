"""Issue 19.3: a host with a CSRF scheme of its own (a ``nonce`` on every non-JSON POST).

The host below refuses, in ``before_request``, every form POST whose ``nonce``
field is not its session's, as a CTF platform does: the status page's buttons
get its 403 page. ``@indexnow.status_form_fields`` gives every form the host's
field; the page's own protection still holds beside it.
"""

from __future__ import annotations

import secrets

import pytest
from flask import Flask, abort, request, session

from flask_indexnow.status import csrf

from ..conftest import rows
from .conftest import PREFIX, allow, extension
from .test_status_host_csrf import BROWSER, form_fields

HOST_REFUSAL = "refused by the host: wrong nonce"


def nonce_host(app: Flask) -> Flask:
    """The host's scheme: a nonce in the session, required on every POST that is not JSON."""

    @app.before_request
    def check_nonce() -> None:
        session.setdefault("nonce", secrets.token_hex(16))
        if request.method == "POST" and not request.is_json and request.form.get("nonce") != session["nonce"]:
            abort(403, HOST_REFUSAL)

    @app.post("/comment")
    def comment() -> str:
        return "saved"

    return app


@pytest.fixture
def host(make_app, endpoint) -> Flask:
    app = nonce_host(allow(make_app(INDEXNOW_QUEUE_ENABLED=False)))
    with app.app_context():
        for path in ("a", "b"):
            extension(app).enqueue(f"https://example.com/{path}")
    return app


def with_hook(app: Flask) -> Flask:
    @extension(app).status_form_fields
    def host_nonce() -> dict[str, str]:
        return {"nonce": session["nonce"]}

    return app


def test_without_the_hook_the_host_refuses_the_buttons(host, endpoint):
    client = host.test_client()
    fields = form_fields(client.get(PREFIX + "/").get_data(as_text=True), PREFIX + "/process")
    assert set(fields) == {csrf.FIELD}
    response = client.post(PREFIX + "/process", data=fields, headers=BROWSER)
    assert response.status_code == 403 and HOST_REFUSAL.encode() in response.data
    assert endpoint.received == []
    assert len(rows(host)) == 2


@pytest.mark.parametrize("action", ["/process", "/retry-failed"])
def test_with_the_hook_every_form_carries_the_hosts_field(host, action):
    with_hook(host)
    client = host.test_client()
    fields = form_fields(client.get(PREFIX + "/").get_data(as_text=True), PREFIX + action)
    with client.session_transaction() as stored:
        assert fields == {csrf.FIELD: fields[csrf.FIELD], "nonce": stored["nonce"]}


def test_with_the_hook_a_click_passes_both_checks(host, endpoint):
    with_hook(host)
    client = host.test_client()
    fields = form_fields(client.get(PREFIX + "/").get_data(as_text=True), PREFIX + "/process")
    response = client.post(PREFIX + "/process", data=fields, headers=BROWSER)
    assert response.status_code == 303, response.data[:300]
    assert sorted(endpoint.urls_received()) == ["https://example.com/a", "https://example.com/b"]
    assert rows(host) == []


@pytest.mark.parametrize("left_out", [csrf.FIELD, "nonce"])
def test_with_the_hook_either_field_missing_is_still_refused(host, endpoint, left_out):
    with_hook(host)
    client = host.test_client()
    fields = form_fields(client.get(PREFIX + "/").get_data(as_text=True), PREFIX + "/process")
    del fields[left_out]
    response = client.post(PREFIX + "/process", data=fields, headers=BROWSER)
    assert response.status_code == (400 if left_out == csrf.FIELD else 403)
    assert endpoint.received == []
    assert len(rows(host)) == 2


def test_the_hosts_own_forms_stay_protected(host):
    with_hook(host)
    client = host.test_client()
    client.get(PREFIX + "/")
    assert client.post("/comment").status_code == 403
    with client.session_transaction() as stored:
        nonce = stored["nonce"]
    assert client.post("/comment", data={"nonce": nonce}).data == b"saved"


def test_hook_values_are_escaped(host):
    @extension(host).status_form_fields
    def hostile() -> dict[str, str]:
        return {"nonce": '"><script>alert(1)</script>'}

    page = host.test_client().get(PREFIX + "/").get_data(as_text=True)
    assert "<script>" not in page
    assert 'value="&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"' in page


@pytest.mark.parametrize(("returned", "message"), [
    (["nonce", "x"], "must return a dict of hidden field name -> string value, got list"),
    ({"nonce": 5}, "got the item 'nonce': 5"),
    ({"": "x"}, "got the item '': 'x'"),
    ({csrf.FIELD: "x"}, f"cannot set {csrf.FIELD!r}"),
])
def test_a_hook_returning_the_wrong_shape_names_the_mistake(host, returned, message):
    extension(host).status_form_fields(lambda: returned)
    host.config["PROPAGATE_EXCEPTIONS"] = True
    with pytest.raises(TypeError, match="@indexnow.status_form_fields") as raised:
        host.test_client().get(PREFIX + "/")
    assert message in str(raised.value)


def test_a_hook_returning_none_adds_nothing(host):
    extension(host).status_form_fields(lambda: None)
    page = host.test_client().get(PREFIX + "/").get_data(as_text=True)
    assert set(form_fields(page, PREFIX + "/process")) == {csrf.FIELD}


def test_the_schedule_buttons_carry_the_hosts_field_too(host, endpoint):
    """Every POST form of the page, the schedules' included: a click on "Pause" passes the host's check."""
    with_hook(host)
    with host.app_context():
        extension(host).schedule("report", name="nightly report").every("1 hour").save()
    client = host.test_client()
    page = client.get(PREFIX + "/").get_data(as_text=True)
    fields = form_fields(page, PREFIX + "/schedules/pause")
    with client.session_transaction() as stored:
        assert fields["nonce"] == stored["nonce"]
    response = client.post(PREFIX + "/schedules/pause", data=fields, headers=BROWSER)
    assert response.status_code == 303, response.data[:300]
    assert [s.enabled for s in rows(host, "Schedule")] == [False]
