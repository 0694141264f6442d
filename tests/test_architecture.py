"""The house rules the build keeps (docs/architecture.md): every module has a layer, every part of
the state has one writer.

``lint-imports`` checks the imports of the modules its contract names; a new module that no layer
names would go unchecked, so the first test fails until it has one. The second reads the source:
a line that writes ``state.due`` must be in due.py, and so on for every part of ``IndexNowState``.
"""

from __future__ import annotations

import ast
from pathlib import Path

from .pyproject_file import pyproject

PACKAGE = Path(__file__).resolve().parents[1] / "flask_indexnow"

#: Each part of IndexNowState (and each service made once per app), and the one module that writes it.
WRITERS = {
    "tick": "tick.py",
    "due": "due.py",
    "worker": "delivery/worker.py",
    "scheduler": "scheduling/builtins.py",
    "inbox": "inbox.py",
    "watching": "watching/events.py",
    "engines": "engines.py",
    "http": "outbound.py",
    "robots_cache": "verify/verifier.py",
    "ticker": "extension.py",
}


def _layered_modules() -> list[str]:
    contract = next(c for c in pyproject()["tool"]["importlinter"]["contracts"] if c["id"] == "layers")
    return [name.strip() for layer in contract["layers"] for name in layer.split("|")]


def test_every_module_of_the_package_has_a_layer() -> None:
    modules = sorted(
        f"flask_indexnow.{path.stem if path.is_file() else path.name}"
        for path in PACKAGE.iterdir()
        if (path.suffix == ".py" and path.stem != "__init__") or (path / "__init__.py").exists()
    )
    layered = _layered_modules()
    assert len(layered) == len(set(layered)), "a module is named in two layers"
    assert sorted(set(modules) - set(layered)) == [], "modules the layers contract does not name"
    assert sorted(set(layered) - set(modules)) == [], "layers naming modules that do not exist"


def _writes(tree: ast.AST) -> list[tuple[int, str, str]]:
    """(line, part, target) for every assignment or deletion of ``state.<part>`` or ``state.<part>.<x>``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        else:
            continue
        for target in targets:
            for sub in ast.walk(target):
                if not isinstance(sub, ast.Attribute):
                    continue
                if isinstance(sub.value, ast.Name) and sub.value.id == "state" and sub.attr in WRITERS:
                    found.append((node.lineno, sub.attr, ast.unparse(target)))
                elif (isinstance(sub.value, ast.Attribute) and isinstance(sub.value.value, ast.Name)
                      and sub.value.value.id == "state" and sub.value.attr in WRITERS):
                    found.append((node.lineno, sub.value.attr, ast.unparse(target)))
    return found


def test_each_part_of_the_state_is_written_by_its_own_module_only() -> None:
    strays = []
    seen = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module == "state.py":  # where the parts are made
            continue
        for line, part, target in _writes(ast.parse(path.read_text(encoding="utf-8"))):
            seen.add(part)
            if WRITERS[part] != module:
                strays.append(f"{module}:{line} writes {target} (owned by {WRITERS[part]})")
    assert strays == []
    # The scan sees the writers themselves: a rename that hid every write from it would fail here.
    assert seen >= {"tick", "due", "worker", "scheduler", "inbox", "http", "robots_cache", "ticker"}
