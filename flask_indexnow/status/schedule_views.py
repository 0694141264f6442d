"""The status page's schedule buttons: pause, resume (optionally catching up), trigger.

Each is a POST refused cross-site exactly as the other buttons
(:func:`.csrf.protect`), then one call of the scheduler's controls, which are
exactly-once however many operators click; the page shows what happened
(Post/Redirect/Get). The schedule's name travels in the form, not the URL: a
name may hold any character.
"""

from __future__ import annotations

from flask import abort, request
from flask.typing import ResponseReturnValue

from ..scheduling import controls
from ..state import get_state
from . import csrf
from .views import _done

FIELD = "schedule"


def _name() -> str:
    name = request.form.get(FIELD, "")
    if not name:
        abort(400, description="the form names no schedule")
    return name


def pause() -> ResponseReturnValue:
    csrf.protect()
    name = _name()
    try:
        result = controls.pause(get_state(), name)
    except controls.UnknownScheduleError as exc:
        return _done("warning", str(exc))
    return _done("ok", f"Schedule {name} paused." if result.changed else f"Schedule {name} was already paused.")


def resume() -> ResponseReturnValue:
    csrf.protect()
    name = _name()
    catch_up = request.form.get("catch_up") == "1"
    try:
        result = controls.resume(get_state(), name, catch_up=catch_up)
    except controls.UnknownScheduleError as exc:
        return _done("warning", str(exc))
    if not result.changed:
        return _done("ok", f"Schedule {name} was not paused.")
    caught = f" Job {result.job_id} runs once for what was missed." if result.job_id is not None else ""
    return _done("ok", f"Schedule {name} resumed.{caught}", {"job_id": result.job_id})


def trigger() -> ResponseReturnValue:
    csrf.protect()
    name = _name()
    try:
        result = controls.trigger(get_state(), name)
    except controls.UnknownScheduleError as exc:
        return _done("warning", str(exc))
    if result.changed:
        return _done("ok", f"Schedule {name} triggered: job {result.job_id}.", {"job_id": result.job_id})
    return _done("ok", f"Schedule {name} was already triggered: job {result.job_id} has not started yet.",
                 {"job_id": result.job_id})
