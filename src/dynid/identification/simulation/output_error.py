"""CLOE and CLIE: closed-loop output error and closed-loop input error (Landau & Karimi,
Automatica 33(8), 1997; BIRDy's CLOE, Leboutet et al. 2021).

Both fit the base coefficients ``theta`` by Levenberg-Marquardt on the error between a log and
the closed loop of ``theta`` simulated again under the same controller on the same reference
(``_loops.ClosedLoops``): CLOE on the positions, ``|q_m - q_s(theta)|^2`` (what the encoders
logged, nothing differentiated); CLIE on the control torques, ``|tau_m - tau_s(theta)|^2``.

The Jacobians come from the sensitivities ``S = dq_s / dtheta`` of the linearised closed loop,
not from finite differences (40-60 simulations per step). The plant ``M(q) ddq + ... =
Y_b(q, dq, ddq) theta = tau`` under the law's feedback ``dtau = -G (Kp S + Kd S')`` (``G`` the
controller model's ``M^`` for computed torque, the identity for a joint impedance), with the
derivatives of ``M``, ``c``, ``g`` and friction along the state left out, gives

    M(q_s) S'' = -Y_b(q_s, dq_s, ddq_s) - G (Kp S + Kd S'_measured),

integrated along the simulated run as the controller runs: the feedback computed once per
period from the sensitivities at its start (the velocity as the encoders' backward difference
when the controller differentiates positions), held while the plant moves (``_sensitivities``,
compiled, one pass over the samples). CLIE's Jacobian is ``dtau_s / dtheta = -G (Kp S + Kd
S'_measured)``. The approximate Jacobian only proposes steps: a step is taken when the exactly
simulated error falls, else the damping grows (Marquardt's scaling by ``diag(J^T J)``).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence

import numpy as np
import scipy.linalg
from numpy.typing import NDArray

from dynid._jit import kernel
from dynid.data.dataset import Dataset
from dynid.dynamics import mass_matrix
from dynid.friction.models import FrictionModel
from dynid.identification.estimate import Estimate, Method, Problem
from dynid.identification.simulation._loops import (
    NEGLIGIBLE_STEP,
    ClosedLoops,
    check_iterations,
    within_std,
)
from dynid.model.linear_model import LinearModel
from dynid.robot import Robot

__all__ = ["METHODS", "identify_clie", "identify_cloe"]

# Levenberg-Marquardt: the first damping, its growth after a rejected step and shrinking after
# an accepted one, and the rejected steps in a row after which the fit stops
_FIRST_DAMPING = 1e-3
_GROW, _SHRINK = 10.0, 3.0
_MAX_REJECTED = 8


@kernel
def _sensitivities(inertia, gain_matrix, regressor, kp, kd, step, from_positions, s_out,
                   tau_out):
    """``S`` ``(N, n, p)`` and ``dtau / dtheta`` ``(N, n, p)`` of the linearised closed loop
    (see the module) along one run: ``inertia`` ``M(q_s)`` ``(N, n, n)``, ``gain_matrix``
    ``G`` ``(N, n, n)`` (computed torque) or ``(0, n, n)`` (a joint impedance: the identity),
    ``regressor`` ``Y_b`` ``(N, n, p)``, gains ``(n,)``, the period ``step`` [s]. ``M`` is
    solved by its Cholesky factor, all ``p`` columns at once (the column index innermost, where
    the loops are long and contiguous)."""
    samples, n, p = regressor.shape
    s = np.zeros((n, p))
    v = np.zeros((n, p))
    previous = np.zeros((n, p))
    feedback = np.empty((n, p))
    work = np.empty((n, p))
    factor = np.empty((n, n))
    computed_torque = gain_matrix.shape[0] > 0
    for k in range(samples):
        differenced = from_positions and k > 0
        for i in range(n):
            for j in range(p):
                rate = (s[i, j] - previous[i, j]) / step if differenced else v[i, j]
                feedback[i, j] = kp[i] * s[i, j] + kd[i] * rate
                s_out[k, i, j] = s[i, j]
        if computed_torque:
            for i in range(n):
                for j in range(p):
                    work[i, j] = 0.0
                for m in range(n):
                    g = gain_matrix[k, i, m]
                    for j in range(p):
                        work[i, j] += g * feedback[m, j]
                for j in range(p):
                    tau_out[k, i, j] = -work[i, j]
        else:
            for i in range(n):
                for j in range(p):
                    tau_out[k, i, j] = -feedback[i, j]
        # M = L L^T
        for i in range(n):
            for j in range(i + 1):
                total = inertia[k, i, j]
                for m in range(j):
                    total -= factor[i, m] * factor[j, m]
                factor[i, j] = np.sqrt(total) if i == j else total / factor[j, j]
        # work = M^-1 (dtau - Y_b): L y = b, then L^T x = y, every column at once
        for i in range(n):
            for j in range(p):
                work[i, j] = tau_out[k, i, j] - regressor[k, i, j]
            for m in range(i):
                f = factor[i, m]
                for j in range(p):
                    work[i, j] -= f * work[m, j]
            d = factor[i, i]
            for j in range(p):
                work[i, j] /= d
        for i in range(n - 1, -1, -1):
            for m in range(i + 1, n):
                f = factor[m, i]
                for j in range(p):
                    work[i, j] -= f * work[m, j]
            d = factor[i, i]
            for j in range(p):
                work[i, j] /= d
        for i in range(n):
            for j in range(p):
                previous[i, j] = s[i, j]
                s[i, j] += step * v[i, j] + 0.5 * step * step * work[i, j]
                v[i, j] += step * work[i, j]


def _normal_equations(loops: ClosedLoops, model: LinearModel, runs: list[Dataset],
                      output: str) -> tuple[NDArray, NDArray]:
    """``(J^T J, J^T residual)`` over every log, ``J = d y_s / d theta`` and ``residual =
    y_m - y_s`` (positions for CLOE, torques for CLIE), one log's Jacobian at a time."""
    n, r = loops.robot.n_joints, model.base.rank
    normal, gradient = np.zeros((r, r)), np.zeros(r)
    for log, run, law in zip(loops.logs, runs, loops.controllers, strict=True):
        regressor = np.ascontiguousarray(model.base_regressor(run.q, run.dq, run.ddq))
        inertia = np.ascontiguousarray(model.mass_matrix(run.q))
        if law.is_impedance:
            gain_matrix = np.empty((0, n, n))
        else:
            measured = (np.rint(run.q / law.resolution) * law.resolution if law.resolution > 0
                        else run.q)
            gain_matrix = np.ascontiguousarray(mass_matrix(law.model_for(loops.robot),
                                                           measured))
        kp, kd = law.gains(n)
        s, dtau = np.empty_like(regressor), np.empty_like(regressor)
        _sensitivities(inertia, gain_matrix, regressor, kp, kd, 1.0 / law.rate,
                       bool(law.velocity_from_positions), s, dtau)
        jacobian = (s if output == "position" else dtau).reshape(-1, r)
        residual = (log.q - run.q if output == "position" else log.tau - run.tau).ravel()
        normal += jacobian.T @ jacobian
        gradient += jacobian.T @ residual
    return normal, gradient


def _error(loops: ClosedLoops, runs: list[Dataset], output: str) -> float:
    """The sum of squared errors of the runs against the logs."""
    if output == "position":
        return sum(float(np.sum((log.q - run.q) ** 2))
                   for log, run in zip(loops.logs, runs, strict=True))
    return sum(float(np.sum((tau - run.tau) ** 2))
               for tau, run in zip(loops.measured, runs, strict=True))


def _output_error(method: str, output: str, robot: Robot, logs, references, controller, *,
                  start, friction, max_iterations: int, tolerance: float) -> Estimate:
    began = time.perf_counter()
    check_iterations(max_iterations, tolerance)
    loops = ClosedLoops(robot, logs, references, controller, friction=friction,
                        torques=output == "torque")
    theta = loops.template.base.regrouping @ loops.start_vector(start)
    model = dataclasses.replace(loops.template, coefficients=theta)
    runs = loops.simulate_start(model)
    rows = sum(log.n_samples for log in loops.logs) * robot.n_joints
    if rows <= theta.size:
        raise ValueError(f"`logs`: {rows} equations for {theta.size} coefficients")
    cost = _error(loops, runs, output)
    costs, changes, dampings = [math.sqrt(cost / rows)], [], []
    damping = _FIRST_DAMPING
    status, converged, iterations = f"stopped after max_iterations = {max_iterations}", False, 0
    std = np.full(theta.size, np.inf)
    for iteration in range(1, max_iterations + 1):
        iterations = iteration
        normal, gradient = _normal_equations(loops, model, runs, output)
        scale = np.diag(normal).copy()
        scale = np.maximum(scale, 1e-12 * scale.max())
        try:  # the Gauss-Newton step and sigma^2 (J^T J)^-1 by one Cholesky factor
            factor = scipy.linalg.cho_factor(normal)
            newton = scipy.linalg.cho_solve(factor, gradient)
            inverse = scipy.linalg.cho_solve(factor, np.eye(theta.size))
            std = np.sqrt(np.clip(np.diag(inverse), 0.0, None) * cost
                          / max(rows - theta.size, 1))
        except np.linalg.LinAlgError:  # some coefficient the logs do not determine
            newton = None
        accepted = None
        for _ in range(_MAX_REJECTED):
            delta = np.linalg.solve(normal + damping * np.diag(scale), gradient)
            trial = dataclasses.replace(model, coefficients=theta + delta)
            trial_runs = loops.simulate(trial)
            if trial_runs is not None:
                trial_cost = _error(loops, trial_runs, output)
                if trial_cost < cost:
                    accepted = (delta, trial, trial_runs, trial_cost)
                    damping = max(damping / _SHRINK, 1e-12)
                    break
            damping *= _GROW
        size = max(float(np.linalg.norm(theta)), 1e-300)
        if accepted is None:
            # no damping lowers the error: the minimum, to the noise level, when the
            # Gauss-Newton step lies within the coefficients' standard deviations
            within_noise = newton is not None and within_std(newton, std)
            converged = within_noise or (newton is not None
                                         and np.linalg.norm(newton) / size < tolerance)
            status = ("converged: no step lowers the error, the Gauss-Newton step within the "
                      "coefficients' standard deviations (RMS)" if converged else
                      "stopped: no step lowers the error")
            break
        delta, model, runs, new_cost = accepted
        theta = model.coefficients
        change = float(np.linalg.norm(delta)) / size
        stagnant = cost - new_cost <= tolerance * new_cost
        cost = new_cost
        costs.append(math.sqrt(cost / rows))
        changes.append(change)
        dampings.append(damping)
        if change < tolerance or stagnant or within_std(delta, std, NEGLIGIBLE_STEP):
            converged = True
            status = ("converged: the coefficients changed by less than the tolerance"
                      if change < tolerance else "converged: the error has stagnated"
                      if stagnant else "converged: the step is below 10 % of the "
                      "coefficients' standard deviations (RMS)")
            break
    unit = "rad" if output == "position" else "N m"
    # Gauss-Newton's std at the last iterate (LinearModel.std_kind)
    report = {"method": method, "std_kind": "lower bound", "iterations": iterations,
              "converged": converged,
              f"rms_error_{'rad' if output == 'position' else 'nm'}": costs[-1],
              "costs": costs, "rank": model.base.rank}
    model = dataclasses.replace(model, std=std, report=report)
    return Estimate(method=method, model=model, seconds=time.perf_counter() - began,
                    converged=converged, status=status, iterations=iterations,
                    details={"costs": costs, "cost_unit": f"RMS {unit}", "changes": changes,
                             "dampings": dampings})


def identify_cloe(robot: Robot, logs: Dataset | Sequence[Dataset], references, controller, *,
                  start=None, friction: FrictionModel | None = None,
                  max_iterations: int = 30, tolerance: float = 1e-8) -> Estimate:
    """CLOE: the base coefficients whose simulated closed loop reproduces the logged positions
    (see the module). Arguments as ``identify_didim``: ``references`` and ``controller`` one
    for all logs or one per log, ``start`` ``(n, 10)`` link parameters (None: the robot's own),
    ``friction`` the linear friction columns; ``tolerance`` on the relative change of the
    coefficients and of the squared error. ``details["costs"]``: the RMS position error [rad]
    of each accepted iterate (the start's first)."""
    return _output_error("cloe", "position", robot, logs, references, controller, start=start,
                         friction=friction, max_iterations=max_iterations, tolerance=tolerance)


def identify_clie(robot: Robot, logs: Dataset | Sequence[Dataset], references, controller, *,
                  start=None, friction: FrictionModel | None = None,
                  max_iterations: int = 30, tolerance: float = 1e-8) -> Estimate:
    """CLIE: the base coefficients whose simulated closed loop reproduces the logged control
    torques (see the module; arguments as ``identify_cloe``). ``details["costs"]``: the RMS
    torque error [N m] of each accepted iterate."""
    return _output_error("clie", "torque", robot, logs, references, controller, start=start,
                         friction=friction, max_iterations=max_iterations, tolerance=tolerance)


def _run(fit):
    def run(problem: Problem, **options) -> Estimate:
        return fit(problem.robot, problem.logs, problem.references, problem.controller,
                   start=problem.start, friction=problem.friction, **options)
    return run


METHODS = (
    Method("cloe", "simulation", False, frozenset({"reference", "controller"}),
           "Landau & Karimi 1997, Automatica 33(8) (CLOE); BIRDy (Leboutet et al. 2021)",
           _run(identify_cloe)),
    Method("clie", "simulation", False, frozenset({"effort", "reference", "controller"}),
           "Landau & Karimi 1997 (closed-loop input error); BIRDy (Leboutet et al. 2021)",
           _run(identify_clie)),
)
