"""Excitation design: Fourier trajectories that make the base regressor well conditioned inside
the robot's limits (Gilbert et al. 2024, eq. 15; Szabó 2021, eq. 20-22; Swevers et al.).

``optimize_excitation`` minimises one of

- ``cond``: the condition number of the base regressor ``Y_b`` stacked over an evaluation grid;
- ``fro``: the Frobenius-norm condition of ``Y_b^T Y_b`` (Szabó eq. 20), as its logarithm;
- ``logdet``: ``-log det(Y_b^T Y_b)`` (D-optimality);
- ``sigma-min``: ``1 / sigma_min(Y_b)``;

over the coefficients and offsets of a finite Fourier series, under position, velocity,
acceleration and (with the robot's own model as prior) torque limits, by a smooth exterior
penalty; at rest at both ends by default (``rest_at_ends``: dq = ddq = 0 at t = 0 and at
every period, so the series can be sent to a robot as it is; ``rest=False`` frees the top
harmonic and starts at speed). A global stage runs short local searches from several seeded
random starts; the best one is refined (L-BFGS-B). Gradients are exact up to round-off: the
criterion's derivative with respect to the stacked regressor, contracted with the regressor's
derivatives with respect to each joint's q, dq, ddq in one compiled pass
(``dynid.dynamics.regressor_vjp``, analytic; friction columns, elementwise in dq, by a central
difference of their own, second order in the step), and the series' analytic derivatives.
Deterministic for a given seed. The final trajectory is scaled per joint, if needed, to stay
within ``margin`` of every limit in continuous time (a Bernstein bound between grid points; the
scaling keeps it at rest); the prior's torques are checked and reported.

**A derived limit that cripples the excitation** (``UnderExcitedWarning``): an acceleration
limit derived from a description (``dynid.excitation.limits``: effort less the worst pose's
gravity, over the largest inertia) can leave a joint almost still — a Kinova Gen3 with a
gripper gets 0.73 rad/s^2 on its shoulder, and a condition number of 142 where other arms
reach 16-29. A joint is warned about when (1) its derived limit over its half range,
``a_j / h_j`` (the squared frequency at which a full-range sinusoid reaches the limit), is below
``UNDER_EXCITED_RATIO`` (1/4) of the other joints' median — its limit, not its range, holds it;
and (2) with that joint's limit raised to what the others allow for its range (their median
``a / h`` times its ``h``, at most the cap), one more refinement warm-started from the optimum
reaches a condition number at least ``UNDER_EXCITED_GAIN`` (1.5) times lower: the limit costs
conditioning. (Scaling the joint's motion up instead is no test: the optimum has spread the
joint slowly over its whole range, and only new, faster motion gains — Talos's left arm, its
shoulder held to 0.82 rad/s^2 by gravity above its effort: 79 scaled to 63, re-optimised 17.)
Test (2) costs one refinement per suspected joint, only where (1) holds; the warning names
the limit, how it was derived, and the
``--acceleration-limit`` values that lift it (the torque limits still hold: the optimisation
keeps the prior model's torques within the efforts).
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.optimize
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from dynid.dynamics import regressor, regressor_vjp, rnea
from dynid.excitation.limits import (
    ACCELERATION_CAP,
    CONTINUOUS_RANGE,
    PRISMATIC_ACCELERATION_CAP,
    CompletedLimits,
    excitation_limits,
)
from dynid.excitation.trajectory import FourierTrajectory, rest_at_ends
from dynid.friction.models import FrictionModel
from dynid.model.base_parameters import robot_base_parameters
from dynid.robot import JointLimits, Robot

__all__ = [
    "CRITERIA",
    "UNDER_EXCITED_GAIN",
    "UNDER_EXCITED_RATIO",
    "ExcitationResult",
    "UnderExcitedWarning",
    "criterion_value",
    "limit_gain",
    "optimize_excitation",
    "random_fourier",
]

CRITERIA = ("cond", "fro", "logdet", "sigma-min")
# Weight of squared relative limit violations: 1 % over a limit on one grid sample costs 1, the
# order of the criteria's own scale (cond ~ 10-100, log-criteria ~ 1-100)
_PENALTY = 1e4
_STEP = 1e-6  # central-difference step of the friction columns in dq
_SINGULAR = 1e12  # objective of a trajectory whose regressor is rank deficient
UNDER_EXCITED_RATIO = 0.25  # a_j / h_j below this share of the other joints' median: suspect
UNDER_EXCITED_GAIN = 1.5  # condition number over the one with the joint scaled up: warned


class UnderExcitedWarning(UserWarning):
    """A derived acceleration limit leaves a joint under-excited (the module docstring)."""


def _check_limits(robot: Robot) -> None:
    limits = robot.limits
    for name in ("lower", "upper", "velocity", "acceleration"):
        if not np.isfinite(getattr(limits, name)).all():
            hint = (" (a URDF has none: give them in a robot file, or `--acceleration-limit` on "
                    "the command line)" if name == "acceleration" else "")
            raise ValueError(
                f"`robot`: {robot.name!r} needs finite `limits.{name}` to design a "
                f"trajectory{hint}"
            )


def limit_gain(trajectory: FourierTrajectory, robot: Robot, margin: float = 1.0) -> NDArray:
    """Per-joint factors on the oscillating part that bring position, velocity and
    acceleration exactly to ``margin`` x the limits in continuous time (< 1: shrink).

    Bernstein's inequality bounds a trigonometric polynomial of top frequency W between grid
    points (spacing h): max|f| <= grid max / (1 - h W / 2); so peaks are never
    under-estimated, whatever grid the trajectory is later sampled on.
    """
    limits = robot.limits
    # 64 points per period of the top harmonic keep the Bernstein inflation below 5 %
    n_grid = max(4000, 64 * trajectory.harmonics)
    t = np.linspace(0.0, trajectory.period, n_grid, endpoint=False)
    q, dq, ddq = trajectory.sample(t)
    inflation = 1.0 / (1.0 - 0.5 * (trajectory.period / n_grid) * trajectory.omega_f
                       * trajectory.harmonics)
    wave = q - trajectory.q0
    # one-sided peaks: the grid peak plus the two-sided bound on what lies between grid points
    up_grid, down_grid = wave.max(axis=0), -wave.min(axis=0)
    slack = (inflation - 1.0) * np.maximum(up_grid, down_grid)
    up = np.maximum(up_grid + slack, 1e-300)
    down = np.maximum(down_grid + slack, 1e-300)
    centre, half = 0.5 * (limits.upper + limits.lower), 0.5 * (limits.upper - limits.lower)
    room_up = centre + margin * half - trajectory.q0
    room_down = trajectory.q0 - (centre - margin * half)
    if (room_up < 0).any() or (room_down < 0).any():
        raise ValueError("the trajectory's offset q0 lies outside the position margin")
    return np.min([room_up / up, room_down / down,
                   margin * limits.velocity / (inflation * np.abs(dq).max(axis=0)),
                   margin * limits.acceleration / (inflation * np.abs(ddq).max(axis=0))],
                  axis=0)


def _scaled(trajectory: FourierTrajectory, gain: NDArray) -> FourierTrajectory:
    return FourierTrajectory(trajectory.a * gain[:, None], trajectory.b * gain[:, None],
                             trajectory.q0, trajectory.omega_f)


def random_fourier(robot: Robot, *, harmonics: int = 5, omega_f: float = 0.15 * np.pi,
                   margin: float = 0.9, seed: int = 0) -> FourierTrajectory:
    """A random Fourier trajectory that stays inside ``margin`` x the robot's limits.

    Coefficients are drawn from N(0, 1/l) (seeded), centred on the middle of each joint's
    position range, then each joint is scaled so that position, velocity and acceleration peak
    at most at ``margin`` times the limit (limits the robot does not give completed as
    ``optimize_excitation`` does, ``dynid.excitation.limits``). Not optimised for conditioning.
    """
    robot = excitation_limits(robot).robot
    _check_limits(robot)
    if harmonics < 1:
        raise ValueError(f"`harmonics` must be >= 1, got {harmonics}")
    if not 0 < margin <= 1:
        raise ValueError(f"`margin` must be in (0, 1], got {margin}")
    rng = np.random.default_rng(seed)
    scale = 1.0 / np.arange(1, harmonics + 1)
    a = rng.standard_normal((robot.n_joints, harmonics)) * scale
    b = rng.standard_normal((robot.n_joints, harmonics)) * scale
    unit = FourierTrajectory(a, b, 0.5 * (robot.limits.lower + robot.limits.upper), omega_f)
    return _scaled(unit, limit_gain(unit, robot, margin))


def criterion_value(name: str, w: NDArray) -> tuple[float, NDArray]:
    """A criterion of the stacked base regressor ``w`` (m, r) and its gradient (m, r).

    The singular values and right vectors come from the triangle of ``w = Q R`` (those of
    ``R``, a small (r, r)); a left vector is ``u_k = w v_k / s_k``, formed only where the
    gradient needs it: 3x cheaper than the SVD of the tall ``w``, to round-off the same.
    """
    _, s, vt = np.linalg.svd(np.linalg.qr(w, mode="r"), full_matrices=False)
    if s[-1] <= s[0] * 1e-14:
        return np.inf, np.zeros_like(w)
    if name == "cond":
        value = s[0] / s[-1]
        u_first, u_last = w @ vt[0] / s[0], w @ vt[-1] / s[-1]
        grad = np.outer(u_first, vt[0]) / s[-1] - value / s[-1] * np.outer(u_last, vt[-1])
    elif name == "sigma-min":
        value = 1.0 / s[-1]
        grad = -np.outer(w @ vt[-1], vt[-1]) / s[-1] ** 3
    elif name == "logdet":
        value = -2.0 * np.sum(np.log(s))
        grad = -2.0 * w @ ((vt.T / s**2) @ vt)  # -2 W (W^T W)^-1
    elif name == "fro":
        a, b = s**2, 1.0 / s**2  # eigenvalues of W^T W and of its inverse
        norm_a, norm_b = np.sqrt(np.sum(a**2)), np.sqrt(np.sum(b**2))
        value = float(np.log(norm_a * norm_b))
        # d log|A|_F = 2 <W A, dW> / |A|_F^2,  d log|A^-1|_F = -2 <W A^-3, dW> / |A^-1|_F^2
        grad = 2.0 * w @ ((vt.T * (a / norm_a**2 - b**3 / norm_b**2)) @ vt)
    else:
        raise ValueError(f"`criterion` must be one of {CRITERIA}, got {name!r}")
    return float(value), grad


@dataclass
class ExcitationResult:
    """What ``optimize_excitation`` found (fields in SI units)."""

    trajectory: FourierTrajectory
    criterion: str
    value: float  # the criterion at the final (feasible) trajectory
    condition_number: float  # cond of the stacked base regressor on the evaluation grid
    start_value: float  # the criterion at the best random start, before optimisation
    max_abs_q_margin: float  # smallest distance to a position limit [rad] (>= 0: inside)
    success: bool
    message: str
    n_evaluations: int
    seconds: float
    history: list[float] = field(default_factory=list)
    limits: JointLimits | None = None  # the limits it kept to (derived ones filled in)
    derived_limits: list[str] = field(default_factory=list)  # what was filled in, one per line
    # joints a derived acceleration limit leaves under-excited (``_under_excited``)
    under_excited: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        limits = {} if self.limits is None else {"limits": {
            key: getattr(self.limits, key).tolist()
            for key in ("lower", "upper", "velocity", "acceleration")}}
        return {**limits, "derived_limits": self.derived_limits,
                "under_excited": self.under_excited,
                "criterion": self.criterion, "value": self.value,
                "condition_number": self.condition_number, "start_value": self.start_value,
                "max_abs_q_margin": self.max_abs_q_margin, "success": self.success,
                "message": self.message, "n_evaluations": self.n_evaluations,
                "seconds": self.seconds}


class _Problem:
    """Criterion + penalties of a Fourier trajectory, and their exact gradient."""

    def __init__(self, robot: Robot, criterion: str, harmonics: int, period: float, rate: float,
                 margin: float, rest: bool, friction: FrictionModel | None,
                 torque_limits: bool) -> None:
        self.robot, self.criterion, self.rest = robot, criterion, rest
        self.n, self.harmonics = robot.n_joints, harmonics
        self.omega = 2 * np.pi / period
        # the grid is offset by half a step: at rest, t = 0 would put dq at round-off, where the
        # sign of a Coulomb column flips at random
        self.t = (np.arange(round(period * rate)) + 0.5) / rate
        self.friction = friction
        self.base = robot_base_parameters(robot, friction=friction)
        self.torque_limits = torque_limits and np.isfinite(robot.limits.torque).all()
        limits = robot.limits
        self.centre = 0.5 * (limits.upper + limits.lower)
        self.half = 0.5 * (limits.upper - limits.lower)
        self.margin = margin
        w = self.omega * np.arange(1, harmonics + 1)
        s, c = np.sin(self.t[:, None] * w), np.cos(self.t[:, None] * w)
        # d(q, dq, ddq)/d(a, b) per harmonic: (N, L) each
        self.basis = {"a": (s / w, c, -s * w), "b": (-c / w, s, c * w)}
        self.evaluations = 0

    # variables: x = [gamma (n), alpha (n L), beta (n L)] with q0 = centre + gamma half,
    # a = alpha v_max, b = beta v_max (dimensionless, of order one)
    def trajectory(self, x: NDArray) -> FourierTrajectory:
        n, m = self.n, self.n * self.harmonics
        v = self.robot.limits.velocity[:, None]
        traj = FourierTrajectory(x[n:n + m].reshape(n, -1) * v, x[n + m:].reshape(n, -1) * v,
                                 self.centre + x[:n] * self.half, self.omega)
        return rest_at_ends(traj) if self.rest else traj

    def _pull_back(self, grad_a: NDArray, grad_b: NDArray) -> tuple[NDArray, NDArray]:
        """Gradients on (a, b) -> on the free coefficients of ``rest_at_ends``."""
        if not self.rest:
            return grad_a, grad_b
        top = self.harmonics
        # a_L = a_L - sum_l a_l  ->  da_l/dfree: identity minus the top column for every l
        grad_a = grad_a - grad_a[:, -1:]
        grad_b = grad_b - grad_b[:, -1:] * np.arange(1, top + 1) / top
        return grad_a, grad_b

    def objective(self, x: NDArray) -> tuple[float, NDArray]:
        self.evaluations += 1
        traj = self.trajectory(x)
        q, dq, ddq = traj.sample(self.t)
        n_samples, n = q.shape
        full = self._full_regressor(q, dq, ddq)
        w = self.base.reduce(full).reshape(-1, self.base.rank)
        value, grad_w = criterion_value(self.criterion, w)
        if not np.isfinite(value):  # a rank-deficient grid: worse than any feasible point
            return _SINGULAR, np.zeros_like(x)
        grad_w = grad_w.reshape(n_samples, n, self.base.rank)
        # penalties on relative violations of position / velocity / acceleration / torque
        limits = self.robot.limits
        penalty = 0.0
        grad_state = {key: np.zeros((n_samples, n)) for key in ("q", "dq", "ddq")}

        def hinge(excess: NDArray, scale: NDArray, key: str, sign: NDArray) -> float:
            over = np.maximum(excess, 0.0) / scale
            grad_state[key] += _PENALTY * 2 * over / scale * sign
            return float(_PENALTY * np.sum(over**2))

        top = self.centre + self.margin * self.half
        bottom = self.centre - self.margin * self.half
        penalty += hinge(q - top, self.half, "q", np.ones_like(q))
        penalty += hinge(bottom - q, self.half, "q", -np.ones_like(q))
        penalty += hinge(np.abs(dq) - self.margin * limits.velocity, limits.velocity, "dq",
                         np.sign(dq))
        penalty += hinge(np.abs(ddq) - self.margin * limits.acceleration, limits.acceleration,
                         "ddq", np.sign(ddq))
        grad_tau = None
        if self.torque_limits:
            tau = full[..., : 10 * n] @ self.robot.parameters.ravel()
            over = np.maximum(np.abs(tau) - self.margin * limits.torque, 0.0) / limits.torque
            penalty += float(_PENALTY * np.sum(over**2))
            grad_tau = _PENALTY * 2 * over / limits.torque * np.sign(tau)
        # chain rule: criterion and torque through the regressor's derivatives in each joint's
        # q, dq, ddq. One weight per full regressor entry (criterion on the base columns,
        # torque penalty through the prior's parameters), contracted with those derivatives in
        # one compiled pass (`regressor_vjp`, exact, no regressor formed)
        weight = np.zeros(full.shape)
        weight[..., self.base.independent] = grad_w
        if grad_tau is not None:
            weight[..., : 10 * n] += grad_tau[..., None] * self.robot.parameters.ravel()
        _, g_q, g_dq, g_ddq = regressor_vjp(self.robot, q, dq, ddq, weight[..., : 10 * n])
        grad_state["q"] += g_q
        grad_state["dq"] += g_dq
        grad_state["ddq"] += g_ddq
        if self.friction is not None:
            # friction columns: row k depends on dq_k alone (diagonal blocks), so one central
            # difference with every joint shifted at once gives each row's dq-derivative
            rigid = 10 * n
            change = (self.friction.regressor(dq + _STEP)
                      - self.friction.regressor(dq - _STEP)) / (2 * _STEP)
            grad_state["dq"] += np.einsum("tic,tic->ti", change, weight[..., rigid:])
        grad_a = np.zeros((n, self.harmonics))
        grad_b = np.zeros((n, self.harmonics))
        for key, index in (("q", 0), ("dq", 1), ("ddq", 2)):
            grad_a += grad_state[key].T @ self.basis["a"][index]
            grad_b += grad_state[key].T @ self.basis["b"][index]
        grad_a, grad_b = self._pull_back(grad_a, grad_b)
        v = self.robot.limits.velocity[:, None]
        grad = np.concatenate([grad_state["q"].sum(axis=0) * self.half,
                               (grad_a * v).ravel(), (grad_b * v).ravel()])
        return value + penalty, grad

    def _full_regressor(self, q, dq, ddq) -> NDArray:
        y = regressor(self.robot, q, dq, ddq)
        if self.friction is not None:
            y = np.concatenate([y, self.friction.regressor(dq)], axis=-1)
        return y

    def value(self, traj: FourierTrajectory) -> tuple[float, float]:
        q, dq, ddq = traj.sample(self.t)
        w = self.base.reduce(self._full_regressor(q, dq, ddq)).reshape(-1, self.base.rank)
        return criterion_value(self.criterion, w)[0], float(np.linalg.cond(w))


def optimize_excitation(robot: Robot, *, criterion: str = "cond", harmonics: int = 10,
                        period: float = 20.0, rate: float = 100.0, margin: float = 0.95,
                        rest: bool = True, friction: FrictionModel | None = None,
                        torque_limits: bool = True, starts: int = 2, start_iterations: int = 15,
                        max_iterations: int = 45, seed: int = 0,
                        continuous_range: float = CONTINUOUS_RANGE,
                        progress: Callable[[str], None] | None = None) -> ExcitationResult:
    """An optimised Fourier excitation for ``robot`` (see the module docstring).

    ``period`` [s] sets ``omega_f = 2 pi / period``; ``rate`` [Hz] the evaluation grid;
    ``margin`` the fraction of every limit the trajectory may use; ``rest``: zero velocity and
    acceleration at t = 0 and at every period (the default; ``False``: the trajectory starts
    and ends at speed, for simulation only, see ``save_trajectory``); ``friction``: linear
    friction columns to include in the regressor (default: rigid-body base parameters only);
    ``torque_limits``: keep the torques of the robot's own model (the prior) within limits.

    Limits the robot does not give are filled in first (``dynid.excitation.limits``):
    acceleration limits derived from the effort limits and the inertia, a velocity where
    none is given, and ``[-continuous_range, continuous_range]`` for a joint without a
    position range (a continuous joint); the result's ``limits`` and ``derived_limits`` say
    which.
    """
    if criterion not in CRITERIA:
        raise ValueError(f"`criterion` must be one of {CRITERIA}, got {criterion!r}")
    completed = excitation_limits(robot, continuous_range=continuous_range)
    robot = completed.robot
    _check_limits(robot)
    if harmonics < 1 or period <= 0 or rate <= 0 or starts < 1:
        raise ValueError("`harmonics`, `period`, `rate` and `starts` must be positive")
    if rest and harmonics < 2:
        raise ValueError(f"`rest` needs `harmonics` >= 2 (one harmonic at rest is no motion), "
                         f"got {harmonics}: give more harmonics, or rest=False")
    if not 0 < margin <= 1:
        raise ValueError(f"`margin` must be in (0, 1], got {margin}")
    say = progress or (lambda _line: None)
    clock = time.perf_counter()
    problem = _Problem(robot, criterion, harmonics, period, rate, margin, rest, friction,
                       torque_limits)
    if problem.t.size * robot.n_joints <= problem.base.rank:
        raise ValueError("`period` x `rate` gives fewer equations than base parameters")
    n = robot.n_joints
    history: list[float] = []

    def start_point(k: int) -> NDArray:
        # starts use 80 % of the margin: inside the limits, with room for the search to grow
        unit = random_fourier(robot, harmonics=harmonics, omega_f=problem.omega,
                              margin=0.8 * margin, seed=seed + k)
        v = robot.limits.velocity[:, None]
        return np.concatenate([np.zeros(n), (unit.a / v).ravel(), (unit.b / v).ravel()])

    def local(x0: NDArray, iterations: int):
        return scipy.optimize.minimize(
            problem.objective, x0, jac=True, method="L-BFGS-B",
            bounds=[(-margin, margin)] * n + [(None, None)] * (x0.size - n),
            options={"maxiter": iterations},
            callback=lambda intermediate_result: history.append(float(intermediate_result.fun)),
        )

    # one BLAS thread: the objective's SVD of a tall (N n, r) matrix gains nothing from more,
    # and with busy CPUs OpenBLAS's waiting threads made it 35x slower (0.84 s against 0.024 s
    # for Panda's 14000 x 43 on the 2-core workplace machine, load 4.5)
    with threadpool_limits(limits=1, user_api="blas"):
        best, start_value = None, np.inf
        for k in range(starts):
            x0 = start_point(k)
            value = problem.objective(x0)[0]
            start_value = min(start_value, value)
            result = local(x0, start_iterations)
            say(f"start {k + 1}/{starts}: {criterion} {value:.4g} -> {result.fun:.4g}")
            if best is None or result.fun < best.fun:
                best = result
        final = local(best.x, max_iterations)
        say(f"refined: {criterion} {final.fun:.4g} after {final.nit} iterations "
            f"({time.perf_counter() - clock:.1f} s)")
        trajectory = problem.trajectory(final.x)
        gain = limit_gain(trajectory, robot, margin)
        if (gain < 1).any():
            trajectory = _scaled(trajectory, np.minimum(gain, 1.0))
        value, condition = problem.value(trajectory)

        def lifted_condition(other: Robot) -> float:
            """The condition number ``other`` (the same robot, one limit raised) reaches from
            this optimum: one more refinement, warm-started, feasibly scaled."""
            lifted = _Problem(other, criterion, harmonics, period, rate, margin, rest,
                              friction, torque_limits)
            found = scipy.optimize.minimize(
                lifted.objective, final.x, jac=True, method="L-BFGS-B",
                bounds=[(-margin, margin)] * n + [(None, None)] * (final.x.size - n),
                options={"maxiter": max_iterations})
            candidate = lifted.trajectory(found.x)
            room = limit_gain(candidate, other, margin)
            if (room < 1).any():
                candidate = _scaled(candidate, np.minimum(room, 1.0))
            return lifted.value(candidate)[1]

        crippled = (_under_excited(completed, condition, lifted_condition)
                    if np.isfinite(value) else [])
    if not np.isfinite(value):
        raise ValueError(f"no trajectory excites every base parameter ({criterion} is inf): "
                         "use more harmonics or a longer period")
    # the smallest distance to a position limit, from a dense sampling of one period
    q, dq, ddq = trajectory.sample(np.linspace(0, trajectory.period, 20_001))
    margin_q = float(np.min(np.minimum(q - robot.limits.lower, robot.limits.upper - q)))
    message = str(final.message)
    for entry in crippled:
        warnings.warn(entry["message"], UnderExcitedWarning, stacklevel=2)
    if np.isfinite(robot.limits.torque).all():
        peak = np.max(np.abs(rnea(robot, q, dq, ddq) + robot.friction.torque(dq))
                      / robot.limits.torque)
        if peak > 1:
            message += f"; the prior model's torques reach {peak:.2f} x their limits"
    return ExcitationResult(
        trajectory=trajectory, criterion=criterion, value=value, condition_number=condition,
        start_value=float(start_value), max_abs_q_margin=margin_q,
        success=bool(final.success), message=message, n_evaluations=problem.evaluations,
        seconds=time.perf_counter() - clock, history=history, limits=robot.limits,
        derived_limits=completed.notes(), under_excited=crippled,
    )


def _under_excited(completed: CompletedLimits, condition: float,
                   lifted_condition: Callable[[Robot], float]) -> list[dict]:
    """The joints whose derived acceleration limit cripples the excitation (the module
    docstring's two tests; ``lifted_condition(robot)``: the condition number reached with the
    robot's limits raised), each a dict: ``joint`` (1-based), ``name``, ``limit`` and
    ``lifted`` [rad/s^2 or m/s^2], ``source`` (how the limit was derived), ``condition`` and
    ``condition_lifted``, ``message``."""
    robot = completed.robot
    limits = robot.limits
    n = robot.n_joints
    if n < 2:
        return []
    half = 0.5 * (limits.upper - limits.lower)
    swing = limits.acceleration / half
    prismatic = np.array([joint.kind == "prismatic" for joint in robot.joints])
    cap = np.where(prismatic, PRISMATIC_ACCELERATION_CAP, ACCELERATION_CAP)
    out = []
    for j in completed.derived["acceleration"]:
        reference = float(np.median(np.delete(swing, j)))
        if not swing[j] < UNDER_EXCITED_RATIO * reference:
            continue
        lifted = min(reference * half[j], cap[j])
        raised = limits.acceleration.copy()
        raised[j] = lifted
        better = lifted_condition(dataclasses.replace(robot, limits=dataclasses.replace(
            limits, acceleration=raised)))
        if not condition >= UNDER_EXCITED_GAIN * better:
            continue
        name = robot.joint_names[j]
        unit = "m/s^2" if prismatic[j] else "rad/s^2"
        values = " ".join(_rounded_down(v) for v in raised)
        message = (
            f"{name} (joint {j + 1}) is under-excited: its acceleration limit "
            f"{limits.acceleration[j]:.3g} {unit} was derived ({completed.sources.get(j, '')}), "
            f"{reference * half[j] / limits.acceleration[j]:.3g}x below what the other joints "
            f"allow for its range; the condition number is {condition:.3g}, and "
            f"{better:.3g} with a limit of {lifted:.3g} {unit} on it. If the arm allows "
            f"it, give its real limit: `--acceleration-limit {values}` on `dynid excite` (one "
            "per joint; or `limits.acceleration` in a robot file); the torque limits still "
            "hold through the prior model")
        out.append({"joint": j + 1, "name": name, "limit": float(limits.acceleration[j]),
                    "lifted": float(lifted), "source": completed.sources.get(j, ""),
                    "condition": float(condition), "condition_lifted": float(better),
                    "message": message})
    return out


def _rounded_down(value: float) -> str:
    """``value`` to three significant digits, rounded towards zero: a limit printed for the
    user to copy never exceeds the one it stands for."""
    if value <= 0 or not np.isfinite(value):
        return f"{value:.3g}"
    step = 10.0 ** (np.floor(np.log10(value)) - 2)
    return f"{np.floor(value / step * (1 + 1e-12)) * step:.3g}"
