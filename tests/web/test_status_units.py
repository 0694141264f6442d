"""Pure parts of the status page: chart geometry, display filters, filter parsing, origins."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from flask_indexnow.status.chart import SERIES, build_chart, nice_ceiling
from flask_indexnow.status.display import duration, visible
from flask_indexnow.status.queries import PER_PAGE_MAX, HistoryFilter, clean_int, clean_text


def buckets(*counts: tuple[int, int, int]) -> list[dict]:
    start = datetime(2024, 5, 1, 22, tzinfo=timezone.utc)
    return [{"hour": (start + timedelta(hours=i)).isoformat(), **dict(zip(SERIES, c)), "dry_run": 0}
            for i, c in enumerate(counts)]


@pytest.mark.parametrize("value,expected", [(0, 1), (1, 1), (2, 2), (3, 5), (5, 5), (6, 10), (11, 20),
                                            (21, 50), (99, 100), (101, 200), (12345, 20000)])
def test_nice_ceiling(value, expected):
    assert nice_ceiling(value) == expected


def test_bars_stack_and_scale():
    chart = build_chart(buckets((8, 2, 0), (0, 0, 0), (1, 0, 1)))
    assert chart.totals == {"success": 9, "retry": 2, "failed": 1}
    assert [len(c.bars) for c in chart.columns] == [2, 0, 2]
    success, retry = chart.columns[0].bars
    assert (success.series, retry.series) == ("success", "retry")
    assert success.y + success.height == pytest.approx(chart.baseline)  # on the axis
    assert retry.y + retry.height == pytest.approx(success.y, abs=0.01)  # on top of success
    assert success.height == pytest.approx(4 * retry.height, rel=0.01)
    assert success.height + retry.height == pytest.approx(chart.baseline - 10)  # 10 = peak = the top
    assert [t.label for t in chart.y_ticks] == ["0", "5", "10"]
    # columns sit side by side inside the plot
    assert chart.columns[0].x == pytest.approx(chart.plot_left)
    assert chart.columns[-1].x + chart.columns[-1].width == pytest.approx(chart.plot_right, abs=0.05)
    assert chart.columns[1].title == "2024-05-01 23:00 UTC: 0 success, 0 retry, 0 failed"
    assert [t.label for t in chart.x_ticks] == ["Thu 02 May"]  # midnight; 22:00 is too close to label


def test_empty_chart():
    chart = build_chart(buckets(*[(0, 0, 0)] * 72))
    assert chart.empty and all(not c.bars for c in chart.columns)
    assert chart.summary == "Deliveries per hour over the last 72 hours: 0 success, 0 retry, 0 failed."
    assert [t.label for t in chart.y_ticks] == ["0", "1"]
    assert build_chart([]).columns == []


def test_visible():
    assert visible("a\u202eb\u200bc\u2066d\u0000e\u2028f") == "a[U+202E]b[U+200B]c[U+2066]d[U+0000]e[U+2028]f"
    assert visible("<script>") == "<script>"  # escaping is Jinja's job, done after this
    assert visible("x" * 10, 5) == "xxxx…"
    assert visible(None) == ""
    assert visible("héllo 日本 😀 עברית") == "héllo 日本 😀 עברית"


@pytest.mark.parametrize("seconds,text", [(0, "0s"), (59.4, "59s"), (60, "1 min"), (3599, "59 min"),
                                          (3600, "1 h"), (3660, "1 h 1 min"), (2 * 86400, "2 d"),
                                          (2 * 86400 + 7200, "2 d 2 h"), (None, "—"), (-120, "2 min")])
def test_duration(seconds, text):
    assert duration(seconds) == text


def test_clean_values():
    assert clean_text(" a\x00b\u202e ", 10) == "ab"
    assert clean_text("\x00\u200b", 10) is None
    assert clean_text(["x"], 10) is None
    assert clean_text("abcdef", 3) == "abc"
    assert clean_int("12", 1, 1, 10) == 10
    assert clean_int("-3", 1, 1, 10) == 1
    assert clean_int("٣", 1, 1, 10) == 1
    assert clean_int("9" * 400, 1, 1, 10) == 10
    assert clean_int(None, 4, 1, 10) == 4


def test_history_filter_from_args():
    flt = HistoryFilter.from_args({"status": "retry", "action": "delete", "host": " Example.COM. ", "q": " x ",
                                   "page": "3", "per_page": "100000"})
    assert flt == HistoryFilter("retry", "example.com", "delete", "x", 3, PER_PAGE_MAX)
    assert HistoryFilter.from_args({"status": "nope", "action": "nope"}) == HistoryFilter()
    assert not HistoryFilter().active and flt.active
    assert HistoryFilter(q="x", page=1).args(page=2) == {"q": "x", "page": 2}
    assert HistoryFilter(q="x", page=2).args(page=1) == {"q": "x"}


@pytest.mark.parametrize("url,origin", [
    ("http://localhost/", "http://localhost"),
    ("HTTP://LocalHost:80/x", "http://localhost"),
    ("https://example.com:443", "https://example.com"),
    ("https://example.com:8443/", "https://example.com:8443"),
    ("https://user:pw@example.com/", "https://example.com"),
    ("http://[::1]:8080/", "http://[::1]:8080"),
    ("null", None),
    ("", None),
    ("http://[bad/", None),
])
def test_origin_of(url, origin):
    from flask_indexnow.status.csrf import origin_of

    assert origin_of(url) == origin
