"""Configuration checks shown on the status page and by ``flask indexnow status``.

Each check answers one question a site owner asks when deliveries stop, and
carries a plain-language fix.
"""

from __future__ import annotations

import secrets
from dataclasses import asdict, dataclass
from typing import Any

from .breaker import CacheUnavailable
from .cachekind import LOCK_FIT, ONE_PROCESS, cache_backend_name
from .config import key_problem
from .delivery.endpoint import endpoints_problem
from .keys.keyfile import serves_key_file
from .keys.scope import template_directory
from .safetext import safe_text
from .state import IndexNowState
from .verify.checking import blocked_hosts

#: Seconds the cache check's probe key lives: it is read back at once, then left to expire.
PROBE_TTL = 10


@dataclass(frozen=True)
class Check:
    """One configuration check, as the status page and ``status --json`` show it.

    ``severity_if_failing`` is what a failure of this check would mean ("error"
    stops delivery; "attention" needs the owner's look, and the verdict says
    "Needs attention"; "warning" weakens a promise); ``status`` is what it means
    *now*: "pass" for a passing check whatever its severity, so a machine
    reading the document never takes a passing check for a problem.
    """

    name: str
    ok: bool
    message: str
    fix: str | None = None
    severity_if_failing: str = "error"

    @property
    def status(self) -> str:
        """"pass", or the severity of the failure: "warning", "attention" or "error"."""
        return "pass" if self.ok else self.severity_if_failing

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "status": self.status}


def cache_check(state: IndexNowState) -> Check:
    """Can the cache hold the tick lock, the pauses and the budgets for every process?

    The class name alone says what the cache could do; a networked cache
    (Redis, Memcached …) is also asked, because a cache that is down makes
    every process work on its own while the page would still say all is well.
    """
    backend = cache_backend_name(state)
    if backend in LOCK_FIT:
        problem = cache_probe_problem(state)
        if problem is None:
            return Check("cache", True, f"{backend} works as a lock across processes and machines (it answered just now).",
                         severity_if_failing="attention")
        return Check(
            "cache", False,
            f"{backend} does not answer ({problem}). Until it does, ticks fall back to per-process locks, "
            "and endpoint pauses and request budgets hold in each process on its own (nothing is lost: "
            "the database still holds the queue).",
            "Start or fix the cache server (check CACHE_REDIS_URL or the cache's host and port), and give its "
            "client a socket timeout (e.g. CACHE_OPTIONS = {'socket_timeout': 0.5, 'socket_connect_timeout': 0.5}) "
            "so an outage costs one timeout, not a hang.",
            "attention",
        )
    if backend in ONE_PROCESS:
        return Check(
            "cache", True,
            f"{backend} is fine for one process; several processes each tick on their own.",
            "For several processes or machines, use CACHE_TYPE='RedisCache'.", "warning",
        )
    return Check(
        "cache", False, f"{backend} cannot hold the tick lock or the next-due time.",
        "Use CACHE_TYPE='RedisCache' (or SimpleCache on a single process).", "warning",
    )


def cache_probe_problem(state: IndexNowState) -> str | None:
    """Write a short-lived key and read it back (two round trips); None when the cache answered right.

    The calls go through the extension's breaker, like every cache call of
    the extension: after a failure the page costs no further timeout for a
    while, and it reports what the ticks of this process see. A frozen server
    costs the client's socket timeout, once.
    """
    key = state.cache_key(f"probe:{secrets.token_hex(8)}")
    token = secrets.token_hex(8)
    try:
        state.guarded_cache.set(key, token, timeout=PROBE_TTL)
        answer = state.guarded_cache.get(key)
    except CacheUnavailable as exc:
        return safe_text(str(exc), limit=200)
    if answer != token:
        return "a value written to it could not be read back"
    return None


def allowed_hosts_check(state: IndexNowState) -> Check:
    """Is the host allow-list closed and non-empty?

    Open ('*'), a forged Host header can queue a foreign URL; empty, nothing
    can be queued at all. Both need the owner's attention, neither stops the
    delivery of what is already queued.
    """
    allowed = state.settings.allowed_hosts
    fix = ("Set INDEXNOW_ALLOWED_HOSTS to the hosts of your site (or INDEXNOW_BASE_URL, or SERVER_NAME), "
           "e.g. INDEXNOW_ALLOWED_HOSTS = ['www.example.com'].")
    if allowed is None:
        return Check("allowed_hosts", False,
                     "The host allow-list is open (INDEXNOW_ALLOWED_HOSTS = *): a URL of any public host is "
                     "queued, even one built from a forged Host header.", fix, severity_if_failing="attention")
    if not allowed:
        return Check("allowed_hosts", False,
                     "No allowed hosts are configured: every URL is refused.", fix, severity_if_failing="attention")
    shown = ", ".join(sorted(allowed)[:5]) + (" …" if len(allowed) > 5 else "")
    return Check("allowed_hosts", True, f"URLs of these hosts may be queued: {shown}.", None,
                 severity_if_failing="attention")


#: Hosts whose robots.txt the ``robots`` check reads at most (each is cached for minutes).
ROBOTS_CHECK_HOSTS = 20


def robots_check(state: IndexNowState) -> Check:
    """With INDEXNOW_VERIFY: does a host's robots.txt disallow every page (a site not launched yet)?

    Nothing of such a host is sent. The hosts looked at are those of the closed
    allow-list and those whose URLs were skipped for robots.txt in the last 24
    hours; each robots.txt is read as the pass reads it (cached per host), so the
    check passes again within minutes of the site's launch.
    """

    blocked = blocked_hosts(state, ROBOTS_CHECK_HOSTS)
    if not blocked:
        return Check("robots", True, "No checked host's robots.txt disallows every page.", None, "attention")
    shown = ", ".join(blocked[:5]) + (" …" if len(blocked) > 5 else "")
    return Check(
        "robots", False,
        f"robots.txt disallows every page for every crawler on {shown}: nothing of "
        f"{'that host' if len(blocked) == 1 else 'those hosts'} is sent (a site not launched yet?).",
        "When the site launches, let crawlers in: remove `Disallow: /` under `User-agent: *` in robots.txt.",
        "attention",
    )


def run_checks(state: IndexNowState, *, scheduler_active: bool | None = None) -> list[Check]:
    settings = state.settings
    checks: list[Check] = []
    problem = key_problem(settings.key)
    if settings.keys and settings.key is None:
        problem = None
    previous = (f" Previous keys, still served and never submitted (INDEXNOW_PREVIOUS_KEYS): "
                f"{', '.join(settings.previous_keys)}." if settings.previous_keys else "")
    checks.append(Check(
        "key", problem is None,
        ("The IndexNow key is valid." if problem is None else problem) + previous,
        None if problem is None else "Run `flask indexnow key generate` and set INDEXNOW_KEY to the key it prints.",
    ))
    if serves_key_file(state):
        served = problem is None
        checks.append(Check(
            "key_file", served,
            f"The key file is served at /{settings.key}.txt by this app." if served else "No key file can be served without a valid key.",
            None if served else "Set a valid INDEXNOW_KEY; the extension then serves /<key>.txt itself.",
        ))
    else:
        directory = template_directory(settings)
        scope = (f" Its directory is the key's scope: only URLs under {directory} of each host are accepted."
                 if directory else "")
        checks.append(Check(
            "key_file", True,
            f"The key file is expected at {settings.key_location} (served outside this app).{scope}",
            None, "warning",
        ))
    problem = endpoints_problem(settings)
    targets = ", ".join(settings.endpoints) if settings.endpoints else settings.endpoint
    checks.append(Check(
        "endpoint", problem is None,
        f"Submissions go to {targets}." if problem is None else problem,
        None if problem is None else "Set INDEXNOW_ENDPOINT to https://api.indexnow.org/indexnow or an engine's endpoint"
        + (" (or fix that URL in INDEXNOW_ENDPOINTS)." if settings.endpoints else "."),
    ))
    checks.append(allowed_hosts_check(state))
    checks.append(cache_check(state))
    if settings.verify:
        checks.append(robots_check(state))
    if scheduler_active is not None:
        checks.append(Check(
            "scheduler", scheduler_active,
            "A worker (`flask indexnow work`) has run recently." if scheduler_active
            else "No `flask indexnow work` process has been seen recently; schedules only run from one.",
            None if scheduler_active else "Run `flask indexnow work` under a process supervisor (see the README).",
            "warning",
        ))
    # dry_run and enabled are listed when they pass too: a scraper exports every check as 0/1, and a
    # series that appears only while failing could never be told from one that was not scraped.
    if settings.implied_dry_run:
        checks.append(Check("dry_run", False, f"Dry run, because {settings.implied_dry_run} and no endpoint or "
                            "INDEXNOW_DRY_RUN is set: nothing is sent.",
                            "Set INDEXNOW_DRY_RUN = False (or INDEXNOW_ENDPOINT) to send.", "warning"))
    elif settings.dry_run:
        checks.append(Check("dry_run", False, "INDEXNOW_DRY_RUN is on: nothing is sent.",
                            "Set INDEXNOW_DRY_RUN = False in production.", "warning"))
    else:
        checks.append(Check("dry_run", True, "Not a dry run: deliveries are sent.", None, "warning"))
    if not settings.enabled:
        checks.append(Check("enabled", False, "INDEXNOW_ENABLED is False: events are ignored and nothing is sent.",
                            "Set INDEXNOW_ENABLED = True.", "error"))
    else:
        checks.append(Check("enabled", True, "INDEXNOW_ENABLED is on: events are queued and sent.", None, "error"))
    return checks
