"""Hold another worker's transaction open at a chosen statement, to see what it locks."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa


@contextmanager
def paused_after(engine: sa.Engine, marker: str, work: Callable[[], Any]) -> Iterator[list[Any]]:
    """Run ``work()`` in a thread that stops right after its first statement containing ``marker``.

    The ``with`` body runs while that thread waits with its transaction (and
    its locks) open; on leaving, the thread goes on and is joined. The list
    yielded holds ``work()``'s result once the block has ended.
    """
    inside, release = threading.Event(), threading.Event()
    result: list[Any] = []

    def pause(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if threading.current_thread() is worker and marker in statement and not inside.is_set():
            inside.set()
            release.wait(10)

    worker = threading.Thread(target=lambda: result.append(work()))
    sa.event.listen(engine, "after_cursor_execute", pause)
    try:
        worker.start()
        if not inside.wait(10):
            raise AssertionError(f"the other worker never ran a statement with {marker!r}")
        yield result
    finally:
        release.set()
        worker.join(10)
        sa.event.remove(engine, "after_cursor_execute", pause)
