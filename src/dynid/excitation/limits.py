"""The limits an excitation needs, completed where a description leaves them out.

An exciting trajectory needs finite position, velocity and acceleration limits on every joint.
A URDF gives no acceleration limit at all, and a continuous joint (or a table without a
position range) no position limit; ``excitation_limits`` fills in, per joint and only where
the robot's own limit is ``inf``:

- **acceleration** (the derived rule)::

      a_j = min(ACCELERATION_CAP, ACCELERATION_SAFETY x headroom_j / max_q M_jj(q)),
      headroom_j = max(effort_j - max_q |g_j(q)|, MIN_HEADROOM x effort_j)

  the acceleration the joint's effort limit, less what gravity takes of it at the worst pose,
  gives the joint's own inertia (the diagonal of the joint-space inertia matrix, reflected
  rotor inertia included) at the pose where that inertia is largest, both over ``POSES``
  poses sampled (seeded) in the position range; halved by the safety factor for what the
  other joints' motion (coupling, Coriolis) takes; capped at ``ACCELERATION_CAP`` (10 rad/s^2;
  ``PRISMATIC_ACCELERATION_CAP`` m/s^2 on a prismatic joint): a light wrist's effort over its
  tiny inertia would allow thousands. Where the effort is not given (the conservative rule):
  the velocity limit reached in ``RAMP_TIME`` (0.5 s), capped likewise. On the Panda (efforts
  87 and 12 N m, the CAD inertia of ``panda-cad``) the rule gives 10, 8.4, 10, 10, 10, 10, 10
  rad/s^2 (14.2 on joint 1 before the cap) where Franka publishes 15, 7.5, 10, 12.5, 15, 20, 20;
- **velocity** where none is given: ``DEFAULT_VELOCITY`` (1 rad/s; 0.25 m/s prismatic);
- **position** of a joint without a position range: ``q in [-continuous_range,
  +continuous_range]`` around zero (``CONTINUOUS_RANGE``: +-pi, one full turn; overridable),
  or within ``2 x continuous_range`` of the one bound it has.

A limit the description gives is never changed; ``--acceleration-limit`` on ``dynid excite``
(or the robot file's ``limits.acceleration``) overrides the derived values.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from dynid.dynamics import gravity_torque, mass_matrix
from dynid.robot import JointLimits, Robot

__all__ = [
    "ACCELERATION_CAP",
    "ACCELERATION_SAFETY",
    "CONTINUOUS_RANGE",
    "DEFAULT_VELOCITY",
    "MIN_HEADROOM",
    "POSES",
    "PRISMATIC_ACCELERATION_CAP",
    "RAMP_TIME",
    "CompletedLimits",
    "derived_acceleration_limits",
    "excitation_limits",
]

ACCELERATION_SAFETY = 0.5  # of headroom / max M_jj: coupling and Coriolis take the rest
MIN_HEADROOM = 0.1  # of the effort, where gravity alone may take all of it (a weak joint)
ACCELERATION_CAP = 10.0  # rad/s^2: at or below every published Panda limit but joint 2's
PRISMATIC_ACCELERATION_CAP = 5.0  # m/s^2
RAMP_TIME = 0.5  # s: without an effort limit, the velocity limit is reached in this time
DEFAULT_VELOCITY = (1.0, 0.25)  # (rad/s, m/s) where a joint has no velocity limit
CONTINUOUS_RANGE = np.pi  # rad (m for a prismatic joint): half the range of an unlimited joint
POSES = 256  # poses sampled for the largest M_jj
# rows of M(q) held at once: a 100-joint chain's 256 poses are 20 MB
_CHUNK = 64


@dataclass(frozen=True)
class CompletedLimits:
    """The robot with finite limits for an excitation, and which of them were filled in.

    ``robot``: a copy with the completed ``limits``; ``derived``: per limit name
    (``"acceleration"``, ``"velocity"``, ``"position"``) the 0-based joints filled in;
    ``rule``: per acceleration-derived joint, ``"effort"`` or ``"velocity"`` (the rule used);
    ``sources``: per acceleration-derived joint, the rule with its figures, for a message
    (``"0.5 x max(effort 39 - gravity 36.2, 0.1 x 39) N m / max M_jj 2.67 kg m^2"``).
    """

    robot: Robot
    derived: dict[str, tuple[int, ...]]
    rule: dict[int, str]
    sources: dict[int, str] = field(default_factory=dict)

    def notes(self) -> list[str]:
        """One line per completed limit, for a command's output."""
        robot, out = self.robot, []
        names = robot.joint_names
        limits = robot.limits
        if self.derived["acceleration"]:
            values = ", ".join(f"{names[j]} {limits.acceleration[j]:.3g}"
                               + ("" if self.rule[j] == "effort" else " (no effort limit)")
                               for j in self.derived["acceleration"])
            out.append(f"acceleration limits derived (dynid.excitation.limits: "
                       f"{ACCELERATION_SAFETY:g} x (effort - gravity) / max M_jj, at most "
                       f"{ACCELERATION_CAP:g} rad/s^2, {PRISMATIC_ACCELERATION_CAP:g} m/s^2 on "
                       f"a prismatic joint): {values}")
        if self.derived["velocity"]:
            out.append("velocity limits assumed (none given): " + ", ".join(
                f"{names[j]} {limits.velocity[j]:g}" for j in self.derived["velocity"]))
        if self.derived["position"]:
            out.append("position ranges assumed (none given; --continuous-range): " + ", ".join(
                f"{names[j]} [{limits.lower[j]:.4g}, {limits.upper[j]:.4g}]"
                for j in self.derived["position"]))
        return out


def _check_range(continuous_range: float) -> None:
    if not (isinstance(continuous_range, (int, float, np.floating))
            and np.isfinite(continuous_range) and continuous_range > 0):
        raise ValueError(f"`continuous_range` must be a finite angle > 0 [rad] (m on a "
                         f"prismatic joint), got {continuous_range!r}")


def _positions(robot: Robot, continuous_range: float) -> tuple[NDArray, NDArray, list[int]]:
    lower, upper = robot.limits.lower.copy(), robot.limits.upper.copy()
    filled = []
    for j in range(robot.n_joints):
        low, high = np.isfinite(lower[j]), np.isfinite(upper[j])
        if low and high:
            continue
        filled.append(j)
        if not low and not high:
            lower[j], upper[j] = -continuous_range, continuous_range
        elif low:
            upper[j] = lower[j] + 2 * continuous_range
        else:
            lower[j] = upper[j] - 2 * continuous_range
    return lower, upper, filled


def derived_acceleration_limits(robot: Robot, *, continuous_range: float = CONTINUOUS_RANGE,
                                poses: int = POSES, seed: int = 0) -> tuple[NDArray, NDArray]:
    """``(n,)`` acceleration limits by the module's rule for every joint (whatever the robot
    gives), and ``(n,)`` booleans: True where the effort rule applied (False: no effort limit,
    the velocity rule)."""
    limits, by_effort, _ = _derived(robot, continuous_range=continuous_range, poses=poses,
                                    seed=seed)
    return limits, by_effort


def _derived(robot: Robot, *, continuous_range: float, poses: int = POSES,
             seed: int = 0) -> tuple[NDArray, NDArray, list[str]]:
    """``derived_acceleration_limits`` and, per joint, the rule with its figures (text)."""
    _check_range(continuous_range)
    if isinstance(poses, bool) or not isinstance(poses, (int, np.integer)) or poses < 1:
        raise ValueError(f"`poses` must be an integer >= 1, got {poses!r}")
    n = robot.n_joints
    lower, upper, _ = _positions(robot, continuous_range)
    rng = np.random.default_rng(seed)
    prismatic = np.array([joint.kind == "prismatic" for joint in robot.joints])
    cap = np.where(prismatic, PRISMATIC_ACCELERATION_CAP, ACCELERATION_CAP)
    effort = robot.limits.torque
    by_effort = np.isfinite(effort)
    out = np.empty(n)
    largest, gravity = np.full(n, np.nan), np.full(n, np.nan)
    if by_effort.any():
        largest, gravity = np.zeros(n), np.zeros(n)
        for start in range(0, poses, _CHUNK):
            size = min(_CHUNK, poses - start)
            q = lower + (upper - lower) * rng.random((size, n))
            diagonal = np.diagonal(mass_matrix(robot, q), axis1=-2, axis2=-1)
            largest = np.maximum(largest, diagonal.max(axis=0))
            gravity = np.maximum(gravity, np.abs(gravity_torque(robot, q)).max(axis=0))
        headroom = np.maximum(effort - gravity, MIN_HEADROOM * effort)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            by_inertia = ACCELERATION_SAFETY * headroom / largest
        out = np.where(np.isfinite(by_inertia) & (by_inertia > 0), by_inertia, cap)
    velocity = np.where(np.isfinite(robot.limits.velocity), robot.limits.velocity,
                        np.where(prismatic, DEFAULT_VELOCITY[1], DEFAULT_VELOCITY[0]))
    out = np.where(by_effort, out, velocity / RAMP_TIME)
    unit = np.where(prismatic, "m/s^2", "rad/s^2")
    gravity = np.where(gravity > 1e-12 * effort, gravity, 0.0)  # round-off of a level joint
    force = np.where(prismatic, "N", "N m")
    mass = np.where(prismatic, "kg", "kg m^2")
    sources = [
        (f"{ACCELERATION_SAFETY:g} x max(effort {effort[j]:.3g} - gravity {gravity[j]:.3g} "
         f"{force[j]} at the worst pose, {MIN_HEADROOM:g} x effort) / max M_jj "
         f"{largest[j]:.3g} {mass[j]}"
         if by_effort[j] else
         f"velocity limit {velocity[j]:.3g} reached in {RAMP_TIME:g} s (no effort limit)")
        + (f", capped at {cap[j]:g} {unit[j]}" if out[j] > cap[j] else "")
        for j in range(n)]
    return np.minimum(out, cap), by_effort, sources


def excitation_limits(robot: Robot, *,
                      continuous_range: float = CONTINUOUS_RANGE) -> CompletedLimits:
    """``robot`` with every joint's position, velocity and acceleration limit finite: the
    description's where it gives one, the module's rules where it does not."""
    _check_range(continuous_range)
    limits = robot.limits
    lower, upper, position = _positions(robot, continuous_range)
    prismatic = np.array([joint.kind == "prismatic" for joint in robot.joints])
    no_velocity = ~np.isfinite(limits.velocity)
    velocity = np.where(no_velocity, np.where(prismatic, DEFAULT_VELOCITY[1],
                                              DEFAULT_VELOCITY[0]), limits.velocity)
    no_acceleration = ~np.isfinite(limits.acceleration)
    acceleration, rule, sources = limits.acceleration, {}, {}
    if no_acceleration.any():
        derived, by_effort, why = _derived(robot, continuous_range=continuous_range)
        acceleration = np.where(no_acceleration, derived, limits.acceleration)
        rule = {int(j): "effort" if by_effort[j] else "velocity"
                for j in np.flatnonzero(no_acceleration)}
        sources = {int(j): why[j] for j in np.flatnonzero(no_acceleration)}
    completed = JointLimits(lower=lower, upper=upper, velocity=velocity,
                            acceleration=acceleration, torque=limits.torque)
    return CompletedLimits(
        robot=dataclasses.replace(robot, limits=completed),
        derived={"acceleration": tuple(int(j) for j in np.flatnonzero(no_acceleration)),
                 "velocity": tuple(int(j) for j in np.flatnonzero(no_velocity)),
                 "position": tuple(position)},
        rule=rule, sources=sources)
