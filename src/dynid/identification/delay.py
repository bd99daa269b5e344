"""The delay between a log's torque channel and its position channel, estimated and undone.

Real arms log torques and positions through different paths (a torque sensor's filter, a
drive's current loop, a bus), and a sampled closed loop holds each torque for a period: the
torques arrive a fraction of a period to several milliseconds after the positions they belong
to. A lag ``d`` looks to a fit like ``tau(t) - d dtau/dt``; ``dtau/dt`` carries the gravity
stiffness times the velocity, so a fit reads the lag as viscous friction (0.5 ms on a Panda
twin's shoulder: viscous 34 % low) and as inertia.

``estimate_delay`` finds ``d`` as the shift that the model explains best: the least-squares
residual of the linear model (rigid body, friction, rotor inertias) with each torque ``tau(t)``
paired with the states of ``t - d``, over ``[-max_delay, max_delay]``: a coarse grid of
``GRID`` shifts, then golden-section search around the best, on at most ``MAX_SAMPLES``
samples of each log (the residual is a sum over samples: every k-th sample estimates it as
well, for a fraction of the time). The lag found is compensated whether or not it is
significant (an F test of one added parameter at p < 0.001, ``SIGNIFICANCE`` residual
variances, is reported): setting a weakly measured lag to 0 biases the viscous terms by more
than its error, while the error of the lag found is carried into the standard deviations
(``with_delay_std``: over 30 draws of a 3-joint twin, the 95 % intervals cover the truth in
87 % of cases behind a significance gate with the lag taken as known, in 94 % as here).
``shift_torques`` undoes it: each torque paired with the states ``d`` before it (the states
interpolated: they are smooth; interpolated raw torques would have their noise averaged, and a
half-sample shift would look better than it is), the samples the shift runs out of dropped.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from dynid.data.dataset import Dataset
from dynid.identification._logs import as_logs, deviation_names
from dynid.identification._stream import fold_logs
from dynid.model.linear_model import LinearModel

__all__ = ["GRID", "MAX_DELAY", "MAX_SAMPLES", "SIGNIFICANCE", "Delay", "compensated",
           "estimate_delay", "shift_torques", "with_delay_std"]

MAX_DELAY = 0.02  # s: a torque channel later than this is a logging fault, not a lag
GRID = 9  # coarse shifts over [-max, max] (5 ms apart at 20 ms)
MAX_SAMPLES = 5_000  # per log, for the search
SIGNIFICANCE = 10.83  # chi-square, one degree of freedom, p = 0.001
_TOLERANCE = 2e-5  # s: golden-section stops within 20 us


@dataclasses.dataclass(frozen=True)
class Delay:
    """``seconds``: the torque channel's lag behind the positions (0: none significant);
    ``found``: the best shift before the significance test; ``gain``: the drop of the
    residual sum of squares it gives, in residual variances (compared to ``SIGNIFICANCE``);
    ``std``: the standard deviation of ``found`` (from the residual's curvature:
    ``2 sigma^2 / RSS''``); ``sensitivity``: ``d(base parameters)/d(delay)`` of the least-squares
    fit ``(r,)``, what an error of the delay moves the estimate by (see ``with_delay_std``)."""

    seconds: float
    found: float
    gain: float
    std: float = 0.0
    sensitivity: tuple[float, ...] = ()
    names: tuple[str, ...] = ()

    @property
    def significant(self) -> bool:
        """Whether the lag explains more than ``SIGNIFICANCE`` residual variances."""
        return self.gain > SIGNIFICANCE

    def note(self) -> str:
        if not self.seconds:
            return (f"no torque delay measured (the best shift, {1e3 * self.found:+.2f} ms, "
                    "is at the edge of the search or the residual is flat there)")
        return (f"torques {1e3 * self.seconds:+.2f} ms (std {1e3 * self.std:.2g}) behind the "
                f"positions, estimated and compensated (it explains {self.gain:.0f} residual "
                f"variances: {'significant' if self.significant else 'not significant'}; its "
                "uncertainty is in the standard deviations)")


def shift_torques(data: Dataset, delay: float) -> Dataset:
    """``data`` realigned for a torque channel that lags the positions by ``delay`` seconds:
    each torque ``tau(t)`` paired with the states of ``t - delay`` (``q``, ``dq``, ``ddq``
    linearly interpolated: they are smooth, filtered signals, while interpolating the raw
    torques would average their noise and favour half-sample shifts), the samples the shift
    runs out of dropped."""
    if not math.isfinite(delay):
        raise ValueError(f"`delay` must be finite seconds, got {delay}")
    if delay == 0:
        return data
    shifted = _shifted(data, delay, 1)
    steps = [*shifted.metadata.get("preprocessing", []),
             f"torques paired with the states {1e3 * delay:+.3g} ms before them (a lagging "
             "torque channel realigned)"]
    shifted.metadata.update({"preprocessing": steps, "torque_delay_s": float(delay)})
    return shifted


def _shifted(data: Dataset, delay: float, every: int) -> Dataset:
    """Every ``every``-th torque of ``data`` (the same samples whatever ``delay``: a search
    compares like with like) with the states of ``delay`` before it."""
    t = data.t
    rows = np.arange(0, data.n_samples, every)
    rows = rows[(t[rows] - delay >= t[0]) & (t[rows] - delay <= t[-1])]
    if rows.size < 2:
        raise ValueError(f"`delay` {delay} s is longer than the log ({data.duration} s)")
    kept = data.select(rows)
    states = {name: np.column_stack([np.interp(kept.t - delay, t, values[:, j])
                                     for j in range(data.n_joints)])
              for name in ("q", "dq", "ddq")
              if (values := getattr(data, name)) is not None}
    return dataclasses.replace(kept, **states, M=None, g=None,
                               metadata=dict(kept.metadata))


def estimate_delay(template: LinearModel, data: Dataset | Sequence[Dataset], *,
                   max_delay: float = MAX_DELAY) -> Delay:
    """The torque channel's lag behind the positions in ``data`` (one log or several sharing
    it), for the model structure of ``template`` (a zero-coefficient ``LinearModel``: its base
    parameters and columns), by the rule of the module docstring."""
    if not (math.isfinite(max_delay) and max_delay > 0):
        raise ValueError(f"`max_delay` must be > 0 s, got {max_delay}")
    logs = as_logs(data, effort=None)
    step = min(float(np.median(np.diff(log.t))) for log in logs)
    max_delay = min(max_delay, 0.25 * min(log.duration for log in logs))
    n_deviations = len(deviation_names(template, logs, "per-log"))

    every = [max(1, math.ceil(log.n_samples / MAX_SAMPLES)) for log in logs]

    def residual(delay: float) -> tuple[float, int]:
        shifted = [_shifted(log, delay, k) for log, k in zip(logs, every, strict=True)]
        factor = fold_logs(template, shifted, n_deviations).stacked()
        rows = sum(log.n_samples for log in shifted) * template.robot.n_joints
        return float(factor[-1, -1]) ** 2, rows

    def fit(delay: float) -> tuple[float, np.ndarray]:
        shifted = [_shifted(log, delay, k) for log, k in zip(logs, every, strict=True)]
        factor = fold_logs(template, shifted, n_deviations).stacked()
        solution = np.linalg.lstsq(factor[:-1, :-1], factor[:-1, -1], rcond=None)[0]
        return float(factor[-1, -1]) ** 2, solution[:template.base.rank]

    grid = np.linspace(-max_delay, max_delay, GRID)
    values = [residual(float(d))[0] for d in grid]
    best = int(np.argmin(values))
    low, high = grid[max(best - 1, 0)], grid[min(best + 1, GRID - 1)]
    found = _golden(lambda d: residual(d)[0], float(low), float(high),
                    tolerance=max(_TOLERANCE, 0.05 * step))
    at_found, rows = residual(found)
    at_zero, _ = residual(0.0)
    variance = at_found / max(rows - template.base.rank - n_deviations, 1)
    gain = (at_zero - at_found) / variance if variance > 0 else 0.0
    # the curvature of the residual and the fit's slope, over half a sample on either side
    h = max(0.5 * step, _TOLERANCE)
    (below, x_below), (above, x_above) = fit(found - h), fit(found + h)
    curvature = (below - 2 * at_found + above) / h**2
    std = math.sqrt(2 * variance / curvature) if curvature > 0 else math.inf
    measured = math.isfinite(std) and abs(found) < 0.99 * max_delay
    return Delay(found if measured else 0.0, found, float(gain), std,
                 tuple(((x_above - x_below) / (2 * h)).tolist()),
                 tuple(template.base.base_names))


def compensated(template: LinearModel, logs: Sequence[Dataset], *,
                max_delay: float = MAX_DELAY) -> tuple[list[Dataset], Delay]:
    """``logs`` realigned for their torque channel's lag (``estimate_delay`` with
    ``template``'s structure, ``shift_torques``), the lag's note in their preprocessing
    steps, and the ``Delay`` (for ``with_delay_std``): what ``dynid identify`` does by
    default."""
    delay = estimate_delay(template, logs, max_delay=max_delay)
    out = []
    for log in logs:
        shifted = shift_torques(log, delay.seconds)
        if shifted is log:
            shifted = dataclasses.replace(log, metadata=dict(log.metadata))
        steps = log.metadata.get("preprocessing", [])
        shifted.metadata["preprocessing"] = [*steps, delay.note()]
        out.append(shifted)
    return out, delay


def with_delay_std(model: LinearModel, delay: Delay) -> LinearModel:
    """``model`` with the delay's uncertainty in its standard deviations:
    ``std^2 + (sensitivity * delay.std)^2`` per base parameter (the lag is a parameter of the
    fit too; estimated from the data it moves the estimate by its own error, which a formula
    that takes the lag as known leaves out: on a twin, the 95 % intervals then cover the
    truth in 87 % of draws, in 95 % with it). A model of another structure than the delay
    was estimated with, or a lag that could not be measured (``std`` infinite), is returned
    as it is."""
    if (tuple(model.base.base_names) != delay.names or not math.isfinite(delay.std)
            or not delay.sensitivity):
        return model
    extra = (np.asarray(delay.sensitivity) * delay.std) ** 2
    report = {**model.report, "torque_delay_std_s": delay.std}
    return dataclasses.replace(model, std=np.sqrt(model.std**2 + extra), report=report)


def _golden(function, low: float, high: float, *, tolerance: float) -> float:
    """The minimum of a unimodal ``function`` on ``[low, high]`` by golden-section search."""
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = low, high
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = function(c), function(d)
    while b - a > tolerance:
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = function(c)
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = function(d)
    return 0.5 * (a + b)
