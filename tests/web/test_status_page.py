"""SPEC §8: what the page shows, with hostile data and bogus parameters."""

from __future__ import annotations

import html
import re
from datetime import timedelta

import pytest

from ..conftest import RUN_PREFIX
from .conftest import PREFIX, extension, history_row, insert, queue_row


def get_page(app, **args) -> str:
    response = app.test_client().get(PREFIX + "/", query_string=args)
    assert response.status_code == 200, response.data[:500]
    assert response.mimetype == "text/html"
    return response.get_data(as_text=True)


def card(page: str, name: str) -> str:
    match = re.search(rf'id="{name}">.*?<span class="value">([^<]*)</span>', page, re.S)
    assert match, name
    return match.group(1).strip()


def history_urls(page: str) -> list[str]:
    table = page.split('id="history-table"', 1)
    if len(table) == 1:
        return []
    body = table[1].split("</table>", 1)[0]
    return [html.unescape(u) for u in re.findall(r'<td class="url"><bdi dir="ltr" title="([^"]*)"', body)]


@pytest.mark.every_backend  # the counting SQL differs by database
def test_queue_counts(status_app, clock):
    now = clock.now
    insert(status_app, "Queue",
           queue_row("https://example.com/due1", when=now - timedelta(minutes=30)),
           queue_row("https://example.com/due2", when=now - timedelta(minutes=1)),
           queue_row("https://example.com/later", when=now + timedelta(hours=2)),
           queue_row("https://example.com/busy", "processing", when=now),
           queue_row("https://example.com/bad", "failed", when=now, attempts=5, error="HTTP 403: Forbidden",
                     http_status=403))
    page = get_page(status_app)
    assert card(page, "count-pending") == "3"
    assert re.search(r'id="count-due">2<', page) and re.search(r'id="count-waiting">1<', page)
    assert card(page, "count-processing") == "1"
    assert card(page, "count-failed") == "1"
    assert card(page, "oldest-due") == "30 min"
    assert "Needs attention" in page  # a failed row is worth a look


@pytest.mark.every_backend  # the counting SQL differs by database
def test_delivered_counts_and_verdict(status_app, clock):
    now = clock.now
    insert(status_app, "History",
           *[history_row(f"https://example.com/{i}", when=now - timedelta(hours=1)) for i in range(3)],
           history_row("https://example.com/r", "retry", http_status=503, when=now - timedelta(hours=2)),
           history_row("https://example.com/old", when=now - timedelta(days=2)))
    page = get_page(status_app)
    assert card(page, "count-delivered") == "3"
    assert "1 retried · 0 failed" in page
    assert '<h2 id="verdict-title"><span class="dot" aria-hidden="true"></span>Working</h2>' in page
    assert "3 URL(s) delivered in the last 24 hours; nothing is due now." in page


def test_not_sending_says_why(make_app):
    from .conftest import allow

    app = allow(make_app(INDEXNOW_KEY="short"))
    page = get_page(app)
    assert "Not sending" in page
    assert "INDEXNOW_KEY must be 8-128 characters" in page
    assert "flask indexnow key generate" in page  # the fix, in plain words


def test_checks_with_fixes(make_app):
    from .conftest import allow

    app = allow(make_app(INDEXNOW_ENDPOINT="http://indexnow.example.com/x", INDEXNOW_ALLOW_PRIVATE_ENDPOINT=False,
                         INDEXNOW_DRY_RUN=True))
    page = get_page(app)
    assert 'class="check c-error" id="check-endpoint"' in page
    assert "must use https" in page
    assert 'class="check c-ok" id="check-key"' in page
    assert 'class="check c-warning" id="check-dry_run"' in page
    assert "Fix: Set INDEXNOW_DRY_RUN = False in production." in page
    assert 'id="check-cache"' in page and "SimpleCache" in page


HOSTILE = [
    "https://example.com/<script>alert(1)</script>",
    'https://example.com/"><img src=x onerror=alert(1)>',
    "https://example.com/it's-'quoted'",
    "https://example.com/\u202eevil.exe\u202c/txt.html",
    "https://example.com/zero\u200bwidth\u2066iso",
    "https://example.com/" + "a" * 2000,
    "https://example.com/{{ 7*7 }}/{% raw %}",
]


def test_hostile_urls_are_inert(status_app, clock):
    now = clock.now
    hostile_host = "<b>evil</b>.example.com"
    insert(status_app, "History",
           *[history_row(url, "failed", when=now, http_status=400, error=f"HTTP 400: <i>{url[-30:]}</i>")
             for url in HOSTILE],
           history_row("https://x.example.com/p", host=hostile_host, when=now))
    insert(status_app, "Queue",
           *[queue_row(url, "failed", when=now, error="<script>alert('err')</script>") for url in HOSTILE])
    page = get_page(status_app)
    for needle in ("<script>", "<img", "onerror=alert(1)>", "<b>evil", "<i>", "\u202e", "\u200b", "\u2066", "/49/"):
        assert needle not in page, needle
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;" in page
    assert "it&#39;s-&#39;quoted&#39;" in page
    assert "[U+202E]evil.exe[U+202C]" in page  # the override is shown, not obeyed
    assert "zero[U+200B]width[U+2066]iso" in page
    assert "{{ 7*7 }}" in html.unescape(page)  # shown as text, never evaluated
    long_url = HOSTILE[5]
    assert f">{long_url[:139]}…</bdi>" in page  # cut in the cell …
    assert page.count(f'title="{long_url}"') == 2  # … whole in the tooltip (history and failed rows)
    assert page.count(long_url) == 2
    assert "&lt;b&gt;evil&lt;/b&gt;.example.com" in page


def test_hostile_host_in_key_states_and_filters(status_app, clock):
    insert(status_app, "History",
           history_row("https://x.example.com/p", host="\u202ex.example.com", when=clock.now, http_status=403))
    page = get_page(status_app, host="\u202ex.example.com", q="<script>")
    assert "\u202e" not in page
    assert "[U+202E]x.example.com" in page
    assert 'value="&lt;script&gt;"' in page


BOGUS = [
    {"page": "-1"}, {"page": "0"}, {"page": "abc"}, {"page": "1e9"}, {"page": "99999999999999999999999"},
    {"page": "٣"}, {"page": "²"}, {"page": ""}, {"page": " 2 "}, {"per_page": "0"}, {"per_page": "100000"},
    {"per_page": "-5"}, {"status": "<script>"}, {"status": "success' OR 1=1 --"}, {"action": "drop"},
    {"host": "\x00"}, {"host": "a" * 10000}, {"q": "\x00"}, {"q": "%"}, {"q": "_"}, {"q": "\\"},
    {"q": "😀"}, {"q": "x" * 100000}, {"host": "😀.example.com"}, {"status": ["a", "b"]},
    # raw query strings: invalid UTF-8, a lone surrogate, NULs, repeated and empty keys
    "q=%ED%A0%80", "q=%FF%FE&host=%C0%AF", "page=%00&per_page=%00", "page=1&page=2&page=x", "=&&=x&q",
]


def test_bogus_parameters_give_a_clean_page(status_app, clock):
    insert(status_app, "History", *[history_row(f"https://example.com/{i}", when=clock.now) for i in range(3)])
    client = status_app.test_client()
    for args in BOGUS:
        response = client.get(PREFIX + "/", query_string=args)
        assert response.status_code == 200, args
        assert 'id="history-title"' in response.get_data(as_text=True)
        assert client.get(PREFIX + "/status.json", query_string=args).status_code == 200, args


def test_bogus_page_numbers_clamp(status_app, clock):
    insert(status_app, "History", *[history_row(f"https://example.com/{i}", when=clock.now) for i in range(3)])
    assert len(history_urls(get_page(status_app, page="-7"))) == 3
    page = get_page(status_app, page="99999999999")
    assert len(history_urls(page)) == 3
    assert "page 1 of 1" in page


def test_filters(status_app, clock):
    now = clock.now
    insert(status_app, "History",
           history_row("https://example.com/ok", when=now),
           history_row("https://example.com/gone", action="delete", when=now),
           history_row("https://example.com/100%_sure", "retry", http_status=503, when=now),
           history_row("https://example.com/100x-sure", "retry", http_status=503, when=now),
           history_row("https://blog.example.org/Post-One", "failed", http_status=422, when=now),
           history_row("https://staging.example.net/x", "dry_run", http_status=None, when=now))
    assert set(history_urls(get_page(status_app, status="retry"))) == {
        "https://example.com/100%_sure", "https://example.com/100x-sure"}
    assert history_urls(get_page(status_app, action="delete")) == ["https://example.com/gone"]
    assert history_urls(get_page(status_app, host="BLOG.example.org")) == ["https://blog.example.org/Post-One"]
    # LIKE wildcards are searched literally; the search ignores case
    assert history_urls(get_page(status_app, q="100%_")) == ["https://example.com/100%_sure"]
    assert history_urls(get_page(status_app, q="post-one")) == ["https://blog.example.org/Post-One"]
    assert history_urls(get_page(status_app, status="dry_run")) == ["https://staging.example.net/x"]
    assert history_urls(get_page(status_app, status="success", action="delete")) == ["https://example.com/gone"]
    page = get_page(status_app, status="failed", q="nothing-like-this")
    assert history_urls(page) == [] and "No delivery matches these filters." in page
    page = get_page(status_app, status="retry")
    assert '<option value="retry" selected>' in page


def test_pagination(status_app, clock):
    start = clock.now - timedelta(hours=5)
    insert(status_app, "History",
           *[history_row(f"https://example.com/p{i:03d}", when=start + timedelta(seconds=i)) for i in range(120)])
    first = get_page(status_app)
    assert history_urls(first)[:2] == ["https://example.com/p119", "https://example.com/p118"]  # newest first
    assert len(history_urls(first)) == 50
    assert "1–50 of 120" in first and "page 1 of 3" in first
    assert 'rel="next" href="/indexnow/?page=2#history"' in first
    third = get_page(status_app, page="3")
    assert len(history_urls(third)) == 20 and history_urls(third)[-1] == "https://example.com/p000"
    assert "101–120 of 120" in third and 'rel="next"' not in third
    beyond = get_page(status_app, page="40")
    assert history_urls(beyond) == history_urls(third)
    small = get_page(status_app, per_page="10", page="2", q="p1")
    assert history_urls(small)[0] == "https://example.com/p109"
    # filters survive paging
    assert "11–20 of 20" in small
    assert 'rel="prev" href="/indexnow/?q=p1&amp;per_page=10#history"' in small


def test_failed_rows_show_their_last_error(status_app, clock):
    insert(status_app, "Queue",
           queue_row("https://example.com/refused", "failed", when=clock.now, attempts=1, http_status=422,
                     error="HTTP 422: URLs don't belong to the host"),
           queue_row("https://example.com/ok", when=clock.now))
    page = get_page(status_app)
    failed = page.split('id="failed"', 1)[1].split("</section>", 1)[0]
    assert "https://example.com/refused" in failed
    assert "HTTP 422: URLs don&#39;t belong to the host" in failed
    assert "https://example.com/ok" not in failed


def test_key_states_per_host(status_app, clock):
    now = clock.now
    insert(status_app, "History",
           # verified after a 403 that was fixed; a later 503 says nothing about the key
           history_row("https://verified.example.com/a", when=now - timedelta(hours=3), http_status=403,
                       status="failed"),
           history_row("https://verified.example.com/a", when=now - timedelta(hours=2), http_status=200),
           history_row("https://verified.example.com/b", when=now - timedelta(hours=1), http_status=503,
                       status="retry"),
           history_row("https://pending.example.com/a", when=now, http_status=202),
           history_row("https://rejected.example.com/a", when=now - timedelta(hours=1), http_status=200),
           history_row("https://rejected.example.com/a", when=now, http_status=403, status="failed"))
    insert(status_app, "Queue", queue_row("https://new.example.com/a", when=now))
    with status_app.app_context():
        data = status_app.test_client().get(PREFIX + "/status.json").get_json()
    states = {h["host"]: h for h in data["hosts"]}
    assert {h: s["state"] for h, s in states.items()} == {
        "new.example.com": "unknown", "pending.example.com": "pending",
        "rejected.example.com": "rejected", "verified.example.com": "verified"}
    assert data["key_states"] == {"unknown": 1, "pending": 1, "verified": 1, "rejected": 1}
    assert "blocks" in states["rejected.example.com"]["hint"]
    assert states["rejected.example.com"]["key_location"] == "https://rejected.example.com/3f1c0d7e8a9b4c5d.txt"
    assert states["verified.example.com"]["hint"] is None
    page = get_page(status_app)
    hosts = page.split('id="hosts"', 1)[1].split("</section>", 1)[0]
    for host, state in (("new", "unknown"), ("pending", "pending"), ("rejected", "rejected"),
                        ("verified", "verified")):
        assert re.search(rf"{host}\.example\.com</bdi></td>\s*<td><span class=\"badge b-{state}\">", hosts), host
    assert "HTTP 403" in hosts and "HTTP 202" in hosts
    assert "The engine rejected the key for rejected.example.com" in page


def test_key_state_hints_fit_the_set_up(make_app, clock):
    from .conftest import allow

    app = allow(make_app(INDEXNOW_KEY_LOCATION="https://cdn.example.net/{key}.txt",
                         INDEXNOW_KEYS={"own.example.com": "ownkey-1234"}))
    insert(app, "History",
           history_row("https://own.example.com/a", when=clock.now, http_status=403, status="failed"),
           history_row("https://other.example.com/a", when=clock.now, http_status=202))
    data = app.test_client().get(PREFIX + "/status.json").get_json()
    states = {h["host"]: h for h in data["hosts"]}
    assert "served outside this app" in states["own.example.com"]["hint"]
    assert states["own.example.com"]["key_location"] == "https://cdn.example.net/ownkey-1234.txt"
    assert "https://cdn.example.net/3f1c0d7e8a9b4c5d.txt" in states["other.example.com"]["hint"]
    app = allow(make_app(INDEXNOW_KEY=None, INDEXNOW_KEYS={"own.example.com": "ownkey-1234"}))
    insert(app, "History", history_row("https://stray.example.com/a", when=clock.now, http_status=403,
                                       status="failed"))
    stray = app.test_client().get(PREFIX + "/status.json").get_json()["hosts"]
    stray_state = next(h for h in stray if h["host"] == "stray.example.com")
    assert stray_state["hint"].startswith("Key file missing: there is no valid key for stray.example.com")


@pytest.mark.every_backend  # stored datetimes differ by database
def test_schedules_and_jobs(status_app, clock):
    now = clock.now
    insert(status_app, "Schedule",
           {"handler": "indexnow.prune_history", "queue": "default", "kind": "interval", "expression": "1 day",
            "timezone": "UTC", "overlap": "skip", "next_run": now + timedelta(hours=3),
            "last_run": now - timedelta(hours=21), "enabled": True, "created_at": now - timedelta(days=3)},
           {"handler": "daily_report", "queue": "reports", "kind": "cron", "expression": "0 3 * * *",
            "timezone": "Europe/Moscow", "overlap": "allow", "next_run": now + timedelta(minutes=30),
            "last_run": None, "enabled": False, "created_at": now})
    insert(status_app, "Job",
           {"handler": "indexnow.prune_history", "queue": "default", "status": "completed", "attempts": 1,
            "max_attempts": 3, "available_at": now - timedelta(hours=21), "created_at": now - timedelta(hours=21),
            "finished_at": now - timedelta(hours=21)},
           {"handler": "daily_report", "queue": "reports", "status": "failed", "attempts": 3, "max_attempts": 3,
            "available_at": now - timedelta(hours=1), "created_at": now - timedelta(hours=2),
            "last_error": "KeyError: 'type'", "finished_at": now - timedelta(hours=1)})
    page = get_page(status_app)
    schedules = page.split('id="schedules"', 1)[1].split("</section>", 1)[0]
    assert "1 of 2 enabled" in schedules
    assert schedules.index("daily_report") < schedules.index("indexnow.prune_history")  # by next run
    assert "cron: 0 3 * * * (Europe/Moscow)" in schedules and "interval: 1 day" in schedules
    assert "in 30 min" in schedules and "in 3 h" in schedules and "21 h ago" in schedules
    assert '<tr class="off">' in schedules
    jobs = page.split('id="jobs"', 1)[1].split("</section>", 1)[0]
    assert "0 pending · 0 processing · 1 completed · 1 failed" in jobs
    assert "KeyError: &#39;type&#39;" in jobs and "3/3" in jobs


@pytest.mark.every_backend  # hourly buckets are SQL of each database's own
def test_chart(status_app, clock):
    now = clock.now.replace(minute=30)
    clock.set(now)
    insert(status_app, "History",
           *[history_row(f"https://example.com/s{i}", when=now - timedelta(hours=2)) for i in range(8)],
           *[history_row(f"https://example.com/r{i}", "retry", http_status=429, when=now - timedelta(hours=2))
             for i in range(2)],
           history_row("https://example.com/f", "failed", http_status=400, when=now),
           history_row("https://example.com/ancient", when=now - timedelta(days=10)))
    page = get_page(status_app)
    svg = page.split('<svg class="chart"', 1)[1].split("</svg>", 1)[0]
    assert 'aria-label="Deliveries per hour over the last 72 hours: 8 success, 2 retry, 1 failed."' in svg
    assert svg.count('class="s-success"') == 1 and svg.count('class="s-retry"') == 1
    assert svg.count('class="s-failed"') == 1
    hour = (now - timedelta(hours=2)).strftime("%Y-%m-%d %H")
    assert f"<title>{hour}:00 UTC: 8 success, 2 retry, 0 failed</title>" in svg
    assert svg.count("<g class=\"col\">") == 72
    success = re.search(r'class="s-success" x="[^"]+" y="([^"]+)" width="[^"]+" height="([^"]+)"', svg)
    retry = re.search(r'class="s-retry" x="[^"]+" y="([^"]+)" width="[^"]+" height="([^"]+)"', svg)
    assert success and retry
    assert float(success.group(2)) == pytest.approx(4 * float(retry.group(2)), rel=0.01)  # 8 vs 2
    assert float(retry.group(1)) + float(retry.group(2)) == pytest.approx(float(success.group(1)), abs=0.02)
    assert "success 8" in page and "retry 2" in page and "failed 1" in page


def test_empty_database_page(status_app):
    page = get_page(status_app)
    assert "No delivery yet." in page and "No deliveries in this period" in page
    assert "No host yet" in page and "Nothing failed." in page and "No schedule." in page


@pytest.mark.every_backend  # each driver words a missing table its own way
def test_missing_tables_give_a_clear_page(make_app):
    from .conftest import allow

    app = allow(make_app(create_tables=False, INDEXNOW_TABLE_PREFIX=f"{RUN_PREFIX}missing_tables_"))
    response = app.test_client().get(PREFIX + "/")
    assert response.status_code == 503
    assert b"flask indexnow init-db" in response.data


def test_an_app_can_override_the_template(make_app, tmp_path):
    from .conftest import allow

    app = allow(make_app())
    folder = tmp_path / "templates" / "indexnow"
    folder.mkdir(parents=True)
    (folder / "status.html").write_text("custom {{ queue.pending }} pending")
    app.template_folder = str(tmp_path / "templates")
    assert app.test_client().get(PREFIX + "/").get_data(as_text=True) == "custom 0 pending"
    assert extension(app) is not None
