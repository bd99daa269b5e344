"""DIDIM and PC-DIDIM: the direct and inverse dynamic identification model (Gautier, Janot &
Vandanjon, IEEE TCST 21(2), 2013), and its physically consistent form (BIRDy's PC-DIDIM).

Each iteration simulates the closed loop with the current estimate as the plant, under the
controller that ran and on the reference it tracked (``_loops.ClosedLoops``), and fits the
measured torques on the regressor built at the *simulated* states:
``tau_measured = Y_b(q_s, dq_s, ddq_s) theta`` — IDIM-OLS with ``(q_s, dq_s, ddq_s)`` in place of
filtered measurements (``identify``), or CLS-3 / log-Cholesky (``identify_constrained``) for
PC-DIDIM. Since the simulated applied torque is ``Y_b(q_s, dq_s, ddq_s) theta_k`` exactly, the
step is the Gauss-Newton step of the torque output error ``|tau_m - tau_s(theta)|^2`` with its
Jacobian taken as ``Y_b`` at the simulated states (the paper's eq. 21-25). The regressor is free
of measurement noise and of filter distortion, so only the torque noise is left, on the
right-hand side, where least squares is unbiased.

A step whose closed loop diverges (an estimate that is no plant) or whose torque error rises is
halved (``_loops.MAX_HALVINGS`` times at most); the fit stops when the estimate's relative
change or the torque error's falls below ``tolerance`` (converged), when no halving of the
proposed step lowers the error (converged when that step is below ``tolerance`` or within the
coefficients' standard deviations: DIDIM's fixed point at the noise level), or after
``max_iterations``.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from collections.abc import Sequence

import numpy as np

from dynid.data.dataset import Dataset
from dynid.friction.models import FrictionModel
from dynid.identification._fitting import fit_base
from dynid.identification._stream import fold_logs
from dynid.identification.constrained.cls import InconsistentPriorWarning, identify_constrained
from dynid.identification.estimate import Estimate, Method, Problem
from dynid.identification.linear.estimators import OLS
from dynid.identification.simulation._loops import (
    MAX_HALVINGS,
    NEGLIGIBLE_STEP,
    ClosedLoops,
    check_iterations,
    within_std,
)
from dynid.model.consistency import check_consistency
from dynid.robot import Robot

__all__ = ["CONSISTENT_FITS", "METHODS", "identify_didim"]

#: The inner fits of PC-DIDIM.
CONSISTENT_FITS = ("cls3", "log-cholesky")


def identify_didim(robot: Robot, logs: Dataset | Sequence[Dataset], references, controller, *,
                   start=None, consistent: str | None = None,
                   friction: FrictionModel | None = None, max_iterations: int = 20,
                   tolerance: float = 1e-6, prior=None, weight: float = 0.0) -> Estimate:
    """DIDIM (``consistent=None``) or PC-DIDIM (``consistent="cls3"`` or ``"log-cholesky"``)
    on closed-loop ``logs`` (one or several; measured joint torques, uniformly sampled once per
    control period) — see the module.

    ``references``: the trajectory each log's controller tracked (one for all logs, or one per
    log; ``sample(t) -> (q_d, dq_d, ddq_d)``); ``controller``: the ``Controller`` that ran (one
    for all, or one per log). ``start``: ``(n, 10)`` link parameters of the initial estimate
    (None: the robot's own, nominal ones), with the robot's friction coefficients where its
    friction model is ``friction`` (default ``default_friction(robot)``), else no friction.
    ``max_iterations`` simulations and fits at most; ``tolerance``: the relative change of the
    coefficients (and of the torque error) below which the fit has converged.
    PC-DIDIM's constrained fit takes the robot's bounds; ``prior`` ``(n, 10)`` and ``weight``
    go to it (default: no regulariser; with a weight and no prior, the previous iterate is the
    prior, which damps the step and vanishes at the fixed point).

    Returns an ``Estimate`` (``method`` "didim" or "pc-didim"): the model, whether the
    tolerance was met, the iterations and, in ``details``, the relative torque error
    ``|tau_m - tau_s| / |tau_m|`` of each simulated iterate (``costs``, the start's first),
    the relative changes, the step lengths taken (1: a full step) and the inner fit.
    """
    began = time.perf_counter()
    check_iterations(max_iterations, tolerance)
    if consistent is not None and consistent not in CONSISTENT_FITS:
        raise ValueError(f"`consistent` must be None (DIDIM) or one of {CONSISTENT_FITS} "
                         f"(PC-DIDIM), got {consistent!r:.40}")
    loops = ClosedLoops(robot, logs, references, controller, friction=friction)
    compiled: dict = {}  # PC-DIDIM: its SDP compiled once, each iteration its states
    if consistent is not None and robot.bounds is None:
        raise ValueError(f"`robot`: {robot.name!r} has no parameter bounds, which PC-DIDIM's "
                         "constrained fit needs")
    full = loops.start_vector(start)
    # PC-DIDIM's iterates are consistent as convex combinations of consistent ones (a halved
    # step mixes the fit with the previous iterate): from an inconsistent start the first
    # step is taken whole, the constrained fit itself, whatever its torque error
    inconsistent_start = (consistent is not None
                          and not check_consistency(loops.links(full)).consistent)
    model = loops.model(full)
    runs = loops.simulate_start(model)
    cost = loops.torque_cost(runs)
    costs, changes, steps = [cost], [], []
    status, converged = f"stopped after max_iterations = {max_iterations}", False
    parameters = None
    iterations = 0
    for iteration in range(1, max_iterations + 1):
        iterations = iteration
        data = loops.regression_logs(runs)
        fitted, std, fitted_links = _fit(loops, data, consistent, full, prior, weight,
                                         compiled)
        proposal = fitted - full
        base = loops.template.base
        size = float(np.linalg.norm(base.regrouping @ full))
        # a step within the noise level that does not lower the error is not halved: DIDIM
        # has reached its fixed point to the noise (see below)
        within_noise = within_std(base.regrouping @ proposal, std)
        whole = inconsistent_start and iteration == 1  # the first fit, not a mixture
        length, accepted = 1.0, None
        for _ in range(1 if within_noise or whole else MAX_HALVINGS + 1):
            trial = full + length * proposal
            trial_model = loops.model(trial)
            trial_runs = loops.simulate(trial_model)
            if trial_runs is not None:
                trial_cost = loops.torque_cost(trial_runs)
                if trial_cost <= cost or whole:
                    accepted = (trial, trial_model, trial_runs, trial_cost)
                    break
            length /= 2
        change = float(np.linalg.norm(base.regrouping @ proposal)) / max(size, 1e-300)
        if accepted is None and whole:
            raise ValueError("`start` is not physically consistent and PC-DIDIM's first "
                             "constrained fit cannot be simulated in closed loop: start from a "
                             "consistent estimate")
        if accepted is None:
            # no step along the fit's direction lowers the torque error: DIDIM's fixed point
            # (not quite the error's minimum under noise) when the proposed step is below the
            # tolerance or within the coefficients' standard deviations (the noise level)
            converged = change < tolerance or within_noise
            status = ("converged: the torque error has stagnated, the proposed step within "
                      "the coefficients' standard deviations" if converged else
                      f"stopped: no step lowers the torque error (the proposed step changes "
                      f"the coefficients by {change:.2g}, beyond their standard deviations)")
            changes.append(change)
            break
        full, model, runs, new_cost = accepted
        if consistent is not None:
            parameters = (fitted_links if length == 1.0
                          else loops.links(full))
        changes.append(length * change)
        steps.append(length)
        stagnant = abs(cost - new_cost) <= tolerance * max(new_cost, 1e-300)
        cost = new_cost
        costs.append(cost)
        if length * change < tolerance or stagnant or within_std(
                length * (base.regrouping @ proposal), std, NEGLIGIBLE_STEP):
            converged = True
            status = ("converged: the coefficients changed by less than the tolerance"
                      if length * change < tolerance else
                      "converged: the torque error has stagnated" if stagnant else
                      "converged: the step is below 10 % of the coefficients' standard "
                      "deviations (RMS)")
            break
    if consistent is not None and parameters is None:
        parameters = loops.links(full)
    if consistent is not None:
        model = model.with_physical_parameters(
            parameters, method="pc-didim",
            rotor_inertia=loops.rotors(full) if model.rotor_inertia else None)
    model = _with_report(model, std, "pc-didim" if consistent else "didim", costs, converged,
                         iterations)
    return Estimate(method="pc-didim" if consistent else "didim", model=model,
                    seconds=time.perf_counter() - began, converged=converged, status=status,
                    iterations=iterations, parameters=parameters,
                    details={"costs": costs, "changes": changes, "steps": steps,
                             "inner_fit": consistent or "ols"})


def _fit(loops: ClosedLoops, data: list[Dataset], consistent: str | None, full, prior,
         weight, compiled: dict) -> tuple:
    """The inner fit on the simulated states: ``(full vector, std of the coefficients, links
    (n, 10) or None)``."""
    template, robot = loops.template, loops.robot
    logs = data[0] if len(data) == 1 else data
    if consistent is None:
        # identify(robot, logs, friction=..., offsets="shared") on the fixed template: its
        # base parameters are the robot's, decided once, not again at every iteration
        estimator = OLS()
        fit_base(estimator, fold_logs(template, data, 0), template.base.base_names,
                 "the simulated states", "every joint must move, in both directions for "
                 "Coulomb friction")
        fitted = dataclasses.replace(template, coefficients=estimator.coef_)
        return fitted.equivalent_parameters, estimator.std_, None
    if prior is None:
        links = loops.links(full)
        prior = links if check_consistency(links).consistent else None
    with warnings.catch_warnings():
        if not weight:  # no regulariser: its prior plays no part, whatever it is
            warnings.simplefilter("ignore", InconsistentPriorWarning)
        result = identify_constrained(robot, logs, method=consistent, friction=loops.friction,
                                      rotor_inertia=template.rotor_inertia, offsets="shared",
                                      prior=prior, weight=weight, reuse=compiled)
    if not result.success:
        raise ValueError(f"PC-DIDIM: the constrained fit on the simulated states failed "
                         f"({result.status})")
    rotor = result.model.robot.rotor_inertia if template.rotor_inertia else []
    vector = np.concatenate([result.parameters.ravel(), rotor, result.friction])
    return vector, result.model.std, result.parameters


def _with_report(model, std, method: str, costs: list[float], converged: bool,
                 iterations: int):
    # the inner fit's std, at the simulated states: it leaves out the simulation's error
    report = {**model.report, "method": method, "std_kind": "lower bound",
              "iterations": iterations, "converged": converged,
              "relative_error_percent": 100 * costs[-1], "costs": costs}
    return dataclasses.replace(model, std=std, report=report)


def _run(consistent: str | None):
    def run(problem: Problem, **options) -> Estimate:
        return identify_didim(problem.robot, problem.logs, problem.references,
                              problem.controller, start=problem.start, friction=problem.friction,
                              consistent=options.pop("consistent", consistent),
                              prior=options.pop("prior", problem.prior), **options)
    return run


METHODS = (
    Method("didim", "simulation", False, frozenset({"effort", "reference", "controller"}),
           "Gautier, Janot & Vandanjon 2013, IEEE TCST 21(2) (DIDIM)", _run(None)),
    Method("pc-didim", "simulation", True, frozenset({"effort", "reference", "controller"}),
           "Gautier, Janot & Vandanjon 2013 with CLS-3 inner fit (BIRDy's PC-DIDIM)",
           _run("cls3")),
)
