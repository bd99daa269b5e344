"""Detected events: the samples where a residual leaves its band, merged into episodes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["DEFAULT_HOLD", "Event", "find_events"]

DEFAULT_HOLD = 0.05  # s: samples above threshold closer than this belong to one event


@dataclass(frozen=True)
class Event:
    """One detection: from ``start`` to ``stop`` [s] (the first and last sample above a
    threshold), ``joints`` (1-based) that crossed theirs, and ``peak`` ``(n,)`` [N m], each
    joint's largest ``|r|`` over the event (``peak_time`` [s]: when the largest ratio
    ``|r| / threshold`` occurred)."""

    start: float
    stop: float
    joints: tuple[int, ...]
    peak: tuple[float, ...]
    peak_time: float

    @property
    def duration(self) -> float:
        return self.stop - self.start

    def to_json(self) -> dict:
        return {"start": self.start, "stop": self.stop, "duration": self.duration,
                "joints": list(self.joints), "peak": list(self.peak),
                "peak_time": self.peak_time}


def find_events(t: NDArray, residual: NDArray, thresholds: NDArray, *,
                hold: float = DEFAULT_HOLD) -> list[Event]:
    """The events of ``residual`` ``(N, n)`` along ``t`` ``(N,)``: samples where any joint's
    ``|r_j| > thresholds_j``, runs less than ``hold`` seconds apart merged (a contact's
    residual can dip under the threshold and cross it again)."""
    if not (np.isfinite(hold) and hold >= 0):
        raise ValueError(f"`hold` must be a finite time >= 0 s, got {hold}")
    ratio = np.abs(residual) / thresholds
    above = np.flatnonzero((ratio > 1).any(axis=1))
    if above.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(t[above]) > hold)
    firsts = np.concatenate([[0], breaks + 1])
    lasts = np.concatenate([breaks, [above.size - 1]])
    events = []
    for first, last in zip(firsts, lasts, strict=True):
        rows = slice(above[first], above[last] + 1)
        part = ratio[rows]
        crossed = np.flatnonzero((part > 1).any(axis=0))
        top = int(np.argmax(part.max(axis=1)))
        events.append(Event(start=float(t[above[first]]), stop=float(t[above[last]]),
                            joints=tuple(int(j) + 1 for j in crossed),
                            peak=tuple(float(v) for v in np.abs(residual[rows]).max(axis=0)),
                            peak_time=float(t[rows][top])))
    return events
