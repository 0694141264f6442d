"""Cron expressions: validation, time zones, and daylight-saving days."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from flask import Flask

from flask_indexnow import IndexNow
from flask_indexnow.scheduling.cron import Cron

from ..conftest import FakeClock, rows

pytestmark = pytest.mark.every_backend  # stored datetimes differ by database

UTC = timezone.utc
BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")


def runs(expression: str, zone: str | None, start: datetime, end: datetime) -> list[datetime]:
    cron = Cron.parse(expression, zone)
    found = []
    when = start
    while True:
        when = cron.next_after(when)
        if when >= end:
            return found
        found.append(when)


def test_utc_is_the_default() -> None:
    cron = Cron.parse("0 3 * * *")
    assert cron.timezone == "UTC"
    assert cron.next_after(datetime(2024, 1, 1, 3, tzinfo=UTC)) == datetime(2024, 1, 2, 3, tzinfo=UTC)


def test_a_time_zone_moves_the_instant() -> None:
    cron = Cron.parse("0 3 * * *", "Europe/Moscow")  # UTC+3 all year
    assert cron.next_after(datetime(2024, 6, 30, 22, tzinfo=UTC)) == datetime(2024, 7, 1, 0, tzinfo=UTC)
    weekly = Cron.parse("0 9 * * 1", "America/New_York")
    assert weekly.next_after(datetime(2024, 7, 2, tzinfo=UTC)) == datetime(2024, 7, 8, 13, tzinfo=UTC)


@pytest.mark.parametrize(
    ("expression", "problem"),
    [
        ("0 3 * *", "exactly 5 fields"),
        ("0 0 3 * * *", "exactly 5 fields"),
        ("@reboot", "the aliases are"),  # @daily and the other aliases are valid since issue 21
        ("", "exactly 5 fields"),
        ("61 0 * * *", "invalid cron expression"),
        ("0 25 * * *", "invalid cron expression"),
        ("H 0 * * *", "not supported"),
        ("R 0 * * *", "not supported"),
        ("0 0 31 2 *", "never matches"),
        ("0 0 * * ;", "not supported"),
    ],
)
def test_bad_expressions_are_refused(expression: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem) as info:
        Cron.parse(expression)
    assert repr(expression) in str(info.value)


@pytest.mark.parametrize("zone", ["Mars/Olympus", "../../etc/passwd", "", "utc+3"])
def test_unknown_time_zones_are_refused(zone: str) -> None:
    with pytest.raises(ValueError, match="unknown timezone"):
        Cron.parse("0 3 * * *", zone)


def test_spring_forward_runs_a_skipped_time_once_shifted_by_the_gap() -> None:
    found = runs("30 2 * * *", "Europe/Berlin", datetime(2024, 3, 29, tzinfo=UTC), datetime(2024, 4, 2, tzinfo=UTC))
    local = [w.astimezone(BERLIN) for w in found]
    assert Counter(w.date().isoformat() for w in local) == {
        "2024-03-29": 1, "2024-03-30": 1, "2024-03-31": 1, "2024-04-01": 1,
    }
    # 02:30 does not exist on 31 March: it runs once, an hour later (03:30 CEST).
    assert local[2].replace(tzinfo=None) == datetime(2024, 3, 31, 3, 30)
    assert local[3].replace(tzinfo=None) == datetime(2024, 4, 1, 2, 30)


def test_fall_back_runs_a_repeated_time_once() -> None:
    found = runs("30 2 * * *", "Europe/Berlin", datetime(2024, 10, 25, tzinfo=UTC), datetime(2024, 10, 29, tzinfo=UTC))
    assert [w.isoformat() for w in found] == [
        "2024-10-25T00:30:00+00:00",
        "2024-10-26T00:30:00+00:00",
        "2024-10-27T00:30:00+00:00",  # 02:30 CEST, the first of the two 02:30s
        "2024-10-28T01:30:00+00:00",  # 02:30 CET
    ]


def test_new_york_changes_too() -> None:
    spring = runs("30 2 * * *", "America/New_York", datetime(2024, 3, 9, tzinfo=UTC), datetime(2024, 3, 12, 12, tzinfo=UTC))
    fall = runs("30 1 * * *", "America/New_York", datetime(2024, 11, 2, tzinfo=UTC), datetime(2024, 11, 5, 12, tzinfo=UTC))
    for found, change_day in ((spring, "2024-03-10"), (fall, "2024-11-03")):
        per_day = Counter(w.astimezone(NEW_YORK).date().isoformat() for w in found)
        assert per_day[change_day] == 1 and set(per_day.values()) == {1}


def test_every_local_day_of_a_year_gets_exactly_one_run() -> None:
    found = runs("30 2 * * *", "Europe/Berlin", datetime(2023, 12, 31, 12, tzinfo=UTC), datetime(2024, 12, 31, 12, tzinfo=UTC))
    per_day = Counter(w.astimezone(BERLIN).date() for w in found)
    assert len(per_day) == 366 and set(per_day.values()) == {1}


def test_wildcard_hours_follow_real_time_through_the_repeated_hour() -> None:
    found = runs("*/30 * * * *", "Europe/Berlin", datetime(2024, 10, 26, 23, 10, tzinfo=UTC),
                 datetime(2024, 10, 27, 3, 1, tzinfo=UTC))
    # Every 30 real minutes, including both passes through 02:00-03:00 local.
    assert [w.strftime("%H:%M") for w in found] == [
        "23:30", "00:00", "00:30", "01:00", "01:30", "02:00", "02:30", "03:00",
    ]
    spring = runs("*/30 * * * *", "Europe/Berlin", datetime(2024, 3, 31, 0, 10, tzinfo=UTC),
                  datetime(2024, 3, 31, 2, 1, tzinfo=UTC))
    assert [w.strftime("%H:%M") for w in spring] == ["00:30", "01:00", "01:30", "02:00"]


def test_a_dst_schedule_dispatches_once_per_local_day(make_app, clock: FakeClock) -> None:
    """Driven through the real scheduler tick every 10 minutes across both change nights."""
    ext = IndexNow()
    app: Flask = make_app(indexnow=ext)
    with app.app_context():
        for start in (datetime(2024, 3, 30, 12, tzinfo=UTC), datetime(2024, 10, 26, 12, tzinfo=UTC)):
            clock.set(start)
            ext.scheduler.remove("nightly")
            ext.schedule("nightly").cron("30 2 * * *", timezone="Europe/Berlin").save()
            while clock.now < start + timedelta(days=2):
                clock.advance(minutes=10)
                ext.scheduler.tick()
    jobs = rows(app, "Job", handler="nightly")
    local_days = Counter(j.created_at.astimezone(BERLIN).date().isoformat() for j in jobs)
    assert local_days == {"2024-03-31": 1, "2024-04-01": 1, "2024-10-27": 1, "2024-10-28": 1}
    runs_at = sorted(j.created_at for j in jobs)
    assert runs_at[0] == datetime(2024, 3, 31, 1, 30, tzinfo=UTC)  # 03:30 CEST, the shifted 02:30
    assert runs_at[2] == datetime(2024, 10, 27, 0, 30, tzinfo=UTC)  # the first 02:30, not the second


@pytest.mark.parametrize(("alias", "fields"), [
    ("@yearly", "0 0 1 1 *"), ("@annually", "0 0 1 1 *"), ("@monthly", "0 0 1 * *"), ("@weekly", "0 0 * * 0"),
    ("@daily", "0 0 * * *"), ("@midnight", "0 0 * * *"), ("@hourly", "0 * * * *"), (" @DAILY ", "0 0 * * *"),
])
def test_aliases_run_as_their_fields(alias: str, fields: str) -> None:
    after = datetime(2024, 5, 1, 12, 30, tzinfo=timezone.utc)
    cron = Cron.parse(alias, "Europe/Rome")
    assert cron.expression == alias.strip().lower()  # kept as written, for the listing
    expected = Cron.parse(fields, "Europe/Rome")
    start = after
    for _ in range(3):  # the same instants, three in a row
        assert cron.next_after(start) == expected.next_after(start)
        start = expected.next_after(start)
