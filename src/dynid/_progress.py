"""Progress of a long loop, as lines for a ``progress`` callback (what the CLI prints).

A line at most every ``interval`` seconds of wall time and one at the end, each with the count,
the percentage, the elapsed time and an estimate of the time left, so that a slow step on a busy
machine shows that it moves and how long it will take.
"""

from __future__ import annotations

import time
from collections.abc import Callable


class Progress:
    """``update(done)`` after each unit of ``total``; lines go to ``say`` (None: nowhere)."""

    def __init__(self, say: Callable[[str], None] | None, what: str, total: int, *,
                 interval: float = 2.0) -> None:
        self._say, self._what, self._total, self._interval = say, what, total, interval
        self._start = self._last = time.perf_counter()

    def update(self, done: int) -> None:
        if self._say is None:
            return
        now = time.perf_counter()
        if done < self._total and now - self._last < self._interval:
            return
        self._last = now
        elapsed = now - self._start
        line = (f"{self._what}: {done}/{self._total} ({100 * done / self._total:.0f} %), "
                f"{elapsed:.0f} s")
        if 0 < done < self._total:
            line += f", about {elapsed * (self._total - done) / done:.0f} s left"
        self._say(line)
