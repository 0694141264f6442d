"""Issue 18 (bad input): schedule inputs that passed validation and then failed in the database.

An interval or cron expression over the column's 255 characters, a payload
with NaN or Infinity (not JSON: PostgreSQL refuses it) or a lone surrogate
(MariaDB's JSON check answers error 4025), a NUL in a handler
or queue name (PostgreSQL refuses it in text) all reached the INSERT and came
back as a raw ``DataError``. Each is now a ``ValueError`` naming what is
wrong, from the builder before anything is written, and one line from the
CLI. ``prune-history --days`` is bounded by the retention setting's own range.
"""

from __future__ import annotations

import math

import pytest
from click.testing import Result
from flask import Flask

from flask_indexnow import IndexNow
from flask_indexnow.scheduling.prune import MAX_DAYS, prune_history

from ..conftest import rows

pytestmark = pytest.mark.every_backend  # what each database refuses differs: the check must come first

LONG_CRON = " ".join([",".join(map(str, range(60))), ",".join(map(str, range(24))),
                      ",".join(map(str, range(1, 32))), "*", "*"])
LONG_INTERVAL = "1" + " " * 300 + "hour"  # 1 hour to the parser, 305 characters to the column


def run(app: Flask, *args: str) -> Result:
    return app.test_cli_runner().invoke(args=["indexnow", *args])


def one_line_error(result: Result, *fragments: str) -> None:
    assert result.exit_code == 1, result.output
    assert result.output.startswith("Error: ") and result.output.count("\n") == 1, result.output
    for fragment in fragments:
        assert fragment in result.output, result.output


BAD = [
    pytest.param(lambda s: s.schedule("report").every(LONG_INTERVAL), "longer than 255", id="long-interval"),
    pytest.param(lambda s: s.schedule("report").cron(LONG_CRON), "longer than 255", id="long-cron"),
    pytest.param(lambda s: s.schedule("report", {"ratio": math.nan}), "JSON", id="nan-payload"),
    pytest.param(lambda s: s.schedule("report", [math.inf]), "JSON", id="infinite-payload"),
    pytest.param(lambda s: s.schedule("report", {"x": -math.inf}), "JSON", id="minus-infinite-payload"),
    pytest.param(lambda s: s.schedule("report", {"a": "\ud800"}), "JSON.*lone surrogate", id="surrogate-payload"),
    pytest.param(lambda s: s.schedule("report", {"\udfff": 1}), "JSON.*lone surrogate", id="surrogate-payload-key"),
    pytest.param(lambda s: s.schedule("rep\x00ort"), "control characters", id="nul-handler"),
    pytest.param(lambda s: s.schedule("report").on_queue("mai\x00n"), "control characters", id="nul-queue"),
    pytest.param(lambda s: s.schedule("rep\nort"), "control characters", id="newline-handler"),
]


@pytest.mark.parametrize(("build", "message"), BAD)
def test_bad_schedule_input_is_a_value_error_and_writes_nothing(site: Flask, ext: IndexNow, build, message) -> None:
    with pytest.raises(ValueError, match=message):
        build(ext).every("1 hour").save()
    assert rows(site, "Schedule") == []


def test_the_limits_themselves_are_accepted(site: Flask, ext: IndexNow) -> None:
    interval = "1 hour" + " " * 249  # 255 characters before the strip, 6 after
    ext.schedule("a", {"ratio": 0.5}).every(interval).on_queue("q" * 100).save()
    cron = LONG_CRON.split(" ", 1)[0][:200].rsplit(",", 1)[0] + " * * * *"
    assert len(cron) <= 255
    ext.schedule("b" * 191).cron(cron).save()
    assert sorted(r.handler for r in rows(site, "Schedule")) == ["a", "b" * 191]


@pytest.mark.parametrize(("args", "message"), [
    (["--every", LONG_INTERVAL], "longer than 255"),
    (["--cron", LONG_CRON], "longer than 255"),
    (["--every", "1 hour", "--payload", '{"ratio": NaN}'], "JSON"),
    (["--every", "1 hour", "--payload", "[Infinity]"], "JSON"),
    (["--every", "1 hour", "--payload", '{"a": "\\ud800"}'], "lone surrogate"),
    (["--every", "1 hour", "--queue", "mai\x00n"], "control characters"),
])
def test_the_cli_says_it_in_one_line(site: Flask, args: list[str], message: str) -> None:
    one_line_error(run(site, "schedule", "add", "report", *args), message)
    one_line_error(run(site, "schedule", "add", "rep\x00ort", "--every", "1 hour"), "control characters")
    assert rows(site, "Schedule") == []


def test_prune_history_days_is_bounded_by_the_setting(site: Flask) -> None:
    result = run(site, "prune-history", "--days", "3000000")
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert f"1<=x<={MAX_DAYS}" in result.output
    assert run(site, "prune-history", "--days", str(MAX_DAYS)).exit_code == 0
    with pytest.raises(ValueError, match="days must be a whole number from 1 to 3650"):
        prune_history(site.extensions["indexnow"], 3_000_000)
