"""The interval grammar of every() and its calendar arithmetic (pure functions)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flask_indexnow.scheduling.intervals import Interval, add_months, parse_interval

UTC = timezone.utc


@pytest.mark.parametrize(
    ("expression", "months", "seconds"),
    [
        ("30 minutes", 0, 1800),
        ("1 minute", 0, 60),
        ("1 hour", 0, 3600),
        ("2 hours", 0, 7200),
        ("1 day", 0, 86400),
        ("+1 day", 0, 86400),
        ("2 weeks", 0, 14 * 86400),
        ("1 month", 1, 0),
        ("3 months", 3, 0),
        ("1 year", 12, 0),
        ("45 seconds", 0, 45),
        ("1 second", 0, 1),
        ("1 hour 30 minutes", 0, 5400),
        ("+1 hour +30 minutes", 0, 5400),
        ("  1 HOUR   30 Minutes ", 0, 5400),
        ("1 month 2 days", 1, 2 * 86400),
    ],
)
def test_valid_intervals(expression: str, months: int, seconds: int) -> None:
    assert parse_interval(expression) == Interval(months, seconds)


@pytest.mark.parametrize(
    "expression",
    ["", "   ", "1", "hour", "1 fortnight", "-1 day", "1 hour 2 hours", "0 minutes", "1 hour and 30 minutes",
     "1.5 hours", "101 years", "every 1 hour", "1 hour,", "1 m", "1 hours30"],
)
def test_bad_intervals_name_the_expression(expression: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_interval(expression)
    assert repr(expression) in str(info.value)


@pytest.mark.parametrize("value", [None, 5, ["1 hour"]])
def test_non_strings_are_refused(value: object) -> None:
    with pytest.raises(ValueError, match="interval"):
        parse_interval(value)  # type: ignore[arg-type]


def test_describe_is_canonical() -> None:
    assert parse_interval("90 minutes").describe() == "1 hour 30 minutes"
    assert parse_interval("+1 day").describe() == "1 day"
    assert parse_interval("14 months 8 days").describe() == "1 year 2 months 1 week 1 day"


def test_months_clamp_without_overflowing_into_the_next_month() -> None:
    assert add_months(datetime(2024, 1, 31, 9, tzinfo=UTC), 1) == datetime(2024, 2, 29, 9, tzinfo=UTC)
    assert add_months(datetime(2023, 1, 31, 9, tzinfo=UTC), 1) == datetime(2023, 2, 28, 9, tzinfo=UTC)
    assert add_months(datetime(2024, 3, 31, tzinfo=UTC), 1) == datetime(2024, 4, 30, tzinfo=UTC)
    assert add_months(datetime(2024, 11, 30, tzinfo=UTC), 3) == datetime(2025, 2, 28, tzinfo=UTC)
    assert add_months(datetime(2024, 2, 29, tzinfo=UTC), 12) == datetime(2025, 2, 28, tzinfo=UTC)


def test_monthly_occurrences_count_from_the_anchor_not_the_clamped_date() -> None:
    monthly = parse_interval("1 month")
    anchor = datetime(2024, 1, 31, 12, tzinfo=UTC)
    seen = []
    when = anchor
    for _ in range(4):
        when = monthly.first_after(anchor, when)
        seen.append(when.date().isoformat())
    assert seen == ["2024-02-29", "2024-03-31", "2024-04-30", "2024-05-31"]


def test_next_occurrence_keeps_the_cadence_of_the_anchor() -> None:
    hourly = parse_interval("1 hour")
    anchor = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
    # Evaluated late (15:30:07): the next run stays on the anchor's grid, no drift.
    assert hourly.first_after(anchor, datetime(2024, 5, 1, 15, 30, 7, tzinfo=UTC)) == datetime(2024, 5, 1, 16, tzinfo=UTC)
    # Exactly on an occurrence: strictly after it.
    assert hourly.first_after(anchor, datetime(2024, 5, 1, 16, tzinfo=UTC)) == datetime(2024, 5, 1, 17, tzinfo=UTC)
    # Before the anchor: the first occurrence after it.
    assert hourly.first_after(anchor, datetime(2024, 4, 1, tzinfo=UTC)) == datetime(2024, 5, 1, 13, tzinfo=UTC)


def test_long_downtime_jumps_straight_to_the_future() -> None:
    every_90 = parse_interval("1 hour 30 minutes")
    anchor = datetime(2020, 1, 1, tzinfo=UTC)
    after = datetime(2024, 6, 1, 10, 10, tzinfo=UTC)
    following = every_90.first_after(anchor, after)
    assert after < following <= after + timedelta(minutes=90)
    assert (following - anchor).total_seconds() % 5400 == 0


@settings(max_examples=100, deadline=None)
@given(
    months=st.integers(0, 24),
    seconds=st.integers(0, 40 * 86400),
    anchor=st.datetimes(datetime(2000, 1, 1), datetime(2030, 1, 1)),
    offset=st.integers(-400 * 86400, 4000 * 86400),
)
def test_first_after_is_the_earliest_later_occurrence(months: int, seconds: int, anchor: datetime, offset: int) -> None:
    if months == 0 and seconds == 0:
        seconds = 1
    interval = Interval(months, seconds)
    anchor = anchor.replace(tzinfo=UTC)
    after = anchor + timedelta(seconds=offset)
    # Reference: bisect for the smallest n >= 1 whose occurrence is later than `after`.
    low, high = 1, 1
    while interval.occurrence(anchor, high) <= after:
        high *= 2
    while low < high:
        middle = (low + high) // 2
        if interval.occurrence(anchor, middle) > after:
            high = middle
        else:
            low = middle + 1
    assert interval.first_after(anchor, after) == interval.occurrence(anchor, low)
