"""Trajectory families, each sampled at any times with q, dq, ddq analytic.

- ``FourierTrajectory``: position Fourier series with offset (Gilbert et al. 2024, eq. 15;
  Szabó 2021, eq. 22), per joint i::

      q_i(t)   = q0_i + sum_l  a_il / (w l) sin(w l t) - b_il / (w l) cos(w l t)
      dq_i(t)  =        sum_l  a_il cos(w l t) + b_il sin(w l t)
      ddq_i(t) =        sum_l -a_il w l sin(w l t) + b_il w l cos(w l t)

  periodic with period ``2 pi / w`` (``w = 0.15 pi`` rad/s in the Panda papers);
  ``rest_at_ends`` makes velocity and acceleration zero at t = 0 and at every period.
- ``RampedVelocityFourier``: the joint-velocity Fourier series above, started at a phase
  ``t_shift`` and multiplied by a cosine ramp in and out of ``ramp`` seconds over ``duration``:
  the kind of command sent to the real Panda of Gaz et al. (``commanded_traj1``).
- ``SinusoidalVelocity``: ``dq_i = A_i sin(2 pi t / T_i)`` (Gaz et al. 2019, eq. 31, Table I).
- pose sets for static identification: ``random_poses``, ``load_poses``.

Every family has ``sample(t) -> (q, dq, ddq)`` with ``t`` (N,) strictly increasing, arrays (N, n).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._files import atomic_write_all
from dynid._reading import dump_yaml, load_yaml, parse_numbers, read_csv, read_text
from dynid._validation import as_float_array, as_vector, frozen_copy, strictly_increasing
from dynid.data.dataset import sample_times
from dynid.data.io import _columns
from dynid.robot import Robot

__all__ = [
    "FourierTrajectory",
    "RampedVelocityFourier",
    "SampledTrajectory",
    "SinusoidalVelocity",
    "at_rest",
    "gaz2019_table1",
    "load_poses",
    "load_trajectory",
    "random_poses",
    "rest_at_ends",
    "save_trajectory",
    "trajectory_from_dict",
]


def _times(t: ArrayLike) -> NDArray:
    t = as_float_array("t", t)
    strictly_increasing("t", t)
    return t


def _coefficients(a: ArrayLike, b: ArrayLike) -> tuple[NDArray, NDArray]:
    a, b = as_float_array("a", a), as_float_array("b", b)
    if a.ndim != 2 or a.shape != b.shape:
        raise ValueError(f"`a` and `b` must both be (n, L), got {a.shape} and {b.shape}")
    return frozen_copy(a), frozen_copy(b)


@dataclass(frozen=True)
class FourierTrajectory:
    """Fourier coefficients ``a``, ``b`` (n, L) [rad/s], offset ``q0`` (n,), ``omega_f`` [rad/s]."""

    a: NDArray
    b: NDArray
    q0: NDArray
    omega_f: float

    def __post_init__(self) -> None:
        a, b = _coefficients(self.a, self.b)
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "q0", frozen_copy(as_vector("q0", self.q0, a.shape[0])))
        if not np.isfinite(self.omega_f) or self.omega_f <= 0:
            raise ValueError(f"`omega_f` must be > 0, got {self.omega_f}")

    @property
    def period(self) -> float:
        return 2 * np.pi / self.omega_f

    @property
    def n_joints(self) -> int:
        return self.q0.size

    @property
    def harmonics(self) -> int:
        return self.a.shape[1]

    def sample(self, t: ArrayLike) -> tuple[NDArray, NDArray, NDArray]:
        """``q, dq, ddq`` ``(N, n)`` at times ``t`` ``(N,)`` [s]."""
        t = _times(t)
        w = self.omega_f * np.arange(1, self.harmonics + 1)  # (L,)
        s, c = np.sin(t[:, None] * w), np.cos(t[:, None] * w)  # (N, L)
        q = self.q0 + s @ (self.a / w).T - c @ (self.b / w).T
        dq = c @ self.a.T + s @ self.b.T
        ddq = -s @ (self.a * w).T + c @ (self.b * w).T
        return q, dq, ddq

    def to_dict(self) -> dict:
        return {"family": "fourier", "omega_f": self.omega_f, "q0": self.q0.tolist(),
                "a": self.a.tolist(), "b": self.b.tolist()}


def rest_at_ends(trajectory: FourierTrajectory) -> FourierTrajectory:
    """The same series with its top harmonic adjusted so that ``dq = ddq = 0`` at t = 0 (and,
    the series being periodic, at the end of every period): ``sum_l a_l = 0`` and
    ``sum_l l b_l = 0`` per joint. The start position moves accordingly."""
    a, b = np.array(trajectory.a), np.array(trajectory.b)
    top = trajectory.harmonics
    a[:, -1] -= a.sum(axis=1)
    b[:, -1] -= (b * np.arange(1, top + 1)).sum(axis=1) / top
    return FourierTrajectory(a, b, trajectory.q0, trajectory.omega_f)


def _integral_cos(w: NDArray, phase: NDArray, t0: NDArray, t1: NDArray) -> NDArray:
    """``int_t0^t1 cos(w s + phase) ds``, elementwise, accurate for any w including w -> 0:
    ``(t1 - t0) cos(w (t0 + t1) / 2 + phase) sinc(w (t1 - t0) / 2)`` (no 1 / w cancellation)."""
    span = t1 - t0
    return span * np.cos(w * (t0 + t1) / 2 + phase) * np.sinc(w * span / (2 * np.pi))


def _ramped(w: NDArray, phase: NDArray, t0: float, t1: NDArray, rate: float,
            ramp_phase: float) -> NDArray:
    """``int_t0^t1 (1 - cos(rate s + ramp_phase)) / 2 * cos(w s + phase) ds``: with
    cos(u) cos(v) = [cos(u + v) + cos(u - v)] / 2, three plain cosine integrals."""
    mixed = 0.5 * (_integral_cos(w + rate, phase + ramp_phase, t0, t1)
                   + _integral_cos(w - rate, phase - ramp_phase, t0, t1))
    return 0.5 * _integral_cos(w, phase, t0, t1) - 0.5 * mixed


@dataclass(frozen=True)
class RampedVelocityFourier:
    """``dq(t) = r(t) f(t - t_shift)``, ``f`` the velocity series of ``FourierTrajectory``,
    ``r`` a cosine ramp: ``(1 - cos(pi t / ramp)) / 2`` over the first and last ``ramp`` s of
    ``duration``, 1 between; ``q(0) = q0``. Zero velocity and acceleration at both ends."""

    a: NDArray
    b: NDArray
    q0: NDArray
    omega_f: float
    duration: float
    ramp: float = 0.5
    t_shift: float = 0.0

    def __post_init__(self) -> None:
        a, b = _coefficients(self.a, self.b)
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "q0", frozen_copy(as_vector("q0", self.q0, a.shape[0])))
        if not self.omega_f > 0 or not self.duration > 0:
            raise ValueError(f"`omega_f` and `duration` must be > 0, got {self.omega_f}, "
                             f"{self.duration}")
        if not 0 < self.ramp <= self.duration / 2:
            raise ValueError(f"`ramp` must be in (0, duration / 2], got {self.ramp}")

    @property
    def n_joints(self) -> int:
        return self.q0.size

    def _terms(self):
        """The series as cosines: amplitudes (n, 2L), frequencies (2L,), phases (2L,)."""
        w = self.omega_f * np.arange(1, self.a.shape[1] + 1)
        # a cos(w (t - ts)) + b sin(w (t - ts)) = a cos(w t - w ts) + b cos(w t - w ts - pi/2)
        amplitudes = np.concatenate([self.a, self.b], axis=1)
        frequencies = np.concatenate([w, w])
        phases = np.concatenate([-w * self.t_shift, -w * self.t_shift - np.pi / 2])
        return amplitudes, frequencies, phases

    def sample(self, t: ArrayLike) -> tuple[NDArray, NDArray, NDArray]:
        t = _times(t)
        if t[0] < 0 or t[-1] > self.duration:
            raise ValueError(f"`t` must lie in [0, {self.duration}] s, got [{t[0]}, {t[-1]}]")
        amplitudes, w, phase = self._terms()
        arg = t[:, None] * w + phase
        f = np.cos(arg) @ amplitudes.T
        df = -(np.sin(arg) * w) @ amplitudes.T
        p = np.pi / self.ramp
        end_in, start_out = self.ramp, self.duration - self.ramp
        rising, falling = t < end_in, t > start_out
        r = np.where(rising, 0.5 * (1 - np.cos(p * t)), 1.0)
        r = np.where(falling, 0.5 * (1 - np.cos(p * (self.duration - t))), r)
        dr = np.where(rising, 0.5 * p * np.sin(p * t), 0.0)
        dr = np.where(falling, -0.5 * p * np.sin(p * (self.duration - t)), dr)
        dq = r[:, None] * f
        ddq = dr[:, None] * f + r[:, None] * df
        # q = q0 + int_0^t r f, piece by piece (rising ramp, plateau, falling ramp); each piece
        # is a sum of cosines integrated exactly, for all samples at once
        column = t[:, None]
        rise = _ramped(w, phase, 0.0, np.minimum(column, end_in), p, 0.0)
        plateau = _integral_cos(w, phase, end_in, np.clip(column, end_in, start_out))
        fall = _ramped(w, phase, start_out, np.maximum(column, start_out), -p,
                       p * self.duration)
        q = self.q0 + (rise + plateau + fall) @ amplitudes.T
        return q, dq, ddq

    def to_dict(self) -> dict:
        return {"family": "ramped-velocity-fourier", "omega_f": self.omega_f,
                "duration": self.duration, "ramp": self.ramp, "t_shift": self.t_shift,
                "q0": self.q0.tolist(), "a": self.a.tolist(), "b": self.b.tolist()}


@dataclass(frozen=True)
class SinusoidalVelocity:
    """``dq_i = A_i sin(2 pi t / T_i)`` from ``q0`` (Gaz 2019, eq. 31): amplitudes ``A``
    [rad/s], periods ``T`` [s]."""

    amplitude: NDArray
    period: NDArray
    q0: NDArray

    def __post_init__(self) -> None:
        n = np.atleast_1d(np.asarray(self.amplitude)).size
        object.__setattr__(self, "amplitude", frozen_copy(as_vector("amplitude",
                                                                    self.amplitude, n)))
        period = as_vector("period", self.period, n)
        if (period <= 0).any():
            raise ValueError(f"`period` must be > 0, got {period}")
        object.__setattr__(self, "period", frozen_copy(period))
        object.__setattr__(self, "q0", frozen_copy(as_vector("q0", self.q0, n)))

    @property
    def n_joints(self) -> int:
        return self.q0.size

    def sample(self, t: ArrayLike) -> tuple[NDArray, NDArray, NDArray]:
        t = _times(t)
        w = 2 * np.pi / self.period
        phase = t[:, None] * w
        q = self.q0 + self.amplitude / w * (1 - np.cos(phase))
        return q, self.amplitude * np.sin(phase), self.amplitude * w * np.cos(phase)

    def to_dict(self) -> dict:
        return {"family": "sinusoidal-velocity", "amplitude": self.amplitude.tolist(),
                "period": self.period.tolist(), "q0": self.q0.tolist()}


def gaz2019_table1(q0: ArrayLike) -> SinusoidalVelocity:
    """The Panda validation motion of Gaz et al. 2019, Table I (amplitudes, periods)."""
    return SinusoidalVelocity(amplitude=[2.21, -2.21, 1.2, -2.1, -2.3, 2.1, -2.5],
                              period=[3.68, 2.04, 2.98, 1.75, 4.43, 2.749, 1.06], q0=q0)


def random_poses(robot: Robot, n_poses: int, *, margin: float = 0.0, seed: int = 0) -> NDArray:
    """``(n_poses, n)`` poses uniform within the position limits shrunk by ``margin`` x range."""
    limits = robot.limits
    if not (np.isfinite(limits.lower).all() and np.isfinite(limits.upper).all()):
        raise ValueError(f"`robot`: {robot.name!r} needs finite position limits for random poses")
    if n_poses < 1 or not 0 <= margin < 0.5:
        raise ValueError(f"`n_poses` must be >= 1 and `margin` in [0, 0.5), got {n_poses}, "
                         f"{margin}")
    span = limits.upper - limits.lower
    rng = np.random.default_rng(seed)
    return rng.uniform(limits.lower + margin * span, limits.upper - margin * span,
                       size=(n_poses, robot.n_joints))


def load_poses(path: str | Path, n_joints: int | None = None) -> NDArray:
    """Poses from a text file, one per row, whitespace or comma separated (e.g.
    ``GOOD_CONFS_1010.txt`` of Gaz et al.)."""
    path = Path(path)
    poses = parse_numbers(read_text(path, what="pose file"), path.name)
    if n_joints is not None and poses.shape[1] != n_joints:
        raise ValueError(f"`path`: {path.name} has {poses.shape[1]} columns, expected {n_joints}")
    return poses


@dataclass(frozen=True)
class SampledTrajectory:
    """A trajectory given as samples ``t`` (N,), ``q``, ``dq``, ``ddq`` (N, n): exact at its
    samples, piecewise-cubic (Hermite, from q and dq; ddq linear) between them."""

    t: NDArray
    q: NDArray
    dq: NDArray
    ddq: NDArray

    def __post_init__(self) -> None:
        t = _times(self.t)
        object.__setattr__(self, "t", frozen_copy(t))
        for name in ("q", "dq", "ddq"):
            value = as_float_array(name, getattr(self, name))
            if value.ndim != 2 or value.shape[0] != t.size:
                raise ValueError(f"`{name}` must have shape ({t.size}, n), got {value.shape}")
            object.__setattr__(self, name, frozen_copy(value))

    @property
    def n_joints(self) -> int:
        return self.q.shape[1]

    @property
    def duration(self) -> float:
        return float(self.t[-1] - self.t[0])

    def sample(self, t: ArrayLike) -> tuple[NDArray, NDArray, NDArray]:
        import scipy.interpolate

        t = _times(t)
        if t[0] < self.t[0] - 1e-12 or t[-1] > self.t[-1] + 1e-12:
            raise ValueError(f"`t` must lie in [{self.t[0]}, {self.t[-1]}] s")
        spline = scipy.interpolate.CubicHermiteSpline(self.t, self.q, self.dq, axis=0)
        ddq = np.column_stack([np.interp(t, self.t, self.ddq[:, j])
                               for j in range(self.n_joints)])
        return spline(t), spline(t, 1), ddq


_FAMILIES = {"fourier": FourierTrajectory, "ramped-velocity-fourier": RampedVelocityFourier,
             "sinusoidal-velocity": SinusoidalVelocity}


def trajectory_from_dict(spec: dict):
    """A trajectory family from its ``to_dict()`` form."""
    if not isinstance(spec, dict):
        raise ValueError(f"a trajectory must be a mapping with a `family` key, got "
                         f"{type(spec).__name__}")
    family = spec.get("family")
    if not isinstance(family, str) or family not in _FAMILIES:
        raise ValueError(f"`family` must be one of {sorted(_FAMILIES)} (text), got "
                         f"{family!r:.80}")
    fields = {k: v for k, v in spec.items() if k != "family"}
    parameters = inspect.signature(_FAMILIES[family]).parameters
    missing = [name for name, p in parameters.items()
               if p.default is inspect.Parameter.empty and name not in fields]
    unknown = [name for name in fields if name not in parameters]
    if missing or unknown:
        raise ValueError(f"trajectory {family!r}: "
                         + "; ".join(([f"missing {', '.join(map(repr, missing))} (a truncated "
                                       "file?)"] if missing else [])
                                     + ([f"unknown {', '.join(map(repr, unknown))}"]
                                        if unknown else [])))
    try:
        return _FAMILIES[family](**fields)
    except TypeError as error:
        raise ValueError(f"trajectory {family!r}: {error}") from None


def at_rest(dq: ArrayLike, ddq: ArrayLike, *, rtol: float = 1e-9) -> NDArray:
    """Per sample of a series ``dq``, ``ddq`` ``(N, n)``: every joint's velocity and
    acceleration zero, to ``rtol`` times the series' own peaks (round-off of an analytic zero
    counts as zero; a series that never moves is at rest everywhere)."""
    dq, ddq = as_float_array("dq", dq), as_float_array("ddq", ddq)
    still = [np.abs(x) <= rtol * np.abs(x).max() for x in (dq, ddq)]
    return (still[0] & still[1]).all(axis=-1)


def save_trajectory(path: str | Path, trajectory, *, duration: float, rate: float,
                    extra: dict | None = None, allow_moving_ends: bool = False) -> Path:
    """Write the time series ``t, q1..qn, dq1..dqn, ddq1..ddqn`` (CSV, ready to send to a robot)
    and, beside it, ``<stem>.yaml`` with the family's parameters (and ``extra`` figures), where
    the arm must be before it starts (``start: {q, dq, ddq}``) and whether the series starts
    and ends at rest (``at_rest``).

    A robot cannot jump to a velocity: a series that does not start and end at rest
    (``dq = ddq = 0`` at t = 0 and at its last written sample) is refused unless
    ``allow_moving_ends=True`` (then ``at_rest: false``). At rest to round-off, the ends are
    written as exact zeros. Optimised excitations rest by default
    (``optimize_excitation(rest=True)``, ``rest_at_ends``); a rested Fourier series is at rest
    at whole periods only.
    """
    path = Path(path)
    if path.suffix.lower() != ".csv":
        raise ValueError(f"`path` must end in .csv, got {path.name!r}")
    t = sample_times(duration, rate)
    q, dq, ddq = trajectory.sample(t)
    resting = at_rest(dq, ddq)
    ends = {"start": (0, resting[0]), "end": (-1, resting[-1])}
    moving = [name for name, (_, still) in ends.items() if not still]
    if moving and not allow_moving_ends:
        k, _ = ends[moving[0]]
        short = ("" if "end" not in moving or np.isclose(t[-1], duration, rtol=1e-12, atol=0)
                 else f"; the last sample at {rate:g} Hz falls at t = {t[-1]:.6g} s, before "
                      f"{duration:g} s: give a whole number of samples")
        raise ValueError(
            f"the trajectory does not {moving[0]} at rest: at t = {t[k]:.6g} s |dq| reaches "
            f"{np.abs(dq[k]).max():.3g} rad/s and |ddq| {np.abs(ddq[k]).max():.3g} rad/s^2 "
            f"({' and '.join(moving)} moving){short}. A robot cannot jump to or from that "
            "speed: use a trajectory at rest at both ends (optimize_excitation(rest=True), "
            "rest_at_ends(), RampedVelocityFourier; a rested Fourier series over whole "
            "periods) or pass allow_moving_ends=True")
    dq, ddq = dq.copy(), ddq.copy()
    for k, still in ends.values():
        if still:  # round-off of an analytic zero: written as the zero it is
            dq[k], ddq[k] = 0.0, 0.0
    n = q.shape[1]
    header = ["t"] + [f"{p}{j + 1}" for p in ("q", "dq", "ddq") for j in range(n)]
    table = np.hstack([t[:, None], q, dq, ddq])
    start = {"q": q[0].tolist(), "dq": dq[0].tolist(), "ddq": ddq[0].tolist()}
    spec = {**trajectory.to_dict(), "rate_hz": rate, "duration_s": duration, "start": start,
            "at_rest": not moving, **(extra or {})}
    text = dump_yaml(spec, sort_keys=False)
    atomic_write_all([  # the series and its parameters: both or neither
        (path, lambda tmp: np.savetxt(tmp, table, delimiter=",", header=",".join(header),
                                      comments="", fmt="%.17g")),
        (path.with_suffix(".yaml"), lambda tmp: tmp.write_text(text)),
    ])
    return path


def load_trajectory(path: str | Path):
    """A trajectory file: the YAML parameters of a family, or a CSV time series
    (``t, q1..qn, dq1..dqn, ddq1..ddqn``) as a ``SampledTrajectory``."""
    path = Path(path)
    if path.suffix.lower() in (".yaml", ".yml"):
        spec = load_yaml(path, what="trajectory file")
        if not isinstance(spec, dict):
            raise ValueError(f"`path`: {path.name} must hold a mapping with a `family` key")
        spec = {k: v for k, v in spec.items() if k in ("family", *_fields_of(spec))}
        try:
            return trajectory_from_dict(spec)
        except (TypeError, ValueError) as error:
            raise ValueError(f"`path`: {path.name}: {error}") from None
    header, values = read_csv(path, what="trajectory file")
    if "t" not in header:
        raise ValueError(f"`path`: {path.name} has no `t` column")
    columns = {p: _columns(header, p, path) for p in ("q", "dq", "ddq")}
    if not columns["q"] or not (len(columns["q"]) == len(columns["dq"]) == len(columns["ddq"])):
        raise ValueError(f"`path`: {path.name} needs q1..qn, dq1..dqn, ddq1..ddqn")
    if values.shape[0] < 2:
        raise ValueError(f"`path`: {path.name} needs at least two samples")
    return SampledTrajectory(values[:, header.index("t")], values[:, columns["q"]],
                             values[:, columns["dq"]], values[:, columns["ddq"]])


def _fields_of(spec: dict) -> tuple[str, ...]:
    import dataclasses

    name = spec.get("family")
    family = _FAMILIES.get(name) if isinstance(name, str) else None
    return tuple(f.name for f in dataclasses.fields(family)) if family else ()
