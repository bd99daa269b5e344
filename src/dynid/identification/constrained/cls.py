"""Physically constrained identification of the full link parameters from time series (the
Jaco2 comparison paper's CLS-1/2/3; Rucker & Wensing's log-Cholesky least squares).

The data enter compressed: the triangular factor ``[[R, z], [0, rho]]`` of ``[Y_b tau]``
(``dynid.model._compress``) turns ``|Y_b pi_b - tau|^2`` into
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
  (``dynid.identification.constrained.log_cholesky``; scipy, started from CLS-3).

Every problem is scaled (parameters by the bounds' sizes, the fit by ``|z|``) before Clarabel
sees it; the solver status is in the result, never hidden.

Motor-current logs: the drive gains ``K`` (``tau = K i``) join the unknowns, the scale fixed by
a payload log or a known gain (Gautier & Briot; ``dynid.identification.drive_gains``). Every
method then minimises the fit in current units under its constraints, by sequential convex
Gauss-Newton from the linear form (``_CurrentFit``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import pickle
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_link_table
from dynid.data.dataset import Dataset
from dynid.friction.models import FrictionModel
from dynid.identification._fitting import warn_prior_decides
from dynid.identification._logs import (
    Offsets,
    as_logs,
    deviation_names,
    excitation_faults,
    log_offsets,
)
from dynid.identification._sdp import link_pseudo_inertia, solve
from dynid.identification._stream import fold_logs
from dynid.identification.constrained.log_cholesky import CurrentGains, fit_log_cholesky
from dynid.identification.drive_gains import (
    KnownPayload,
    current_covariance,
    current_system,
    gains_and_std,
    gautier_briot_fit,
    joint_noise,
)
from dynid.identification.linear.idim import linear_template
from dynid.identification.retrieval.retrieve import check_bounds, parameter_scale
from dynid.model.base_parameters import BaseParameters, default_friction
from dynid.model.consistency import ConsistencyReport, check_consistency
from dynid.model.linear_model import LinearModel
from dynid.robot import Robot
from dynid.robot._robot import check_drive_gains
from dynid.robot.bounds import ParameterBounds, ellipsoid_matrix
from dynid.robot.inertia import (
    MASS,
    N_LINK_PARAMETERS,
    PHYSICAL_RTOL,
    physical_margin,
    pseudo_inertia,
)

__all__ = ["AUTO_EXTENSION", "CONSTRAINED_METHODS", "GAIN_FLOOR", "ConstrainedResult",
           "CurrentConvergenceWarning", "InconsistentPriorWarning", "PriorWeightEdgeWarning",
           "identify_constrained"]

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
                         client=None, payload_data: Dataset | None = None,
                         payload: KnownPayload | None = None,
                         gains: Mapping[int | str, float] | None = None,
                         gain_range: ArrayLike | None = None,
                         reuse: dict | None = None) -> ConstrainedResult:
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
    (as ``identify``; torque logs).

    Motor currents (logs with ``effort="current"``): the drive gains ``K`` (``tau = K i``)
    are unknowns too, fixed in scale by ``payload_data`` with ``payload`` (a current log with
    a known payload on the last link) and/or ``gains`` (known gains, ``{joint number or name:
    K}``, kept fixed), as ``identify_drive_gains``; each unknown gain keeps the sign of the
    unconstrained Gautier-Briot fit, at least ``GAIN_FLOOR`` of its size, and stays inside
    ``gain_range`` ``(n, 2)`` [N m/A] (default the robot file's ``drive_gains.range``). The
    estimate is the constrained least-squares fit in current units (see
    ``_identify_currents``); the model carries ``drive_gains`` and ``drive_gains_std``, its
    report the gains, the payload's identified part and the Gauss-Newton steps.

    ``reuse``: a dict a caller keeps across fits of one robot, bounds and method on new data
    (PC-DIDIM's iterations): the semidefinite problem is compiled once (see ``_convex``).
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
    logs = as_logs(data, effort=None)
    currents = logs[0].effort == "current"
    logs = as_logs(data, effort="current" if currents else "torque")
    if not currents and (payload_data is not None or payload is not None or gains is not None
                         or gain_range is not None):
        raise ValueError("`payload_data`, `payload`, `gains` and `gain_range` are for motor-"
                         "current logs (effort='current'); `data` holds joint torques")
    default = 1e-3 if regulariser == "euclidean" else 1e-6
    if weight is None:
        weight = default
    elif weight != "auto" and (isinstance(weight, str) or not weight >= 0):
        raise ValueError(f"`weight` must be a number >= 0 or 'auto', got {weight!r}")
    clock = time.perf_counter()
    bounds, friction, prior = checked_setup(robot, bounds, friction, prior)
    warn_inconsistent_prior(prior, robot.link_names)
    rotor = bool(robot.rotor_inertia.any()) if rotor_inertia is None else rotor_inertia
    if currents:
        if weight == "auto":
            raise ValueError("`weight`: 'auto' is for torque logs; with motor currents give the "
                             "prior weight as a number")
        return _identify_currents(
            robot, logs, method=method, friction=friction, bounds=bounds, prior=prior,
            regulariser=regulariser, weight=weight, rotor=rotor, offsets=offsets,
            payload_data=payload_data, payload=payload, gains=gains, gain_range=gain_range,
            progress=progress, clock=clock)
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
    parameters, linear, status = problem.solve(factor, weight, reuse=reuse)
    unknowns = np.concatenate([base.regrouping @ np.concatenate([parameters.ravel(),
                                                                 linear[:-len(deviations)]
                                                                 if deviations else linear]),
                               linear[len(linear) - len(deviations):]])
    extra = {} if curve is None else {"prior_weight_curve": curve}
    return constrained_result(method, robot, template, logs, factor, unknowns, parameters,
                              linear, status, weight=weight, bounds=bounds, offsets=offsets,
                              n_deviations=len(deviations), rotor=rotor, extra=extra,
                              began=clock)


def constrained_result(method: str, robot: Robot, template: LinearModel,
                       logs: Sequence[Dataset], factor: NDArray, unknowns: NDArray,
                       parameters: NDArray, linear: NDArray, status: str, *, weight: float,
                       bounds: ParameterBounds, offsets: Offsets, n_deviations: int,
                       rotor: bool, extra: dict, began: float,
                       converged: bool = True) -> ConstrainedResult:
    """A constrained fit's result from its solution (``unknowns`` in the base representation;
    ``parameters`` (n, 10) and ``linear``, the rotor inertias, friction and offsets) and the
    triangular ``factor`` of ``[W tau]`` it fits: the model with its std, the report
    (``extra`` merged in) and the consistency. ``converged``: the estimator's own iterations
    (IRLS) ended on their tolerance."""
    n = robot.n_joints
    r, z, rho = factor[:-1, :-1], factor[:-1, -1], factor[-1, -1]
    residual = np.concatenate([r @ unknowns - z, [rho]])
    # the Jaco2 paper's uncertainty of a constrained estimate: sigma^2 (Y_b^T Y_b)^-1 on the
    # base representation, sigma^2 from the constrained fit's own residual
    n_rows = sum(log.n_samples for log in logs) * n
    sigma2 = float(residual @ residual) / max(n_rows - unknowns.size, 1)
    try:
        inverse = np.linalg.inv(r)
        covariance = sigma2 * inverse @ inverse.T
    except np.linalg.LinAlgError:  # the data do not determine every coefficient: no std
        covariance = np.full((unknowns.size, unknowns.size), np.inf)
    # |tau|: the factor's last column (an orthogonal reduction keeps each column's norm)
    relative_error = float(100 * np.linalg.norm(residual) / np.linalg.norm(factor[:, -1]))
    body = robot.with_parameters(parameters)
    if rotor:
        body = body.with_rotor_inertia(np.maximum(linear[:n], 0.0))
    base = template.base
    faults = excitation_faults(logs, robot.joint_names)
    names = [*base.base_names, *deviation_names(template, logs, offsets)]
    decided = warn_prior_decides(
        method, r, n_rows, names, "; ".join(faults) if faults else
        "a log that moves every joint, long enough for the base parameters and offsets")
    # the unconstrained formula at the constrained estimate: an active LMI or bound moves
    # the estimate in ways it does not see (LinearModel.std_kind)
    report = {"method": method, "status": status, "std_kind": "lower bound", "rank": base.rank,
              "condition_number": float(np.linalg.cond(r)),
              "relative_error_percent": relative_error, "prior_weight": float(weight),
              "n_samples": int(n_rows // n), "n_equations": int(n_rows), **decided, **extra}
    if len(logs) > 1:
        report["logs"] = [{"source": str(log.metadata.get("source", f"log {k + 1}")),
                           "n_samples": log.n_samples} for k, log in enumerate(logs)]
        report["offsets"] = offsets
        per_log = log_offsets(template, logs, unknowns, covariance, n_deviations)
        if per_log is not None:
            report["log_offsets"] = per_log
    model = dataclasses.replace(template, robot=body, coefficients=unknowns[:base.rank],
                                std=np.sqrt(np.diag(covariance))[:base.rank], report=report)
    return ConstrainedResult(
        method=method, model=model, parameters=parameters,
        friction=linear[template.n_rotor:len(linear) - n_deviations],
        consistency=check_consistency(parameters, bounds), status=status,
        success=status == "optimal" and converged, relative_error_percent=relative_error,
        seconds=time.perf_counter() - began)


def checked_setup(robot: Robot, bounds: ParameterBounds | None, friction: FrictionModel | None,
                  prior: ArrayLike | None) -> tuple[ParameterBounds, FrictionModel, NDArray]:
    """A constrained fit's bounds (default the robot's; refused without any), linear friction
    columns (default ``default_friction``) and prior (default the robot's parameters),
    checked."""
    bounds = bounds if bounds is not None else robot.bounds
    if bounds is None:
        raise ValueError(f"`bounds`: {robot.name!r} has no parameter bounds; give them")
    check_bounds(bounds, bounds.total_mass)
    friction = default_friction(robot) if friction is None else friction
    if not friction.linear:
        raise ValueError(f"`friction` must be linear in its parameters, got {friction.name!r}")
    prior = (robot.parameters if prior is None
             else as_link_table("prior", prior, robot.n_joints))
    return bounds, friction, prior


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
                      "pulls towards a body that cannot exist; correct the prior (the nearest "
                      "body: dynid.robot.inertia.nearest_physical, or a robot file's "
                      "`inertia.physical: nearest`) or lower its weight",
                      InconsistentPriorWarning, stacklevel=3)


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

    def solve(self, factor: NDArray, weight: float, *, log_cholesky: bool = True,
              reuse: dict | None = None) -> tuple[NDArray, NDArray, str]:
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
        parameters, linear, status = _convex(self, operator, z, scale, weight, method,
                                             reuse=reuse)
        if self.method == "log-cholesky" and log_cholesky:
            parameters, linear, status = fit_log_cholesky(
                operator, z, parameters, linear, self.bounds, scale=scale, prior=self.prior,
                weight=weight, nonnegative=self.n_rotor)
        return parameters, linear, status


def _convex(problem: _Problem, operator: NDArray, z: NDArray, scale: NDArray, weight: float,
            method: str, *, linear_bounds: tuple[NDArray, NDArray] | None = None,
            norm: float | None = None, magnify: float = 1.0,
            penalty: Callable | None = None,
            reuse: dict | None = None) -> tuple[NDArray, NDArray, str]:
    """CLS-1/2/3 by cvxpy + Clarabel (see the module): ``|operator [pi; f] - z|^2 / norm^2``
    (default ``norm = |z|``) plus the regulariser, under the method's constraints on ``pi``,
    the rotor inertias (the first ``n_rotor`` of ``f``) >= 0 and ``linear_bounds`` (lower,
    upper ``(len(f),)``, infinite where free) on ``f``; ``f`` is scaled by ``|z|`` over its
    columns' norms when bounded so. ``magnify`` multiplies the whole objective (the same
    minimiser): a fit of a tiny relative residual, magnified to order one, keeps Clarabel
    inside its tolerances. ``penalty(full)``: a convex cvxpy term in ``[pi; f]`` added to the
    objective (in its units: the fit over ``norm^2``), e.g. ridge or elastic net
    (``dynid.identification.constrained.robust``). ``reuse``: a dict kept by a caller that
    solves the same problem on other data again and again (PC-IRLS: each pass its weighted
    rows; PC-DIDIM: each iteration its simulated states): the first call builds the problem
    with the data and the prior as cvxpy parameters and keeps it there, the next ones with
    the same shape, weight, constraints and scale only set them (cvxpy compiles a problem once:
    its compilation, not Clarabel, is most of a solve's time — TX40 0.38 of 0.40 s). A fit with
    a ``penalty``, ``linear_bounds`` or the entropic regulariser is built each time."""
    import cvxpy as cp

    n = problem.robot.n_joints
    rigid = N_LINK_PARAMETERS * n
    n_linear = operator.shape[1] - rigid
    norm = np.linalg.norm(z) if norm is None else norm
    norm = norm if norm > 0 else 1.0
    if reuse is not None and (penalty is not None or linear_bounds is not None
                              or problem.regulariser == "entropic"):
        reuse = None  # the problem's form changes with its data: built each time
    prior, bounds, regulariser = problem.prior, problem.bounds, problem.regulariser
    key = (operator.shape, float(weight), method, float(magnify), problem.n_rotor,
           hashlib.sha256(pickle.dumps((bounds, scale))).hexdigest())
    if reuse is not None and reuse.get("key") == key:
        data, target, centre, x, y, f_scale, problem_ = reuse["problem"]
        data.value, target.value = operator / norm, z / norm
        centre.value = prior.ravel() / scale
        status = solve(problem_, method, hint="; check the bounds against the data")
        parameters = (scale * x.value).reshape(n, N_LINK_PARAMETERS)
        return parameters, (f_scale * y.value if n_linear else np.zeros(0)), status
    x = cp.Variable(rigid)
    pi = cp.multiply(scale, x)
    f_scale = np.ones(n_linear)
    if linear_bounds is not None:  # gains, payload: unknowns of any size, scaled to O(1)
        columns = np.linalg.norm(operator[:, rigid:], axis=0)
        f_scale = np.where(columns > 0, norm / np.where(columns > 0, columns, 1.0), 1.0)
    y = cp.Variable(n_linear)
    f = cp.multiply(f_scale, y) if n_linear else y
    constraints = [f[:problem.n_rotor] >= 0] if problem.n_rotor else []
    if linear_bounds is not None:
        lower, upper = linear_bounds
        for k in np.flatnonzero(np.isfinite(lower)):
            constraints.append(y[k] >= lower[k] / f_scale[k])
        for k in np.flatnonzero(np.isfinite(upper)):
            constraints.append(y[k] <= upper[k] / f_scale[k])
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
    if reuse is not None:
        data, target = cp.Parameter(operator.shape), cp.Parameter(z.shape)
        data.value, target.value = operator / norm, z / norm
        fit = cp.sum_squares(data @ full - target)
    else:
        fit = cp.sum_squares(operator @ full - z) / norm**2
    if regularisers:
        regularise = cp.sum(cp.hstack(regularisers)) / n
    elif reuse is not None:
        centre = cp.Parameter(rigid)
        centre.value = prior.ravel() / scale
        regularise = cp.sum_squares(x - centre) / rigid
    else:
        regularise = cp.sum_squares(x - prior.ravel() / scale) / rigid
    objective = fit + weight * regularise
    if penalty is not None:
        objective = objective + penalty(full)
    problem_ = cp.Problem(cp.Minimize(magnify * objective), constraints)
    if reuse is not None:
        reuse.update(key=key, problem=(data, target, centre, x, y, f_scale, problem_))
    status = solve(problem_, method, hint="; check the bounds against the data")
    parameters = (scale * x.value).reshape(n, N_LINK_PARAMETERS)
    return parameters, (f_scale * y.value if n_linear else np.zeros(0)), status


# --- motor currents -------------------------------------------------------------------------

# an unknown drive gain stays within [GAIN_FLOOR, 1 / GAIN_FLOOR] times the unconstrained
# Gautier-Briot estimate, on its sign (without a stated range): away from zero, where h = 1/K
# would leave the model, and from infinity
GAIN_FLOOR = 1e-3
# sequential convex Gauss-Newton in current units: at most this many steps, stopping once a
# step gains less than CURRENT_RTOL of the cost (Clarabel's own precision is about 1e-8)
CURRENT_STEPS = 30
CURRENT_RTOL = 1e-9
MAGNIFY_FLOOR = 1e-6  # the least relative residual magnified (noise-free twin logs)


def _identify_currents(robot: Robot, logs: list[Dataset], *, method: str,
                       friction: FrictionModel, bounds: ParameterBounds, prior: NDArray,
                       regulariser: str, weight: float, rotor: bool, offsets: Offsets,
                       payload_data: Dataset | None, payload: KnownPayload | None,
                       gains: Mapping[int | str, float] | None, gain_range: ArrayLike | None,
                       progress: Callable[[str], None] | None, clock: float
                       ) -> ConstrainedResult:
    """The constrained fit of current logs (``identify_constrained``): Gautier & Briot's
    system (``dynid.identification.drive_gains``) with the full link parameters under the
    method's constraints (see ``_CurrentFit`` for the steps); the figures of the estimate:
    the Gauss-Newton covariance in current units at the solution (as the unconstrained fit),
    the relative error in torque units (measured torque ``K i``)."""
    n, rigid = robot.n_joints, N_LINK_PARAMETERS * robot.n_joints
    system = current_system(robot, logs, payload_data=payload_data, payload=payload,
                            gains=gains, friction=friction, method="rref", rotor_inertia=rotor,
                            offsets=offsets)
    template, free = system.template, system.free
    base, size = template.base, len(system.names)
    unconstrained = gautier_briot_fit(system)
    problem = _Problem(robot=robot, base=base, n_deviations=0, bounds=bounds, prior=prior,
                       regulariser=regulariser, method=method, n_rotor=template.n_rotor)
    fit = _CurrentFit.build(problem, system, unconstrained, weight,
                            gain_bounds(robot, gain_range, 1.0 / unconstrained.inverse_gains,
                                         free))
    w, inverse, status = fit.linear_form()
    linear_form = (1.0 / inverse).tolist()
    w, inverse, status, record = fit.refine(w, inverse, status, progress)
    record["linear_form_gains"] = linear_form
    if method == "log-cholesky":
        w, inverse, status = fit.log_cholesky(w, inverse)
    parameters, linear = w[:rigid].reshape(n, N_LINK_PARAMETERS), w[rigid:]

    unknowns = fit.expand @ w
    weighted = [factor / sigma for factor, sigma in zip(unconstrained.factors,
                                                        unconstrained.noise, strict=True)]
    n_equations = int(system.current.size)
    covariance, condition = current_covariance(weighted, unknowns, inverse, free, n_equations)
    drive, drive_std = gains_and_std(inverse, covariance, size, free)
    residual = sum(float(np.sum((factor @ np.concatenate([unknowns, [1.0, -gain]])) ** 2))
                   for factor, gain in zip(unconstrained.factors, drive, strict=True))
    measured = sum(gain**2 * float(factor[:, -1] @ factor[:, -1])
                   for factor, gain in zip(unconstrained.factors, drive, strict=True))
    relative_error = float(100 * np.sqrt(residual / measured))
    body = robot.with_parameters(parameters)
    if rotor:
        body = body.with_rotor_inertia(np.maximum(linear[:n], 0.0))
    report = {"method": method, "kind": "current", "status": status,
              "std_kind": "lower bound", "rank": size + len(free), "condition_number": condition,
              "relative_error_percent": relative_error, "prior_weight": float(weight),
              "n_samples": int(system.current.shape[0]), "n_equations": n_equations,
              "gauss_newton": record, "drive_gains": system.gains_report(drive, drive_std)}
    if system.payload_names:
        report["payload"] = system.payload_report(unknowns)
    if len(system.logs) > 1:
        report["logs"] = [{"source": str(log.metadata.get("source", f"log {k + 1}")),
                           "n_samples": log.n_samples} for k, log in enumerate(system.logs)]
        report["offsets"] = offsets
        keep = np.arange(base.rank + system.n_deviations)
        per_log = log_offsets(template, system.logs, unknowns[keep],
                              covariance[np.ix_(keep, keep)], system.n_deviations)
        if per_log is not None:
            report["log_offsets"] = per_log
    std = np.sqrt(np.maximum(np.diag(covariance)[:base.rank], 0))
    model = dataclasses.replace(template, robot=body, coefficients=unknowns[:base.rank],
                                std=std, report=report, drive_gains=drive,
                                drive_gains_std=drive_std)
    n_friction = base.n_parameters - rigid - template.n_rotor
    return ConstrainedResult(
        method=method, model=model, parameters=parameters,
        friction=linear[template.n_rotor:template.n_rotor + n_friction],
        consistency=check_consistency(parameters, bounds), status=status,
        success=status == "optimal", relative_error_percent=relative_error,
        seconds=time.perf_counter() - clock)


class CurrentConvergenceWarning(RuntimeWarning):
    """The Gauss-Newton refinement in current units stopped at ``CURRENT_STEPS`` while its
    cost was still falling."""


@dataclass
class _CurrentFit:
    """The constrained fit of a ``CurrentSystem``.

    Per joint j, with ``A_j t + c_j`` the torque (``t = expand w``: the base parameters of the
    full unknowns ``w`` — link parameters, rotor inertias, friction — then the offset
    deviations and the payload's unknown part), currents ``i_j`` and ``h_j = 1 / K_j``:

    1. the unconstrained fit (``gautier_briot_fit``) gives each gain's sign and each joint's
       current noise ``sigma_j``, by which its rows are weighted;
    2. ``linear_form``: ``A_j t + c_j - K_j i_j`` is linear in ``(w, K)``: a CLS problem
       with bounded ``K``, the start. Its regressor holds the noisy currents: its gains are
       biased towards zero (errors in variables);
    3. ``refine``: sequential convex Gauss-Newton on the fit in current units,
       ``sum_j |h_j (A_j t + c_j) - i_j|^2 / sigma_j^2`` (plus the regulariser): each step
       solves the constrained problem (same constraints, ``h`` bounded) with the residual
       linearised at the current ``(w, h)``, then halves the step until the cost falls (the
       feasible set is convex: every point of the step is feasible). It stops when a step
       gains less than ``CURRENT_RTOL`` of the cost, or none falls at the solver's precision:
       a fixed point is a stationary point of the constrained current-units problem;
    4. ``log_cholesky`` continues from there with ``h`` among its unknowns.

    Every problem is compressed in ``(t, gains)`` (full rank) and mapped onto ``(w,
    gains)`` by ``onto``, as the torque fit maps its factor onto the full parameters.
    """

    problem: _Problem
    blocks: list[tuple[NDArray, NDArray, NDArray]]  # per joint: R_j's (A, c, i) over sigma_j
    expand: NDArray  # w -> t
    onto: NDArray  # (w, gains[free]) -> (t, gains[free])
    free: list[int]
    known: dict[int, float]
    start_gains: NDArray  # (n,) the unconstrained fit's
    gain_bounds: tuple[NDArray, NDArray]  # on K[free]
    scale: NDArray
    weight: float
    norm: float  # of the weighted currents: the fit is |r|^2 / norm^2
    magnify: float  # the objective's factor for Clarabel (see ``_convex``)

    @classmethod
    def build(cls, problem: _Problem, system, unconstrained, weight: float,
              gain_bounds: tuple[NDArray, NDArray]) -> _CurrentFit:
        base, size, free = problem.base, len(system.names), system.free
        extra = size - base.rank
        n_w = base.n_parameters + extra
        expand = np.zeros((size, n_w))
        expand[:base.rank, :base.n_parameters] = base.regrouping
        expand[base.rank:, base.n_parameters:] = np.eye(extra)
        onto = np.zeros((size + len(free), n_w + len(free)))
        onto[:size, :n_w] = expand
        onto[size:, n_w:] = np.eye(len(free))
        noise = unconstrained.noise
        blocks = [(factor[:, :size] / sigma, factor[:, size] / sigma,
                   factor[:, size + 1] / sigma)
                  for factor, sigma in zip(unconstrained.factors, noise, strict=True)]
        norm = float(np.sqrt(sum(current @ current for _, _, current in blocks)))
        # the relative residual, about (noise / signal)^2, magnified to order one
        samples = system.current.shape[0]
        level = joint_noise(unconstrained.factors, unconstrained.theta,
                            unconstrained.inverse_gains, free, samples,
                            size + len(free)) / noise
        relative = float(np.sum(level**2)) * samples / norm**2
        return cls(problem=problem, blocks=blocks, expand=expand, onto=onto, free=free,
                   known=system.known_gains, start_gains=1.0 / unconstrained.inverse_gains,
                   gain_bounds=gain_bounds, scale=parameter_scale(problem.bounds),
                   weight=weight, norm=norm if norm > 0 else 1.0,
                   magnify=1.0 / min(max(relative, MAGNIFY_FLOOR), 1.0))

    @property
    def rigid(self) -> int:
        return N_LINK_PARAMETERS * self.problem.robot.n_joints

    @property
    def n_w(self) -> int:
        return self.expand.shape[1]

    def _solve(self, rows: list[NDArray], targets: list[NDArray],
               gain_bounds: tuple[NDArray, NDArray]) -> tuple[NDArray, NDArray, str]:
        """``w`` and the free gain unknowns of the constrained problem ``|rows (w, g) -
        targets|^2`` (``rows`` in ``(t, g)``), ``g`` within ``gain_bounds``."""
        free = self.n_w - self.rigid  # the linear unknowns of w: no bounds but the rotors'
        bounds = (np.concatenate([np.full(free, -np.inf), gain_bounds[0]]),
                  np.concatenate([np.full(free, np.inf), gain_bounds[1]]))
        factor = np.linalg.qr(np.column_stack([np.vstack(rows), np.concatenate(targets)]),
                              mode="r")
        method = "cls3" if self.problem.method == "log-cholesky" else self.problem.method
        parameters, linear, status = _convex(
            self.problem, factor[:-1, :-1] @ self.onto, factor[:-1, -1], self.scale,
            self.weight, method, linear_bounds=bounds, norm=self.norm, magnify=self.magnify)
        return (np.concatenate([parameters.ravel(), linear[:free]]), linear[free:], status)

    def _inverse(self, gains: NDArray) -> NDArray:
        """``h`` ``(n,)`` from the free unknowns' gains ``K[free]`` and the known ones."""
        inverse = 1.0 / self.start_gains
        inverse[self.free] = 1.0 / gains
        for j, gain in self.known.items():
            inverse[j] = 1.0 / gain
        return inverse

    def linear_form(self) -> tuple[NDArray, NDArray, str]:
        """``(w, h, status)`` of the linear form, each joint's rows over its torque noise."""
        rows, targets = [], []
        for j, (a, c, i) in enumerate(self.blocks):
            gain = np.zeros((a.shape[0], len(self.free)))
            if j in self.free:
                gain[:, self.free.index(j)] = -i
            weight = 1.0 / abs(self.start_gains[j])
            rows.append(weight * np.column_stack([a, gain]))
            targets.append(weight * (-c + self.known.get(j, 0.0) * i))
        w, gains, status = self._solve(rows, targets, self.gain_bounds)
        return w, self._inverse(gains), status

    def cost(self, w: NDArray, inverse: NDArray) -> float:
        """The objective in current units at ``(w, h)``."""
        t = self.expand @ w
        fit = sum(float(np.sum((h * (a @ t + c) - i) ** 2))
                  for (a, c, i), h in zip(self.blocks, inverse, strict=True))
        return (fit / self.norm**2
                + self.weight * _regularisation(self.problem, w[:self.rigid], self.scale))

    def inverse_bounds(self) -> tuple[NDArray, NDArray]:
        """Bounds on ``h[free]`` from those on ``K[free]`` (of one sign: 1/K reverses them)."""
        return 1.0 / self.gain_bounds[1], 1.0 / self.gain_bounds[0]

    def step(self, w: NDArray, inverse: NDArray) -> tuple[NDArray, NDArray, str]:
        """The constrained minimiser ``(w, h, status)`` of the fit linearised at ``(w, h)``:
        ``h_j (A_j t + c_j) - i_j`` ~ ``h0 A_j t + (h_j - h0)(A_j t0 + c_j) + h0 c_j - i_j``."""
        t = self.expand @ w
        rows, targets = [], []
        for j, (a, c, i) in enumerate(self.blocks):
            h = inverse[j]
            gain = np.zeros((a.shape[0], len(self.free)))
            if j in self.free:
                gain[:, self.free.index(j)] = a @ t + c
                targets.append(i + h * (a @ t))
            else:
                targets.append(i - h * c)
            rows.append(np.column_stack([h * a, gain]))
        target_w, target_h, status = self._solve(rows, targets, self.inverse_bounds())
        out = inverse.copy()
        out[self.free] = target_h
        return target_w, out, status

    def refine(self, w: NDArray, inverse: NDArray, status: str,
               progress: Callable[[str], None] | None
               ) -> tuple[NDArray, NDArray, str, dict]:
        """Sequential convex Gauss-Newton from ``(w, h)`` (see the class): the solution, the
        last solve's status and the record (steps taken, solves, converged, final cost)."""
        say = progress or (lambda _line: None)
        cost = self.cost(w, inverse)
        steps, solves, converged = 0, 0, False
        while solves < CURRENT_STEPS:
            target_w, target_h, step_status = self.step(w, inverse)
            solves += 1
            fraction = 1.0
            for _ in range(8):  # the step, then halved: the first point where the cost falls
                trial_w = w + fraction * (target_w - w)
                trial_h = inverse + fraction * (target_h - inverse)
                trial = self.cost(trial_w, trial_h)
                if trial < cost:
                    break
                fraction /= 2
            else:
                converged = True  # no descent left at the solver's precision
                break
            gain = (cost - trial) / cost
            w, inverse, cost, status = trial_w, trial_h, trial, step_status
            steps += 1
            say(f"current-units Gauss-Newton step {steps}: cost {cost:.9g} (step {fraction:g},"
                f" solver {status})")
            if gain < CURRENT_RTOL:
                converged = True
                break
        if not converged:
            warnings.warn(f"the fit in current units stopped after {CURRENT_STEPS} "
                          "Gauss-Newton steps with its cost still falling: the gains may be "
                          "short of the optimum", CurrentConvergenceWarning, stacklevel=4)
        return w, inverse, status, {"steps": steps, "solves": solves, "converged": converged,
                                    "cost": cost}

    def log_cholesky(self, w: NDArray, inverse: NDArray) -> tuple[NDArray, NDArray, str]:
        """Log-Cholesky least squares in current units from ``(w, h)``, ``h`` among the
        unknowns: ``(w, h, status)``."""
        n, rigid, problem = self.problem.robot.n_joints, self.rigid, self.problem
        lower, upper = self.inverse_bounds()
        parameters, solved, status = fit_log_cholesky(
            np.vstack([a for a, _, _ in self.blocks]) @ self.expand,
            np.concatenate([i for _, _, i in self.blocks]),
            w[:rigid].reshape(n, N_LINK_PARAMETERS),
            np.concatenate([w[rigid:], inverse[self.free]]), problem.bounds,
            scale=self.scale, prior=problem.prior, weight=self.weight,
            nonnegative=problem.n_rotor, norm=self.norm,
            gains=CurrentGains(joint=np.repeat(np.arange(n), [a.shape[0]
                                                              for a, _, _ in self.blocks]),
                               offset=np.concatenate([c for _, c, _ in self.blocks]),
                               inverse=inverse, free=np.array(self.free, dtype=int),
                               lower=lower, upper=upper))
        out = inverse.copy()
        out[self.free] = solved[self.n_w - rigid:]
        return (np.concatenate([parameters.ravel(), solved[:self.n_w - rigid]]), out, status)


def gain_bounds(robot: Robot, gain_range: ArrayLike | None, start: NDArray, free: list[int]
                 ) -> tuple[NDArray, NDArray]:
    """Lower and upper bounds on the unknown gains ``K[free]``: ``gain_range`` (default the
    robot's ``drive_gain_range``) where given, else ``GAIN_FLOOR`` around the unconstrained
    estimate ``start``, on its sign."""
    if gain_range is not None:
        _, span = check_drive_gains(None, gain_range, robot.n_joints,
                                    names=("gains", "gain_range"))
    else:
        span = robot.drive_gain_range
    if span is None:
        size, sign = np.abs(start[free]), np.sign(start[free])
        ends = np.sort(np.stack([sign * GAIN_FLOOR * size, sign * size / GAIN_FLOOR]), axis=0)
        return ends[0], ends[1]
    return np.array(span[free, 0]), np.array(span[free, 1])


def _regularisation(problem: _Problem, x: NDArray, scale: NDArray) -> float:
    """The regulariser of ``_convex`` at the link parameters ``x`` ``(10 n,)``."""
    n = problem.robot.n_joints
    if problem.regulariser == "entropic" and problem.method in ("cls3", "log-cholesky"):
        total = 0.0
        for k, pi in enumerate(x.reshape(n, N_LINK_PARAMETERS)):
            values, vectors = np.linalg.eigh(pseudo_inertia(problem.prior[k]))
            values = np.maximum(values, 1e-6 * values[-1])
            root = vectors @ np.diag(values**-0.5) @ vectors.T
            congruent = root @ pseudo_inertia(pi) @ root
            sign, logdet = np.linalg.slogdet(0.5 * (congruent + congruent.T))
            if sign <= 0:
                return np.inf
            total += -logdet + np.trace(congruent) - 4
        return total / n
    return float(np.sum((x / scale - problem.prior.ravel() / scale) ** 2)) / x.size
