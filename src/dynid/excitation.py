"""Excitation trajectories.

Finite Fourier series with offset (Gilbert et al. 2024, eq. 15; Szabó 2021, eq. 22), per joint i::

    q_i(t)   = q0_i + sum_l  a_il / (w_f l) sin(w_f l t) - b_il / (w_f l) cos(w_f l t)
    dq_i(t)  =        sum_l  a_il cos(w_f l t) + b_il sin(w_f l t)
    ddq_i(t) =        sum_l -a_il w_f l sin(w_f l t) + b_il w_f l cos(w_f l t)

periodic with period ``2 pi / w_f`` (``w_f = 0.15 pi`` rad/s in the Panda papers).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_float_array, frozen_copy, strictly_increasing
from dynid.robot import Robot

__all__ = ["FourierTrajectory", "random_fourier"]


@dataclass(frozen=True)
class FourierTrajectory:
    """Fourier coefficients ``a``, ``b`` (n, L) [rad/s], offset ``q0`` (n,), ``omega_f`` [rad/s]."""

    a: NDArray
    b: NDArray
    q0: NDArray
    omega_f: float

    def __post_init__(self) -> None:
        a = as_float_array("a", self.a)
        b = as_float_array("b", self.b)
        q0 = as_float_array("q0", self.q0)
        if a.ndim != 2 or a.shape != b.shape or q0.shape != (a.shape[0],):
            raise ValueError(
                f"`a`, `b` must be (n, L) and `q0` (n,), got {a.shape}, {b.shape}, {q0.shape}"
            )
        if not np.isfinite(self.omega_f) or self.omega_f <= 0:
            raise ValueError(f"`omega_f` must be > 0, got {self.omega_f}")
        for name, value in (("a", a), ("b", b), ("q0", q0)):
            object.__setattr__(self, name, frozen_copy(value))

    @property
    def period(self) -> float:
        return 2 * np.pi / self.omega_f

    @property
    def n_joints(self) -> int:
        return self.q0.size

    def sample(self, t: ArrayLike) -> tuple[NDArray, NDArray, NDArray]:
        """``q, dq, ddq`` ``(N, n)`` at times ``t`` ``(N,)`` [s], analytic."""
        t = as_float_array("t", t)
        strictly_increasing("t", t)
        harmonics = np.arange(1, self.a.shape[1] + 1)
        w = self.omega_f * harmonics  # (L,)
        s, c = np.sin(t[:, None] * w), np.cos(t[:, None] * w)  # (N, L)
        q = self.q0 + s @ (self.a / w).T - c @ (self.b / w).T
        dq = c @ self.a.T + s @ self.b.T
        ddq = -s @ (self.a * w).T + c @ (self.b * w).T
        return q, dq, ddq


def random_fourier(robot: Robot, *, harmonics: int = 5, omega_f: float = 0.15 * np.pi,
                   margin: float = 0.9, seed: int = 0) -> FourierTrajectory:
    """A random Fourier trajectory that stays inside ``margin`` x the robot's limits.

    Coefficients are drawn from N(0, 1/l) (seeded), centred on the middle of each joint's
    position range, then each joint is scaled so that position, velocity and acceleration peak
    at most at ``margin`` times the limit. Not optimised for conditioning (see the excitation
    design for that).
    """
    limits = robot.limits
    for name in ("lower", "upper", "velocity", "acceleration"):
        if not np.isfinite(getattr(limits, name)).all():
            raise ValueError(
                f"`robot`: {robot.name!r} needs finite `limits.{name}` to design a trajectory"
            )
    if harmonics < 1:
        raise ValueError(f"`harmonics` must be >= 1, got {harmonics}")
    if not 0 < margin <= 1:
        raise ValueError(f"`margin` must be in (0, 1], got {margin}")
    n = robot.n_joints
    rng = np.random.default_rng(seed)
    scale = 1.0 / np.arange(1, harmonics + 1)
    a = rng.standard_normal((n, harmonics)) * scale
    b = rng.standard_normal((n, harmonics)) * scale
    centre = 0.5 * (limits.lower + limits.upper)
    unit = FourierTrajectory(a, b, centre, omega_f)
    n_grid = max(4000, 64 * harmonics)  # >= 64 points per period of the top harmonic
    t = np.linspace(0.0, unit.period, n_grid, endpoint=False)
    q, dq, ddq = unit.sample(t)
    # Bernstein's inequality bounds a trigonometric polynomial of top frequency W between grid
    # points (spacing h): max|f| <= grid max / (1 - h W / 2). Peaks are therefore never
    # under-estimated, whatever grid the trajectory is later sampled on.
    inflation = 1.0 / (1.0 - 0.5 * (unit.period / n_grid) * omega_f * harmonics)
    half_range = 0.5 * (limits.upper - limits.lower)
    peaks = inflation * np.array([np.abs(q - centre).max(axis=0), np.abs(dq).max(axis=0),
                                  np.abs(ddq).max(axis=0)])
    gain = margin * np.min(
        [half_range / peaks[0], limits.velocity / peaks[1], limits.acceleration / peaks[2]],
        axis=0,
    )
    return FourierTrajectory(a * gain[:, None], b * gain[:, None], centre, omega_f)
