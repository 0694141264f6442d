"""``flask indexnow …``: thin commands over the library functions, composed here.

Each module holds the commands of one concern; this package adds them to
``indexnow_group``, which ``init_app`` puts on ``app.cli``. Mistakes print
one clear line and exit 1 (:func:`.common.friendly_errors`).
"""

from __future__ import annotations

from flask.cli import AppGroup

from . import explain, keys, queue, scheduling, sitemap, verify

indexnow_group = AppGroup("indexnow", help="Flask-IndexNow: queue, deliver and inspect IndexNow submissions.")

for _command in (
    queue.process_command, queue.status_command, queue.enqueue_command, queue.retry_failed_command,
    queue.init_db_command, keys.key_group, sitemap.submit_sitemap_command, sitemap.sitemap_command, explain.explain_command,
    scheduling.work_command, scheduling.schedule_group, scheduling.prune_history_command,
    verify.verify_command,
):
    indexnow_group.add_command(_command)
