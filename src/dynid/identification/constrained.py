"""Physically constrained identification of the full link parameters from time series (the
Jaco2 comparison paper's CLS-1/2/3; Rucker & Wensing's log-Cholesky least squares).

The data enter compressed: the triangular factor ``[[R, z], [0, rho]]`` of ``[Y_b tau]``
(``dynid.identification._compress``) turns ``|Y_b pi_b - tau|^2`` into
``|R pi_b - z|^2 + rho^2`` — an (r, r) problem whatever the number of samples. Since
``pi_b = G [pi; f]`` (standard link parameters and friction coefficients), the unknowns are the
full ``pi`` (10 n) and ``f``:

- ``cls1``: mass bounds and CoM boxes as bounds on (m, m c), closest to the data (a QP);
- ``cls2``: plus physical feasibility, ``I_com >= 0`` as the LMI of Jaco2 eq. 3;
- ``cls3``: full consistency, pseudo-inertia ``J >= 0`` (the triangle inequality), CoM inside
  its box, the link's bounding ellipsoid when given (density realizability), the total-mass
  range; with a regulariser towards a prior, Euclidean (scaled) or entropic (log-det
  divergence of Lee, Wensing & Park). The robot files bound the CoM by a box; Jaco2 eq. 6's
  ellipsoid, drawn through that box's corners, contains the box and would add nothing;
- ``log-cholesky``: nonlinear least squares on log-Cholesky coordinates that map onto
  consistent bodies inside the CoM boxes, mass bounds and total-mass range by construction
  (``dynid.identification.log_cholesky``; scipy, started from CLS-3).

Every problem is scaled (parameters by the bounds' sizes, the fit by ``|z|``) before Clarabel
sees it; the solver status is in the result, never hidden.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_link_table
from dynid.data.dataset import Dataset
from dynid.friction.models import FrictionModel
from dynid.identification._logs import (
    Offsets,
    as_logs,
    deviation_names,
    log_offsets,
)
from dynid.identification._sdp import link_pseudo_inertia, solve
from dynid.identification._stream import fold_logs
from dynid.identification.base_parameters import BaseParameters
from dynid.identification.consistency import ConsistencyReport, check_consistency
from dynid.identification.linear import default_friction, linear_template
from dynid.identification.log_cholesky import fit_log_cholesky
from dynid.identification.model import LinearModel
from dynid.identification.retrieval import check_bounds, parameter_scale
from dynid.robot import Robot
from dynid.robot.bounds import ParameterBounds, ellipsoid_matrix
from dynid.robot.inertia import (
    MASS,
    N_LINK_PARAMETERS,
    PHYSICAL_RTOL,
    physical_margin,
    pseudo_inertia,
)

__all__ = ["AUTO_EXTENSION", "CONSTRAINED_METHODS", "ConstrainedResult",
           "InconsistentPriorWarning", "PriorWeightEdgeWarning", "identify_constrained"]

CONSTRAINED_METHODS = ("cls1", "cls2", "cls3", "log-cholesky")


@dataclass
class ConstrainedResult:
    """A constrained fit: the model (its base coefficients predict torques), the full link
    parameters behind it, their consistency, and the solver's word."""

    method: str
    model: LinearModel
    parameters: NDArray  # (n, 10)
    friction: NDArray  # friction coefficients (type-major)
    consistency: ConsistencyReport
    status: str
    success: bool
    relative_error_percent: float  # 100 |tau - tau^| / |tau| on the identification data
    seconds: float

    def to_json(self) -> dict:
        return {"method": self.method, "status": self.status, "success": self.success,
                "relative_error_percent": self.relative_error_percent,
                "consistent": self.consistency.consistent,
                "within_bounds": self.consistency.within_bounds,
                "total_mass": self.consistency.total_mass, "seconds": self.seconds}


def _skew(cp, h):
    return cp.bmat([[0, -h[2], h[1]], [h[2], 0, -h[0]], [-h[1], h[0], 0]])


def identify_constrained(robot: Robot, data: Dataset | Sequence[Dataset], *,
                         method: str = "cls3", friction: FrictionModel | None = None,
                         bounds: ParameterBounds | None = None,
                         prior: ArrayLike | None = None, regulariser: str = "euclidean",
                         weight: float | Literal["auto"] | None = None,
                         rotor_inertia: bool | None = None, offsets: Offsets = "per-log",
                         progress: Callable[[str], None] | None = None,
                         client=None) -> ConstrainedResult:
    """Identify the full link parameters under physical constraints (see the module).

    ``data``: one log or several (each with its own torque offsets, as ``identify``).
    ``bounds`` default to the robot file's; ``prior`` ``(n, 10)`` defaults to the robot's own
    parameters (its CAD or previous values); ``weight`` scales the regulariser against the
    normalised data fit ``|tau - tau^|^2 / |tau|^2`` (default 1e-3 Euclidean, 1e-6 entropic;
    the divergence is of order one per link away from the prior, the fit of order
    (noise / torque)^2: larger weights trade fit for closeness to the prior). ``weight="auto"``
    chooses it among ``AUTO_WEIGHTS`` by the held-out error over ``AUTO_BLOCKS`` time blocks of
    every log (each block held out in turn, the others fitted), extending the grid by decades
    while its largest weight wins (``_auto_weight``; still at the edge: a
    ``PriorWeightEdgeWarning``); the report's ``prior_weight_curve`` holds the curve.
    ``rotor_inertia``: identify the drives' rotor inertias too, kept >= 0 (default: when the
    robot states them). ``client``: a Dask ``distributed.Client`` whose workers fold the logs
    (as ``identify``).
    """
    if method not in CONSTRAINED_METHODS:
        raise ValueError(f"`method` must be one of {CONSTRAINED_METHODS}, got {method!r}")
    if regulariser not in ("euclidean", "entropic"):
        raise ValueError(f"`regulariser` must be 'euclidean' or 'entropic', got {regulariser!r}")
    if regulariser == "entropic" and method not in ("cls3", "log-cholesky"):
        raise ValueError(f"`regulariser`: the entropic divergence needs the pseudo-inertia "
                         f"LMI of cls3, not {method!r}")
    if method == "log-cholesky" and regulariser != "euclidean":
        raise ValueError("`regulariser`: log-cholesky is a least-squares problem and takes the "
                         f"euclidean regulariser only, got {regulariser!r}")
    logs = as_logs(data)
    default = 1e-3 if regulariser == "euclidean" else 1e-6
    if weight is None:
        weight = default
    elif weight != "auto" and (isinstance(weight, str) or not weight >= 0):
        raise ValueError(f"`weight` must be a number >= 0 or 'auto', got {weight!r}")
    clock = time.perf_counter()
    n = robot.n_joints
    bounds = bounds if bounds is not None else robot.bounds
    if bounds is None:
        raise ValueError(f"`bounds`: {robot.name!r} has no parameter bounds; give them")
    check_bounds(bounds, bounds.total_mass)
    friction = default_friction(robot) if friction is None else friction
    if not friction.linear:
        raise ValueError(f"`friction` must be linear in its parameters, got {friction.name!r}")
    prior = robot.parameters if prior is None else as_link_table("prior", prior, n)
    warn_inconsistent_prior(prior, robot.link_names)
    rotor = bool(robot.rotor_inertia.any()) if rotor_inertia is None else rotor_inertia
    template = linear_template(robot, friction, rotor_inertia=rotor)
    base = template.base
    deviations = deviation_names(template, logs, offsets)
    blocks = _block_factors(template, logs, deviations, client)
    problem = _Problem(robot=robot, base=base, n_deviations=len(deviations), bounds=bounds,
                       prior=prior, regulariser=regulariser, method=method,
                       n_rotor=template.n_rotor)
    curve = None
    if weight == "auto":
        weight, curve = _auto_weight(problem, blocks, progress)
    factor = _stack(blocks)
    parameters, linear, status = problem.solve(factor, weight)
    unknowns = np.concatenate([base.regrouping @ np.concatenate([parameters.ravel(),
                                                                 linear[:-len(deviations)]
                                                                 if deviations else linear]),
                               linear[len(linear) - len(deviations):]])
    r, z, rho = factor[:-1, :-1], factor[:-1, -1], factor[-1, -1]
    residual = np.concatenate([r @ unknowns - z, [rho]])
    # the Jaco2 paper's uncertainty of a constrained estimate: sigma^2 (Y_b^T Y_b)^-1 on the
    # base representation, sigma^2 from the constrained fit's own residual
    n_rows = sum(log.n_samples for log in logs) * n
    sigma2 = float(residual @ residual) / max(n_rows - unknowns.size, 1)
    inverse = np.linalg.inv(r)
    covariance = sigma2 * inverse @ inverse.T
    torque_norm = np.sqrt(sum(float(np.sum(block[:, -1] ** 2)) for block in blocks))
    relative_error = float(100 * np.linalg.norm(residual) / torque_norm)
    body = robot.with_parameters(parameters)
    if rotor:
        body = body.with_rotor_inertia(np.maximum(linear[:n], 0.0))
    report = {"method": method, "status": status, "rank": base.rank,
              "condition_number": float(np.linalg.cond(r)),
              "relative_error_percent": relative_error, "prior_weight": float(weight),
              "n_samples": int(n_rows // n), "n_equations": int(n_rows)}
    if curve is not None:
        report["prior_weight_curve"] = curve
    if len(logs) > 1:
        report["logs"] = [{"source": str(log.metadata.get("source", f"log {k + 1}")),
                           "n_samples": log.n_samples} for k, log in enumerate(logs)]
        report["offsets"] = offsets
        per_log = log_offsets(template, logs, unknowns, covariance, len(deviations))
        if per_log is not None:
            report["log_offsets"] = per_log
    model = dataclasses.replace(template, robot=body, coefficients=unknowns[:base.rank],
                                std=np.sqrt(np.diag(covariance))[:base.rank], report=report)
    coefficients = linear[template.n_rotor:len(linear) - len(deviations)]
    return ConstrainedResult(
        method=method, model=model, parameters=parameters, friction=coefficients,
        consistency=check_consistency(parameters, bounds), status=status,
        success=status == "optimal",
        relative_error_percent=relative_error,
        seconds=time.perf_counter() - clock)


class InconsistentPriorWarning(UserWarning):
    """The prior the regulariser pulls towards is not a physical body."""


def warn_inconsistent_prior(prior: NDArray, names: Sequence[str]) -> None:
    """An ``InconsistentPriorWarning`` naming the prior's links that are no physical body (a
    URDF link breaking the triangle inequality, say): the fit is pulled towards an impossible
    body, and a heavy weight pulls hardest."""
    margins = physical_margin(prior)
    bad = [f"{name} ({margin:.2g})" for name, margin in zip(names, margins, strict=True)
           if margin < -PHYSICAL_RTOL]
    if bad:
        warnings.warn(f"the prior is not physically consistent at {', '.join(bad)} (lowest "
                      "pseudo-inertia eigenvalue over its largest entry): the regulariser "
                      "pulls towards a body that cannot exist; correct the prior or lower its "
                      "weight", InconsistentPriorWarning, stacklevel=3)


# --prior-weight auto: the candidates (the default 1e-3 among them) and the time blocks
AUTO_WEIGHTS = tuple(10.0 ** np.arange(-6, 2))
AUTO_BLOCKS = 4


def _block_factors(template: LinearModel, logs: Sequence[Dataset], deviations: list[str],
                   client=None) -> list[NDArray]:
    """The compressed ``[Y_b D tau]`` of each of ``AUTO_BLOCKS`` time blocks (block k: the
    k-th quarter of every log), so that any set of blocks is one small QR away; the logs are
    folded chunk by chunk (``dynid.identification._stream``)."""
    factors = fold_logs(template, logs, len(deviations), blocks=AUTO_BLOCKS, client=client)
    return [factors.stacked([key for key in factors.keys() if key[1] == k])
            for k in range(AUTO_BLOCKS)]


def _stack(factors: Sequence[NDArray]) -> NDArray:
    return np.linalg.qr(np.vstack(factors), mode="r")


class PriorWeightEdgeWarning(UserWarning):
    """``weight="auto"`` chose the largest weight tried, even after extending the grid: the
    held-out error still falls towards the prior; pass a weight explicitly to go further."""


AUTO_EXTENSION = 3  # decades tried above AUTO_WEIGHTS when its largest weight wins


def _auto_weight(problem: _Problem, blocks: list[NDArray],
                 progress: Callable[[str], None] | None) -> tuple[float, dict]:
    """The weight with the least held-out error over the time blocks: ``AUTO_WEIGHTS``, then,
    while the largest weight tried wins, one decade more (up to ``AUTO_EXTENSION``); a choice
    still at the grid's top edge warns (``PriorWeightEdgeWarning``) and is flagged in the
    curve (``at_edge``). A choice at the bottom edge (1e-6) is the data's own fit: no edge."""
    say = progress or (lambda _line: None)
    weights, errors = [], []

    def held_out(weight: float) -> None:
        total = 0.0
        for k, held in enumerate(blocks):
            parameters, linear, _ = problem.solve(
                _stack([b for j, b in enumerate(blocks) if j != k]), weight, log_cholesky=False)
            unknowns = problem.unknowns(parameters, linear)
            r, z, rho = held[:-1, :-1], held[:-1, -1], held[-1, -1]
            total += float(np.sum((r @ unknowns - z) ** 2) + rho**2)
        weights.append(float(weight))
        errors.append(total)
        say(f"prior weight {weight:.0e}: held-out squared error {total:.6g}")

    for weight in AUTO_WEIGHTS:
        held_out(weight)
    for _ in range(AUTO_EXTENSION):
        if int(np.argmin(errors)) != len(weights) - 1:
            break
        held_out(10.0 * weights[-1])
    best = int(np.argmin(errors))
    chosen, at_edge = weights[best], best == len(weights) - 1
    if at_edge:
        warnings.warn(
            f"prior weight auto: the held-out error is least at the largest weight tried, "
            f"{chosen:.0e} (the grid {AUTO_WEIGHTS[0]:.0e}-{AUTO_WEIGHTS[-1]:.0e} extended by "
            f"{len(weights) - len(AUTO_WEIGHTS)} decades): the data add little to the prior "
            "there; give the weight explicitly (--prior-weight W) to go further",
            PriorWeightEdgeWarning, stacklevel=3)
    return chosen, {"weights": weights, "held_out_squared_error": errors, "chosen": chosen,
                    "blocks": AUTO_BLOCKS, "at_edge": at_edge,
                    "extended": len(weights) - len(AUTO_WEIGHTS)}


@dataclass
class _Problem:
    """One constrained fit's setup, solved on any compressed ``[[R, z], [0, rho]]``."""

    robot: Robot
    base: BaseParameters
    n_deviations: int
    bounds: ParameterBounds
    prior: NDArray
    regulariser: str
    method: str
    n_rotor: int

    def unknowns(self, parameters: NDArray, linear: NDArray) -> NDArray:
        """The regression's unknowns (base parameters, then deviations) of a solution."""
        d = self.n_deviations
        full = np.concatenate([parameters.ravel(), linear[:linear.size - d]])
        return np.concatenate([self.base.regrouping @ full, linear[linear.size - d:]])

    def solve(self, factor: NDArray, weight: float, *, log_cholesky: bool = True
              ) -> tuple[NDArray, NDArray, str]:
        """Link parameters ``(n, 10)``, the linear unknowns (rotor inertias, friction,
        deviations) and the solver status."""
        r, z = factor[:-1, :-1], factor[:-1, -1]
        d = self.n_deviations
        extended = np.zeros((self.base.rank + d, self.base.n_parameters + d))
        extended[:self.base.rank, :self.base.n_parameters] = self.base.regrouping
        extended[self.base.rank:, self.base.n_parameters:] = np.eye(d)
        operator = r @ extended  # (full parameters, deviations) -> compressed residual
        scale = parameter_scale(self.bounds)
        method = "cls3" if self.method == "log-cholesky" else self.method
        parameters, linear, status = _convex(self, operator, z, scale, weight, method)
        if self.method == "log-cholesky" and log_cholesky:
            parameters, linear, status = fit_log_cholesky(
                operator, z, parameters, linear, self.bounds, scale=scale, prior=self.prior,
                weight=weight, nonnegative=self.n_rotor)
        return parameters, linear, status


def _convex(problem: _Problem, operator: NDArray, z: NDArray, scale: NDArray, weight: float,
            method: str) -> tuple[NDArray, NDArray, str]:
    """CLS-1/2/3 by cvxpy + Clarabel (see the module)."""
    import cvxpy as cp

    n = problem.robot.n_joints
    rigid = N_LINK_PARAMETERS * n
    n_linear = operator.shape[1] - rigid
    norm = np.linalg.norm(z)
    norm = norm if norm > 0 else 1.0
    prior, bounds, regulariser = problem.prior, problem.bounds, problem.regulariser
    x = cp.Variable(rigid)
    pi = cp.multiply(scale, x)
    f = cp.Variable(n_linear)
    constraints = [f[:problem.n_rotor] >= 0] if problem.n_rotor else []
    regularisers = []
    for k, link in enumerate(bounds.links):
        offset = N_LINK_PARAMETERS * k
        m, h, inertia, j = link_pseudo_inertia(pi, offset)
        constraints += [m >= link.mass[0], m <= link.mass[1]]
        constraints += [h >= m * link.com_lower, h <= m * link.com_upper]
        if method == "cls2":  # Jaco2 eq. 3: [[L, S(h)^T], [S(h), m E]] >= 0
            xx, xy, xz, yy, yz, zz = inertia
            origin = cp.bmat([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
            skew = _skew(cp, h)
            block = cp.bmat([[origin, skew.T], [skew, m * np.eye(3)]])
            constraints.append(0.5 * (block + block.T) >> 0)
        if method == "cls3":
            constraints.append(j >> 0)
            if link.ellipsoid_centre is not None:
                q = ellipsoid_matrix(link.ellipsoid_centre, link.ellipsoid_semi_axes)
                constraints.append(cp.trace(q @ j) >= 0)
            if regulariser == "entropic":
                # d(J | J0) = -log det(K) + tr(K) - 4 with K = J0^-1/2 J J0^-1/2 (the
                # divergence is invariant under congruence): K is of order one near the
                # prior, whatever the link's size; J0 is floored at 1e-6 of its largest
                # eigenvalue (a flat CAD body would make the divergence infinitely stiff)
                values, vectors = np.linalg.eigh(pseudo_inertia(prior[k]))
                values = np.maximum(values, 1e-6 * values[-1])
                root = vectors @ np.diag(values**-0.5) @ vectors.T
                congruent = root @ j @ root
                congruent = 0.5 * (congruent + congruent.T)
                regularisers.append(-cp.log_det(congruent) + cp.trace(congruent) - 4)
    if method == "cls3" and bounds.total_mass is not None:
        masses = cp.hstack([pi[N_LINK_PARAMETERS * k + MASS] for k in range(n)])
        constraints += [cp.sum(masses) >= bounds.total_mass[0],
                        cp.sum(masses) <= bounds.total_mass[1]]
    full = cp.hstack([pi, f])
    fit = cp.sum_squares(operator @ full - z) / norm**2
    if regularisers:
        regularise = cp.sum(cp.hstack(regularisers)) / n
    else:
        regularise = cp.sum_squares(x - prior.ravel() / scale) / rigid
    problem_ = cp.Problem(cp.Minimize(fit + weight * regularise), constraints)
    status = solve(problem_, method, hint="; check the bounds against the data")
    parameters = (scale * x.value).reshape(n, N_LINK_PARAMETERS)
    return parameters, (f.value if n_linear else np.zeros(0)), status
