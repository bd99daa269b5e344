"""How many RK4 steps a control period needs: from the fastest dynamics of the truth.

Between two control updates the torque is held and the truth's state ``x = (q, dq, z)``
follows ``dx/dt = f(x) = (dq, M(q)^-1 (tau - c - g - tau_f(dq, z)), dz/dt)``. An explicit RK4
step h is accurate where ``h |lambda|`` is small for every eigenvalue lambda of the Jacobian
``df/dx``: its per-step error in a mode is ``(h lambda)^5 / 120`` of the mode. The fastest modes
of an arm are its friction's: a sigmoid's or a viscous slope over the smallest inertia it
acts on, a LuGre bristle's stiffness ``sqrt(sigma0 / m)`` and relaxation rate
``sigma0 |dq| / s(dq)``.

``rk4_substeps`` takes the largest ``|lambda|`` it finds, ``rho``, and returns the fewest
substeps with ``h rho <= STEP_TIMES_RATE``: 0.5, a per-step error of at most ``3e-4`` of the
fastest mode (which decays). It looks in two places:

- ``df/dx`` at up to ``SAMPLES`` points spread over the reference (central differences, one
  batched forward-dynamics call): every coupling, and a LuGre state's rates;
- ``M(q)^-1 D`` at the same configurations, ``D`` the steepest slope ``|d tau_f / d dq|`` of
  each joint's friction over the velocities the reference reaches (a geometric grid from 1e-6
  rad/s): a friction is steepest near one velocity (a sigmoid's ``-phi3``, an arctan's 0) that
  a few samples of the reference would miss.

For the Panda with Gaz's sigmoid friction ``rho`` is about 400 1/s: one step per 1 ms period
(its trajectory 1e-8 rad from a 32-step run over 10 s, 500 times below one count of a 20-bit
encoder); a LuGre bristle of ``sigma0 = 1e3`` N m/rad relaxes at ``sigma0 |dq| / s(dq)``, some
4000 1/s at 2 rad/s: eight steps.

The Coulomb jump of a friction model at ``dq = 0`` is a discontinuity, not a stiffness: the
linearisation points keep every joint velocity at least ``SLOWEST`` [rad/s] away from zero.

A re-simulation of an estimate (DIDIM, CLOE, CLIE, dozens per fit) takes the looser bound
``RESIMULATION_STEP_TIMES_RATE`` = 2: the fastest modes there are a linear friction's slopes
(real, decaying: the identified models have no internal state), for which RK4 only needs to
stay stable (``h rho`` below ``RK4_STABILITY``, a margin of 1.39 in ``rho`` for an estimate
faster than its start); the slow rigid-body modes it follows stay exact to the
``(h lambda)^5`` of their own rates. BIRDy's TX40 at 1 kHz (``rho`` 3.0e3 1/s, the wrist's
smoothed Coulomb slope): 2 substeps instead of 7, 3.6e-8 rad and 6e-5 N m from the 7-step
run over 10 s (50 and 800 times below the benchmark's smallest position and torque noise),
a simulation 0.20 -> 0.064 s. One substep (``h rho`` 3.0, unstable) is off by 1e-5 rad.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from dynid.data.dataset import sample_count, sample_times
from dynid.dynamics import forward_dynamics, mass_matrix, rnea
from dynid.robot import Robot

__all__ = ["RESIMULATION_STEP_TIMES_RATE", "RK4_STABILITY", "STEP_TIMES_RATE", "ClosedLoopError",
           "rk4_substeps"]


class ClosedLoopError(ValueError):
    """The plant cannot be simulated: its closed loop diverges, its M(q) is not positive
    definite, its dynamics are not finite or too fast to integrate at the control rate (a
    simulation-based identification halves its step on it)."""

SAMPLES = 32
STEP_TIMES_RATE = 0.5
#: |h lambda| up to which RK4 is stable for a real (decaying) eigenvalue lambda: the real root
#: of 1 - x + x^2 / 2 - x^3 / 6 + x^4 / 24 = 1
RK4_STABILITY = 2.785
#: the bound of a re-simulation (``dynid.identification.simulation``): stable with a margin of
#: 1.39 in rho, for an estimate whose fastest mode is faster than its start's (see the module)
RESIMULATION_STEP_TIMES_RATE = 2.0
SLOWEST = 1e-3  # [rad/s]
MOST = 1000  # substeps per period, beyond which the run would crawl: refused
_GRID = 2000  # velocities per sign in the friction's scan
_STEP = 1e-6  # central differences [rad, rad/s]; the state z enters linearly (any step)


def _rates(robot: Robot, q: NDArray, dq: NDArray, z: NDArray, tau: NDArray) -> NDArray:
    """``f(x)`` ``(P, 2 n + n_z)`` at the points' states, the torques ``tau`` held."""
    friction = robot.friction
    if friction.stateful:
        tau_f, z_rate = friction.torque_with_state(dq, z), friction.state_derivative(dq, z)
    else:
        tau_f, z_rate = friction.torque(dq), np.zeros((q.shape[0], 0))
    ddq = forward_dynamics(robot, q, dq, tau - tau_f)
    return np.concatenate([dq, ddq, z_rate], axis=1)


def steepest_friction(robot: Robot, fastest: NDArray) -> NDArray:
    """``D`` ``(n,)``: each joint's largest ``|d tau_f / d dq|`` for ``|dq| <= fastest``
    (``(n,)`` [rad/s]), by differences on a geometric grid of each sign (never across 0); a
    stateful friction by its steady-state curve."""
    grid = np.geomspace(1e-6, 1.0, _GRID)[:, None] * np.maximum(fastest, 1e-6)
    slopes = [np.abs(np.diff(robot.friction.torque(sign * grid), axis=0)
                     / np.diff(sign * grid, axis=0)).max(axis=0) for sign in (1.0, -1.0)]
    return np.maximum(*slopes)


def fastest_rate(robot: Robot, t: NDArray, q: NDArray, dq: NDArray, ddq: NDArray) -> float:
    """``rho`` [1/s]: the largest ``|lambda|`` of ``df/dx`` at the states ``(q, dq)`` ``(P, n)``
    of the times ``t`` under the torques that give them the accelerations ``ddq`` (a stateful
    friction at its steady state), and of ``M(q)^-1 D``."""
    n, points = robot.n_joints, q.shape[0]
    inertia = mass_matrix(robot, q)
    definite = np.linalg.eigvalsh(inertia)[:, 0] > 0  # NaN fails too
    if not definite.all():
        raise ClosedLoopError(f"M(q) of `robot` is not positive definite at t = "
                         f"{t[np.argmin(definite)]:.3f} s: check its parameters")
    dq = np.where(np.abs(dq) >= SLOWEST, dq, np.where(dq < 0, -SLOWEST, SLOWEST))
    friction = robot.friction
    if friction.stateful:
        z = np.stack([friction.states_along([0.0], dq[p:p + 1])[0] for p in range(points)])
        tau = rnea(robot, q, dq, ddq) + friction.torque_with_state(dq, z)
    else:
        z = np.zeros((points, 0))
        tau = rnea(robot, q, dq, ddq) + friction.torque(dq)
    state = np.concatenate([q, dq, z], axis=1)
    size = state.shape[1]
    # rows: point p, coordinate c, sign s -> the state moved by s _STEP along c
    moved = np.repeat(state[:, None, None, :], size, axis=1).repeat(2, axis=2)
    coordinate = np.arange(size)
    moved[:, coordinate, 0, coordinate] += _STEP
    moved[:, coordinate, 1, coordinate] -= _STEP
    moved = moved.reshape(-1, size)
    rates = _rates(robot, moved[:, :n], moved[:, n:2 * n], moved[:, 2 * n:],
                   np.repeat(tau, 2 * size, axis=0)).reshape(points, size, 2, size)
    jacobian = np.swapaxes((rates[:, :, 0] - rates[:, :, 1]) / (2 * _STEP), 1, 2)
    if not np.isfinite(jacobian).all():
        raise ClosedLoopError("the truth's dynamics are not finite along the reference: check "
                         "`robot`'s parameters and friction")
    rho = float(np.abs(np.linalg.eigvals(jacobian)).max())
    # M^-1 D has the eigenvalues of the symmetric D^1/2 M^-1 D^1/2
    root = np.sqrt(steepest_friction(robot, np.abs(dq).max(axis=0)))
    scaled = root[:, None] * np.linalg.inv(inertia) * root[None, :]
    if not np.isfinite(scaled).all():
        raise ClosedLoopError("the truth's friction is not finite along the reference: check "
                         "`robot`'s friction")
    return max(rho, float(np.linalg.eigvalsh(scaled).max()))


def rk4_substeps(robot: Robot, trajectory, *, duration: float, rate: float,
                 start: float, step_times_rate: float = STEP_TIMES_RATE) -> int:
    """The fewest RK4 steps per control period ``1 / rate`` with ``h rho <= step_times_rate``
    (default ``STEP_TIMES_RATE``), ``rho`` the fastest rate of the truth along the reference
    (see the module). A larger bound (below RK4's stability limit, 2.785 on the real axis)
    trades accuracy in the fastest mode for speed: the simulation-based identification
    methods' re-simulations use ``RESIMULATION_STEP_TIMES_RATE``."""
    if isinstance(step_times_rate, bool) or not (
            isinstance(step_times_rate, (int, float, np.floating))
            and 0 < step_times_rate <= RK4_STABILITY):
        raise ValueError(f"`step_times_rate` must be a number in (0, {RK4_STABILITY}] (RK4's "
                         f"stability limit), got {step_times_rate!r:.40}")
    stride = max(1, -(-(sample_count(duration, rate) - 1) // (SAMPLES - 1)))
    t = sample_times(duration, rate, start, rows=slice(None, None, stride))  # <= SAMPLES
    q, dq, ddq = trajectory.sample(t)
    rho = fastest_rate(robot, t, np.asarray(q, dtype=float), np.asarray(dq, dtype=float),
                       np.asarray(ddq, dtype=float))
    substeps = max(1, math.ceil(rho / rate / step_times_rate))
    if substeps > MOST:
        raise ClosedLoopError(
            f"the truth's fastest dynamics along the reference ({rho:.3g} 1/s) need "
            f"{substeps} RK4 steps per control period at {rate:g} Hz (at most {MOST} are "
            "taken automatically): give `substeps`, or check the robot's friction and inertia")
    return substeps
