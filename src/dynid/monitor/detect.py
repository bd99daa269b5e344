"""Collision detection on a log: the momentum observer's residual, thresholds, events.

``detect_collisions(model, data, calibration=...)`` checks that the model can monitor this
robot (the same joints and robot; a model without friction is warned about), computes the residual
(``momentum_residual``), sets per-joint thresholds (``calibrate_thresholds`` on a collision-free
log, or given) and merges the samples above them into events (``find_events``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_vector
from dynid.data.dataset import Dataset
from dynid.evaluation.validate import check_compatible
from dynid.model.linear_model import LinearModel
from dynid.monitor.events import DEFAULT_HOLD, Event, find_events
from dynid.monitor.observer import DEFAULT_GAIN, momentum_residual
from dynid.monitor.thresholds import DEFAULT_MARGIN, DEFAULT_QUANTILE, calibrate_thresholds

__all__ = ["Detection", "FrictionlessModelWarning", "NoVelocityWarning", "check_monitorable",
           "detect_collisions", "with_velocities"]


class NoVelocityWarning(UserWarning):
    """A log without joint velocities: they were computed from the positions, offline."""


class FrictionlessModelWarning(UserWarning):
    """A model without friction monitors a log: right for an arm without friction (a twin of
    a description without it), else the residual holds the joints' friction torques."""


@dataclass(frozen=True)
class Detection:
    """What ``detect_collisions`` found: the residual ``(N, n)`` [N m] along ``t`` ``(N,)``,
    the ``thresholds`` ``(n,)`` [N m] and observer ``gain`` ``(n,)`` [1/s] used, the
    ``events``, the robot's name, and ``notes`` on how the log was used."""

    t: NDArray
    residual: NDArray
    thresholds: NDArray
    gain: NDArray
    events: tuple[Event, ...]
    robot: str
    notes: tuple[str, ...] = ()

    @property
    def duration(self) -> float:
        return float(self.t[-1] - self.t[0])

    def to_json(self) -> dict:
        """The figures and events (not the residual series)."""
        return {"robot": self.robot, "n_samples": int(self.t.size), "duration_s": self.duration,
                "gain": self.gain.tolist(), "thresholds": self.thresholds.tolist(),
                "peak_residual": np.abs(self.residual).max(axis=0).tolist(),
                "events": [e.to_json() for e in self.events], "notes": list(self.notes)}

    def summary(self) -> str:
        lines = [f"{self.robot}: {len(self.events)} event(s) in {self.duration:.3f} s "
                 f"({self.t.size} samples)",
                 "  thresholds [N m]: " + " ".join(f"{v:.3g}" for v in self.thresholds),
                 "  peak |r| [N m]:   " + " ".join(
                     f"{v:.3g}" for v in np.abs(self.residual).max(axis=0))]
        for e in self.events:
            lines.append(f"  t = {e.start:.3f} s for {e.duration * 1e3:.0f} ms, joints "
                         f"{', '.join(map(str, e.joints))}, peak "
                         + " ".join(f"{v:.3g}" for v in e.peak))
        return "\n".join(lines)


def check_monitorable(model: LinearModel, data: Dataset) -> None:
    """ValueError unless ``model`` can monitor ``data``: a model of the log's robot (its joint
    count, and its name when the log names one)."""
    if not isinstance(model, LinearModel):
        raise TypeError(f"`model` must be an identified dynid LinearModel, got "
                        f"{type(model).__name__}")
    if not isinstance(data, Dataset):
        raise TypeError(f"`data` must be a dynid Dataset, got {type(data).__name__}")
    check_compatible(model, data)


def with_velocities(data: Dataset) -> tuple[Dataset, str | None]:
    """``data`` as it is when it has velocities; a log without them (``dq`` identically zero
    while the positions move: what a reader fills in when the log has no velocity channel)
    gets them by ``identify``'s preprocessing (``dynid.data.prepare``: resampled when
    irregular, zero-phase low-pass, central differences, ends trimmed) of the positions —
    offline, not what an online observer could do — with a ``NoVelocityWarning`` and the
    note returned."""
    from dynid.data.preprocess import (
        DEFAULT_TRIM,
        data_cutoff,
        differentiate,
        lowpass,
        resample,
        trim,
        uniform_step,
    )

    dq = np.asarray(data.dq)
    if np.any(dq != 0) or not np.any(np.ptp(np.asarray(data.q), axis=0) > 0):
        return data, None
    try:
        uniform_step(data)
        uniform = data
    except ValueError:
        uniform = resample(data)
    cutoff = data_cutoff(uniform, from_positions=True)
    smooth = lowpass(uniform, cutoff, fields=("q",))
    ready = trim(differentiate(smooth, source="q"), DEFAULT_TRIM, DEFAULT_TRIM)
    note = (f"{data.metadata.get('source', 'the log')} has no velocities (dq is zero while q "
            f"moves): dq from the positions by identify's preprocessing (zero-phase "
            f"{cutoff:.3g} Hz low-pass chosen from the log's spectrum, central differences, "
            f"{DEFAULT_TRIM:g} s trimmed at each end; offline only, the torques unfiltered)")
    warnings.warn(note, NoVelocityWarning, stacklevel=3)
    return Dataset(t=ready.t, q=ready.q, dq=ready.dq, tau=ready.tau,
                   metadata=dict(ready.metadata), effort=ready.effort), note


def detect_collisions(model: LinearModel, data: Dataset, *,
                      thresholds: ArrayLike | str = "auto",
                      calibration: Dataset | None = None, gain: ArrayLike = DEFAULT_GAIN,
                      quantile: float = DEFAULT_QUANTILE, margin: float = DEFAULT_MARGIN,
                      hold: float = DEFAULT_HOLD) -> Detection:
    """Collisions in ``data`` seen by ``model``'s momentum observer (``gain`` K [1/s]).

    ``thresholds``: ``"auto"`` — ``calibrate_thresholds(quantile, margin)`` on the residual of
    ``calibration``, a collision-free log of the same robot — or given [N m], one value or
    one per joint. Events merge samples above threshold less than ``hold`` s apart. Refused
    (ValueError, with the reason): a log of another robot. A model without friction monitors
    with a ``FrictionlessModelWarning`` (and a note): on an arm with friction its residual
    holds the friction torques, which thresholds calibrated on a free log absorb at the cost
    of sensitivity."""
    check_monitorable(model, data)
    n = model.robot.n_joints
    notes: list[str] = []
    if not model.has_friction:
        note = ("the model has no friction: on an arm with friction the observer's residual "
                "holds the joints' friction torques (thresholds calibrated on a free log "
                "absorb them, less sensitive); identify with friction for a real arm (e.g. "
                "`--friction viscous-coulomb`)")
        warnings.warn(note, FrictionlessModelWarning, stacklevel=2)
        notes.append(note)
    data, note = with_velocities(data)
    if note:
        notes.append(note)
    if isinstance(thresholds, str):
        if thresholds != "auto":
            raise ValueError(f"`thresholds` must be 'auto' or values [N m], got "
                             f"{thresholds!r:.40}")
        if calibration is None:
            raise ValueError("`thresholds='auto'` needs `calibration`: a collision-free log "
                             "of the robot to set them from")
        check_monitorable(model, calibration)
        calibration, note = with_velocities(calibration)
        if note:
            notes.append(note)
        levels = calibrate_thresholds(momentum_residual(model, calibration, gain=gain),
                                      quantile=quantile, margin=margin)
        notes.append(f"thresholds: {margin:g} x the {quantile:g} quantile of |r| on the "
                     f"calibration log ({calibration.n_samples} samples)")
    else:
        if calibration is not None:
            raise ValueError("`calibration` sets `thresholds='auto'`; given thresholds need "
                             "none")
        levels = as_vector("thresholds", thresholds, n)
        if not (levels > 0).all():
            raise ValueError(f"`thresholds` must be > 0 [N m] per joint, got {levels}")
    residual = momentum_residual(model, data, gain=gain)
    return Detection(t=np.array(data.t), residual=residual, thresholds=np.array(levels),
                     gain=as_vector("gain", gain, n), events=tuple(find_events(
                         data.t, residual, levels, hold=hold)),
                     robot=model.robot.name, notes=tuple(notes))
