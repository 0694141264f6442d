"""Measuring side by side: interleaved runs, medians, the machine, the result table.

Every figure is a ratio of two variants measured in the same run, one after
the other and in alternating order (A B, B A, A B …), so that a machine that
slows down or speeds up during the run weighs on both alike. Each variant
returns the seconds of its timed part only; its set-up is not counted.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import sqlalchemy as sa


@dataclass
class Figure:
    """One line of the result table."""

    number: int
    name: str
    ours: str
    floor: str
    ratio: float | None
    goal: str
    met: bool | None
    note: str = ""


def interleave(variants: dict[str, Callable[[], float]], rounds: int) -> dict[str, list[float]]:
    """Run every variant once per round, reversing the order each round; collect the timings."""
    names = list(variants)
    timings: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(rounds):
        for name in names if round_ % 2 == 0 else reversed(names):
            timings[name].append(variants[name]())
    return timings


def median(values: list[float]) -> float:
    return statistics.median(values)


def side_by_side(first: Callable[[], float], second: Callable[[], float], rounds: int) -> tuple[float, float]:
    """The median seconds of ``first`` and of ``second``, run interleaved for ``rounds`` rounds."""
    timings = interleave({"first": first, "second": second}, rounds)
    return median(timings["first"]), median(timings["second"])


def backend_name(database_url: str) -> str:
    """"postgresql", "sqlite" …: how a figure names the database it ran on."""
    return sa.engine.make_url(database_url).get_backend_name()


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms" if seconds < 1 else f"{seconds:.2f} s"


def machine() -> list[tuple[str, str]]:
    """What the figures were measured on."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    ram = "?"
    try:
        with open("/proc/meminfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("MemTotal"):
                    ram = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                    break
    except OSError:
        pass
    load = ""
    if hasattr(os, "getloadavg"):
        load = " (load average at start: " + ", ".join(f"{v:.2f}" for v in os.getloadavg()) + ")"
    return [
        ("CPU", f"{cpu}, {os.cpu_count()} logical cores{load}"),
        ("RAM", ram),
        ("OS", platform.platform()),
        ("Python", sys.version.split()[0]),
    ]


def table(figures: list[Figure]) -> str:
    """The results as a Markdown table."""
    header = ("#", "figure", "ours", "floor / baseline", "ratio", "goal", "met")
    lines = [header]
    for f in figures:
        met = "-" if f.met is None else ("yes" if f.met else "NO")
        ratio = "-" if f.ratio is None else f"{f.ratio:.3f}"
        lines.append((str(f.number), f.name, f.ours, f.floor, ratio, f.goal, met))
    widths = [max(len(row[i]) for row in lines) for i in range(len(header))]

    def render(row: tuple[str, ...]) -> str:
        return "| " + " | ".join(cell.ljust(width) for cell, width in zip(row, widths)) + " |"

    out = [render(lines[0]), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out.extend(render(row) for row in lines[1:])
    notes = list(dict.fromkeys(f"{f.number}. {f.note}" for f in figures if f.note))
    if notes:
        out.append("")
        out.extend(notes)
    return "\n".join(out)


_S = TypeVar("_S", bound="ServerProcess")


class ServerProcess:
    """``python -m <module> …`` that prints ``PORT n`` once it listens; stopped on exit."""

    def __init__(self, module: str, *args: str) -> None:
        import subprocess

        self.process = subprocess.Popen([sys.executable, "-m", module, *args], stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("PORT "):
            self.process.kill()
            raise RuntimeError(f"{module} did not start")
        self.port = int(line.split()[1])

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self: _S) -> _S:
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        self.process.wait(10)
