"""Scoring a detection against the true contacts (a twin log's ``contacts`` metadata).

A contact is detected by the first event that starts within ``[start, stop + window]``; its
delay is that event's start minus the contact's start. An event that matches no contact is a
false alarm; the rate is per minute of log.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dynid.monitor.detect import Detection

__all__ = ["DEFAULT_WINDOW", "DetectionScore", "score_detection"]

DEFAULT_WINDOW = 0.2  # s after a contact's end in which an event still counts as its detection


@dataclass(frozen=True)
class DetectionScore:
    """``delays`` [s] per contact (None: missed), the ``missed`` contacts' indices,
    ``false_alarms`` (events matching no contact) and their rate per minute of log."""

    delays: tuple[float | None, ...]
    missed: tuple[int, ...]
    false_alarms: int
    false_alarms_per_minute: float
    minutes: float

    @property
    def max_delay(self) -> float | None:
        found = [d for d in self.delays if d is not None]
        return max(found) if found else None

    def to_json(self) -> dict:
        return {"delays": list(self.delays), "missed": list(self.missed),
                "max_delay": self.max_delay, "false_alarms": self.false_alarms,
                "false_alarms_per_minute": self.false_alarms_per_minute,
                "minutes": self.minutes}

    def summary(self) -> str:
        found = [d for d in self.delays if d is not None]
        delays = (f"delay {1e3 * min(found):.0f} to {1e3 * max(found):.0f} ms" if found
                  else "none detected")
        return (f"{len(self.delays) - len(self.missed)} of {len(self.delays)} contact(s) "
                f"detected ({delays}), {len(self.missed)} missed; {self.false_alarms} false "
                f"alarm(s), {self.false_alarms_per_minute:.2f} per minute")


def _interval(contact, k: int) -> tuple[float, float]:
    """``(start, stop)`` of a contact given as a mapping (the metadata's) or a Contact."""
    if isinstance(contact, dict):
        start, stop = contact.get("start"), contact.get("stop")
    else:
        start, stop = getattr(contact, "start", None), getattr(contact, "stop", None)
    try:
        start, stop = float(start), float(stop)
    except (TypeError, ValueError):
        raise ValueError(f"`contacts[{k}]` needs a numeric start and stop [s], got "
                         f"{contact!r:.80}") from None
    if not (np.isfinite(start) and stop > start):
        raise ValueError(f"`contacts[{k}]`: start {start} and stop {stop} must be finite with "
                         "stop after start")
    return start, stop


def score_detection(detection: Detection, contacts: Sequence, *,
                    window: float = DEFAULT_WINDOW) -> DetectionScore:
    """Delay per contact, missed contacts and false alarms per minute of ``detection``
    against the true ``contacts`` (the ``contacts`` metadata of a twin log: mappings with
    ``start`` and ``stop`` [s], or ``dynid.simulate.Contact``)."""
    if not isinstance(detection, Detection):
        raise TypeError(f"`detection` must be a Detection, got {type(detection).__name__}")
    if not (np.isfinite(window) and window >= 0):
        raise ValueError(f"`window` must be a finite time >= 0 s, got {window}")
    intervals = [_interval(c, k) for k, c in enumerate(contacts)]
    matched = [False] * len(detection.events)
    delays: list[float | None] = []
    for start, stop in intervals:
        found = None
        for index, event in enumerate(detection.events):
            if start <= event.start <= stop + window:
                found = event.start - start
                matched[index] = True
                break
        delays.append(found)
    # an event inside a contact's interval that is not its first is the same contact, not a
    # false alarm
    for index, event in enumerate(detection.events):
        if any(start <= event.start <= stop + window for start, stop in intervals):
            matched[index] = True
    false_alarms = matched.count(False)
    minutes = max(detection.duration, 1e-12) / 60.0
    return DetectionScore(delays=tuple(delays),
                          missed=tuple(k for k, d in enumerate(delays) if d is None),
                          false_alarms=false_alarms,
                          false_alarms_per_minute=false_alarms / minutes, minutes=minutes)
