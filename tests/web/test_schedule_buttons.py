"""The status page's schedule buttons: pause, resume, resume with catch-up, run now; refused cross-site."""

from __future__ import annotations

from datetime import timedelta

import pytest

from flask_indexnow.status import csrf

from ..conftest import rows
from .conftest import PREFIX, allow, extension, page_token
from .test_status_actions import notice

pytestmark = pytest.mark.every_backend  # each button is a transaction of the scheduler's controls

SAME_ORIGIN = {"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"}


@pytest.fixture
def scheduled(make_app, clock):
    app = allow(make_app(INDEXNOW_SCHEDULER_ENABLED=False))
    with app.app_context():
        extension(app).schedule("report", name="nightly report").every("1 hour").save()
    client = app.test_client()
    return app, client, page_token(client)


def press(client, token, action, name="nightly report", **extra):
    return client.post(f"{PREFIX}/schedules/{action}", data={csrf.FIELD: token, "schedule": name, **extra},
                       headers=SAME_ORIGIN)


def test_pause_resume_and_run_now(scheduled, clock) -> None:
    app, client, token = scheduled
    page = client.get(PREFIX + "/").get_data(as_text=True)
    assert 'id="schedule-1-pause"' in page and 'id="schedule-1-trigger"' in page
    response = press(client, token, "pause")
    assert response.status_code == 303 and response.headers["Location"].endswith("/indexnow/#actions")
    assert notice(client) == "ok: Schedule nightly report paused."
    assert [s.enabled for s in rows(app, "Schedule")] == [False]
    page = client.get(PREFIX + "/").get_data(as_text=True)
    assert 'id="schedule-1-resume"' in page and 'id="schedule-1-catch-up"' in page and "schedule-1-pause" not in page

    clock.advance(hours=2, minutes=30)
    press(client, token, "resume", catch_up="1")
    (job,) = rows(app, "Job")
    assert notice(client) == f"ok: Schedule nightly report resumed. Job {job.id} runs once for what was missed."
    assert [s.enabled for s in rows(app, "Schedule")] == [True]

    press(client, token, "trigger")
    assert len(rows(app, "Job")) == 2
    assert notice(client).startswith("ok: Schedule nightly report triggered: job ")
    press(client, token, "trigger")  # the second operator's click: the job has not started
    assert len(rows(app, "Job")) == 2
    assert "was already triggered" in notice(client)


def test_resume_without_catch_up_drops_the_missed_runs(scheduled, clock) -> None:
    app, client, token = scheduled
    press(client, token, "pause")
    clock.advance(hours=5)
    press(client, token, "resume")
    assert notice(client) == "ok: Schedule nightly report resumed."
    assert rows(app, "Job") == []
    (schedule,) = rows(app, "Schedule")
    assert schedule.next_run > clock.now and schedule.next_run <= clock.now + timedelta(hours=1)


def test_an_unknown_schedule_is_a_notice_not_an_error(scheduled) -> None:
    app, client, token = scheduled
    response = press(client, token, "pause", name="gone")
    assert response.status_code == 303
    assert notice(client) == "warning: no schedule named &#39;gone&#39; (see `flask indexnow schedule list`)"  # HTML-escaped
    assert [s.enabled for s in rows(app, "Schedule")] == [True]
    assert client.post(f"{PREFIX}/schedules/pause", data={csrf.FIELD: token}, headers=SAME_ORIGIN).status_code == 400


@pytest.mark.parametrize("action", ["pause", "resume", "trigger"])
def test_refused_without_a_token_or_cross_site(scheduled, action) -> None:
    app, client, token = scheduled
    no_token = client.post(f"{PREFIX}/schedules/{action}", data={"schedule": "nightly report"}, headers=SAME_ORIGIN)
    assert no_token.status_code == 400
    cross = client.post(f"{PREFIX}/schedules/{action}", data={csrf.FIELD: token, "schedule": "nightly report"},
                        headers={"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"})
    assert cross.status_code == 403
    assert [s.enabled for s in rows(app, "Schedule")] == [True] and rows(app, "Job") == []


@pytest.mark.parametrize("backend", ["sqlite"])  # a form's fields: the database plays no part
def test_under_the_hosts_csrfprotect_the_buttons_carry_both_tokens(make_app, backend) -> None:
    from flask_wtf.csrf import CSRFProtect

    from .test_status_host_csrf import BROWSER, form_fields

    app = allow(make_app(INDEXNOW_SCHEDULER_ENABLED=False))
    CSRFProtect(app)
    with app.app_context():
        extension(app).schedule("report").every("1 hour").save()
    client = app.test_client()
    page = client.get(PREFIX + "/").get_data(as_text=True)
    fields = form_fields(page, PREFIX + "/schedules/pause")
    assert set(fields) == {csrf.FIELD, "csrf_token", "schedule"}  # ours, the host's own, the name
    without_host = {k: v for k, v in fields.items() if k != "csrf_token"}
    assert client.post(PREFIX + "/schedules/pause", data=without_host, headers=BROWSER).status_code == 400
    assert [s.enabled for s in rows(app, "Schedule")] == [True]
    assert client.post(PREFIX + "/schedules/pause", data=fields, headers=BROWSER).status_code == 303
    assert [s.enabled for s in rows(app, "Schedule")] == [False]
