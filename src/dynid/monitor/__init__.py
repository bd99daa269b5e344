"""Collision detection with an identified model: the generalized-momentum observer (De Luca &
Mattone 2005; Haddadin et al. 2017) and what is built on it.

- ``observer``: the residual ``r`` (external joint torques, low-passed) of a log, causal,
  chunked;
- ``thresholds``: per-joint thresholds from a collision-free log's residual;
- ``events``: samples above threshold merged into events;
- ``detect``: the whole detection (checks, thresholds, residual, events) and its result;
- ``scoring``: delay per contact, missed contacts and false alarms per minute against the
  true contacts of a twin log;
- ``plots``: the detection figure (matplotlib, loaded when drawn).
"""

from dynid._lazy import lazy_exports
from dynid.monitor.detect import Detection as Detection
from dynid.monitor.detect import FrictionlessModelWarning as FrictionlessModelWarning
from dynid.monitor.detect import NoVelocityWarning as NoVelocityWarning
from dynid.monitor.detect import check_monitorable as check_monitorable
from dynid.monitor.detect import detect_collisions as detect_collisions
from dynid.monitor.detect import with_velocities as with_velocities
from dynid.monitor.events import Event as Event
from dynid.monitor.events import find_events as find_events
from dynid.monitor.observer import momentum_residual as momentum_residual
from dynid.monitor.scoring import DetectionScore as DetectionScore
from dynid.monitor.scoring import score_detection as score_detection
from dynid.monitor.thresholds import calibrate_thresholds as calibrate_thresholds

__all__ = [
    "Detection",
    "DetectionScore",
    "Event",
    "FrictionlessModelWarning",
    "NoVelocityWarning",
    "calibrate_thresholds",
    "check_monitorable",
    "detect_collisions",
    "detection_figure",
    "detection_section",
    "find_events",
    "momentum_residual",
    "score_detection",
    "with_velocities",
]

_LAZY = dict.fromkeys(("detection_figure", "detection_section"), "dynid.monitor.plots")
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
