"""Excitation design: trajectories (``dynid.trajectory``) that make the regressor well
conditioned inside the robot's limits."""

from __future__ import annotations

import numpy as np

from dynid.robot import Robot
from dynid.trajectory import FourierTrajectory

__all__ = ["random_fourier"]


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
