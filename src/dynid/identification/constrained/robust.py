"""Physically consistent robust and regularised least squares: the estimates of
``dynid.identification.linear.robust`` and ``.regularised`` with the full link parameters
under CLS-3's constraints (pseudo-inertia ``J >= 0``, mass bounds, CoM boxes, bounding
ellipsoids, the total-mass range; ``dynid.identification.constrained.cls``), by LMI-SDP.

``identify_consistent(robot, logs, estimator=...)``:

- ``IRLS(loss=...)`` gives PC-IRLS (BIRDy's PC-IDIM-IRLS, Leboutet et al. 2021): the same
  passes as IRLS — each row weighted by its standardised residual, the logs re-folded weighted
  each pass — with every weighted step the CLS-3 problem on the weighted factor;
- ``Ridge(alpha)`` and ``ElasticNet(alpha, l1_ratio)`` give PC-ridge and PC-elastic-net: the
  CLS-3 problem with the penalty on the base coefficients ``theta = G [pi; f]`` (the
  unconstrained estimators' objective, ``1/2 |tau - W theta|^2 + alpha (l1 |theta|_1 +
  (1 - l1) / 2 |theta|^2)``, over the consistent set).

When the truth lies well inside the constraints and the data are rich, each reduces to its
unconstrained estimate. ``weight`` (default 0) adds CLS-3's Euclidean pull towards ``prior``;
at 0 the estimate is the constrained minimiser of the estimator's own objective alone (the
full parameters it does not determine are any consistent ones). There is no physically
consistent TLS or errors-in-variables ML in the literature: ``TLS`` and ``ML`` are refused.

The figures are those of ``identify_constrained``: the uncertainty ``sigma^2 (Y_b^T Y_b)^-1``
with ``sigma^2`` from the estimate's residual (on the unweighted rows), the relative error on
the identification data; the report holds the estimator's own figures.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid.data.dataset import Dataset
from dynid.friction.models import FrictionModel
from dynid.identification._logs import Offsets, as_logs, deviation_names
from dynid.identification._stream import Factors, fold_logs
from dynid.identification.constrained.cls import (
    ConstrainedResult,
    _convex,
    _Problem,
    checked_setup,
    constrained_result,
    warn_inconsistent_prior,
)
from dynid.identification.estimate import Estimate, Method, Problem
from dynid.identification.linear.idim import linear_template
from dynid.identification.linear.regularised import (
    ElasticNet,
    Ridge,
    check_penalty,
    penalised_from_options,
)
from dynid.identification.linear.robust import IRLS, irls_from_options
from dynid.identification.retrieval.retrieve import parameter_scale
from dynid.robot import Robot
from dynid.robot.bounds import ParameterBounds

__all__ = ["METHODS", "identify_consistent"]


def identify_consistent(robot: Robot, data: Dataset | Sequence[Dataset], *,
                        estimator: IRLS | Ridge | ElasticNet,
                        friction: FrictionModel | None = None,
                        bounds: ParameterBounds | None = None, prior: ArrayLike | None = None,
                        weight: float = 0.0, rotor_inertia: bool | None = None,
                        offsets: Offsets = "per-log") -> ConstrainedResult:
    """The physically consistent variant of ``estimator`` (unfitted; see the module) on one
    torque log or several; ``friction``, ``bounds``, ``prior``, ``rotor_inertia`` and
    ``offsets`` as ``identify_constrained``; ``weight`` >= 0 the prior's (default none).
    ``estimator`` gives the method and its settings; it is not fitted."""
    if not isinstance(estimator, (IRLS, Ridge, ElasticNet)):
        raise ValueError("`estimator` must be IRLS, Ridge or ElasticNet (no physically "
                         "consistent TLS or ML exists in the literature), got "
                         f"{type(estimator).__name__}")
    if isinstance(weight, bool) or not isinstance(weight, (int, float, np.number)) \
            or not np.isfinite(weight) or weight < 0:
        raise ValueError(f"`weight` must be a finite number >= 0, got {weight!r}")
    if isinstance(estimator, IRLS):
        estimator.check_params()
    else:
        check_penalty(estimator.alpha, estimator.l1_ratio)
    name = f"pc-{estimator.name}"
    clock = time.perf_counter()
    logs = as_logs(data)
    bounds, friction, prior = checked_setup(robot, bounds, friction, prior)
    if weight > 0:
        warn_inconsistent_prior(prior, robot.link_names)
    rotor = bool(robot.rotor_inertia.any()) if rotor_inertia is None else rotor_inertia
    template = linear_template(robot, friction, rotor_inertia=rotor)
    base = template.base
    deviations = deviation_names(template, logs, offsets)
    d = len(deviations)
    factors = fold_logs(template, logs, d)
    problem = _Problem(robot=robot, base=base, n_deviations=d, bounds=bounds, prior=prior,
                       regulariser="euclidean", method="cls3", n_rotor=template.n_rotor)
    extended = np.zeros((base.rank + d, base.n_parameters + d))
    extended[:base.rank, :base.n_parameters] = base.regrouping
    extended[base.rank:, base.n_parameters:] = np.eye(d)
    scale = parameter_scale(bounds)
    last: dict = {}
    compiled: dict = {}  # PC-IRLS: the CLS-3 problem built once, each pass its rows

    def constrained(weighted: Factors, penalty=None) -> NDArray:
        stacked = weighted.stacked()
        r, z = stacked[:-1, :-1], stacked[:-1, -1]
        norm = float(np.linalg.norm(z)) or 1.0
        parameters, linear, status = _convex(
            problem, r @ extended, z, scale, weight, "cls3", norm=norm,
            penalty=None if penalty is None else (lambda full: penalty(extended @ full)
                                                  / norm**2),
            reuse=compiled if penalty is None else None)
        last.update(parameters=parameters, linear=linear, status=status)
        return problem.unknowns(parameters, linear)

    if isinstance(estimator, IRLS):
        def refold(weights):
            return fold_logs(template, logs, d, weights=weights)

        unknowns, record = estimator.iterate(factors, refold, constrained)
        details = {"loss": estimator.loss, "iterations": int(record["n_iter"]),
                   "converged": bool(record["converged"]),
                   "scale": record["scale"].tolist(), "rejected": record["rejected"].tolist(),
                   "mean_weight": record["mean_weight"].tolist()}
        converged = bool(record["converged"])
    else:
        import cvxpy as cp

        alpha, l1_ratio = check_penalty(estimator.alpha, estimator.l1_ratio)
        # the estimator's objective times 2 (the fit enters _convex as |r|^2 / norm^2)

        def penalty(theta):
            return (alpha * (1.0 - l1_ratio) * cp.sum_squares(theta)
                    + 2.0 * alpha * l1_ratio * cp.norm1(theta))

        unknowns = constrained(factors, penalty)
        details = {"alpha": alpha, "l1_ratio": l1_ratio}
        converged = True
    parameters, linear, status = last["parameters"], last["linear"], last["status"]
    return constrained_result(name, robot, template, logs, factors.stacked(), unknowns,
                              parameters, linear, status, weight=weight, bounds=bounds,
                              offsets=offsets, n_deviations=d, rotor=rotor, extra=details,
                              began=clock, converged=converged)


def _methods() -> tuple[Method, ...]:
    def run_with(name: str, make):
        def run(problem: Problem, **options) -> Estimate:
            estimator = make(options)
            options.setdefault("prior", problem.prior)
            result = identify_consistent(problem.robot, problem.logs, estimator=estimator,
                                         friction=problem.friction, **options)
            return Estimate(name, result.model, 0.0, result.success, result.status,
                            iterations=int(result.model.report.get("iterations", 0)),
                            parameters=result.parameters, details=result.to_json())
        return run

    needs = frozenset({"ddq", "effort"})
    return (
        Method("pc-irls-huber", "constrained", True, needs,
               "Leboutet et al. 2021 (BIRDy PC-IDIM-IRLS); CLS-3 LMI", run_with(
                   "pc-irls-huber", irls_from_options("huber"))),
        Method("pc-irls-tukey", "constrained", True, needs,
               "Leboutet et al. 2021 (BIRDy PC-IDIM-IRLS), bisquare; CLS-3 LMI", run_with(
                   "pc-irls-tukey", irls_from_options("tukey"))),
        Method("pc-ridge", "constrained", True, needs,
               "Hoerl & Kennard 1970 penalty on the CLS-3 LMI-SDP", run_with(
                   "pc-ridge", penalised_from_options(Ridge))),
        Method("pc-elastic-net", "constrained", True, needs,
               "Zou & Hastie 2005 penalty on the CLS-3 LMI-SDP", run_with(
                   "pc-elastic-net", penalised_from_options(ElasticNet))),
    )


#: The methods of this module, behind the one contract (``dynid.identification.estimate``).
METHODS = _methods()
