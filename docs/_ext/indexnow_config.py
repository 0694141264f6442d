"""``indexnow-config-table``: the configuration reference, generated from ``config.DEFAULTS``.

The table is built at documentation build time from the mapping the extension
itself applies with ``app.config.setdefault``, so the documented keys, defaults
and meanings can never drift from the code.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx.application import Sphinx


def format_default(value: Any) -> str:
    """A default as a Python literal a reader can paste into their config."""
    return repr(value)


class ConfigTable(Directive):
    """A three-column table (key, default, meaning) with one row per ``INDEXNOW_*`` key."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        from flask_indexnow.config import DEFAULTS

        table = nodes.table(classes=["indexnow-config"])
        group = nodes.tgroup(cols=3)
        table += group
        for width in (30, 20, 50):
            group += nodes.colspec(colwidth=width)
        head = nodes.thead()
        group += head
        head += self._row([nodes.Text("key"), nodes.Text("default"), nodes.Text("meaning")])
        body = nodes.tbody()
        group += body
        for key, (default, meaning) in DEFAULTS.items():
            name = nodes.literal(key, key, ids=[nodes.make_id(key)])
            body += self._row([name, nodes.literal(format_default(default), format_default(default)),
                               nodes.Text(meaning)])
        return [table]

    @staticmethod
    def _row(cells: list[Any]) -> nodes.row:
        row = nodes.row()
        for cell in cells:
            entry = nodes.entry()
            paragraph = nodes.paragraph()
            for node in cell if isinstance(cell, list) else [cell]:
                paragraph += node
            entry += paragraph
            row += entry
        return row


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("indexnow-config-table", ConfigTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
