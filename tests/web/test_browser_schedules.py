"""The schedule buttons in a real browser: headless Chromium, a real server, no script on the page."""

from __future__ import annotations

from typing import Any

import pytest

from ..conftest import rows
from ..live_server import LiveServer
from .conftest import PREFIX, allow, extension
from .test_browser import browser, click_and_wait, console_errors, driver, wait_for  # noqa: F401 (fixtures)

#: What a browser shows does not depend on the database: SQLite (the buttons run on all
#: three in test_schedule_buttons.py).
pytestmark = pytest.mark.browser


def schedule_row(driver: Any, name: str) -> str:  # noqa: F811
    from selenium.webdriver.common.by import By

    for row in driver.find_elements(By.CSS_SELECTOR, "#schedules tbody tr"):
        if row.find_element(By.TAG_NAME, "td").text == name:
            return str(row.text)
    raise AssertionError(f"no row for {name!r} in the schedules table")


def test_pause_resume_and_run_now_buttons(make_app, driver):  # noqa: F811
    from selenium.webdriver.common.by import By

    app = allow(make_app(INDEXNOW_QUEUE_ENABLED=False, INDEXNOW_SCHEDULER_ENABLED=False))
    with app.app_context():
        extension(app).schedule("report", {"kind": "weekly"}, name="weekly-report").cron("@weekly").save()
    driver.get_log("browser")
    with LiveServer(app) as server:
        driver.get(server.url + PREFIX + "/")
        assert driver.find_elements(By.TAG_NAME, "script") == []
        row = schedule_row(driver, "weekly-report")
        assert "active" in row and "cron: @weekly" in row and "manual" in row

        click_and_wait(driver, "schedule-1-pause")
        assert "Schedule weekly-report paused." in wait_for(driver, "notice").text
        assert "paused" in schedule_row(driver, "weekly-report")
        assert driver.find_elements(By.ID, "schedule-1-pause") == []
        assert [s.enabled for s in rows(app, "Schedule")] == [False]

        click_and_wait(driver, "schedule-1-trigger")
        assert "Schedule weekly-report triggered: job" in wait_for(driver, "notice").text
        row = schedule_row(driver, "weekly-report")
        assert "triggered" in row and "pending" in row  # the last outcome and its job's result
        (job,) = rows(app, "Job")
        assert (job.handler, job.payload, job.schedule) == ("report", {"kind": "weekly"}, "weekly-report")

        click_and_wait(driver, "schedule-1-resume")
        assert "Schedule weekly-report resumed." in wait_for(driver, "notice").text
        assert "active" in schedule_row(driver, "weekly-report")
        assert driver.find_elements(By.ID, "schedule-1-pause") != []
    assert [s.enabled for s in rows(app, "Schedule")] == [True]
    assert len(rows(app, "Job")) == 1  # a resume without catch-up adds none
    assert console_errors(driver) == []  # no CSP violation, no failed resource
