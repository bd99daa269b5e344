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
- ``log-cholesky``: unconstrained nonlinear least squares on log-Cholesky coordinates,
  consistent by construction (scipy, started from CLS-3).

Every problem is scaled (parameters by the bounds' sizes, the fit by ``|z|``) before Clarabel
sees it; the solver status is in the result, never hidden.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_link_table
from dynid.data.dataset import Dataset
from dynid.friction.models import FrictionModel
from dynid.identification._compress import triangular_factor
from dynid.identification._sdp import link_pseudo_inertia, solve
from dynid.identification.base_parameters import robot_base_parameters
from dynid.identification.consistency import ConsistencyReport, check_consistency
from dynid.identification.linear import default_friction
from dynid.identification.model import LinearModel
from dynid.identification.retrieval import check_bounds, parameter_scale
from dynid.robot import Robot
from dynid.robot.bounds import ParameterBounds, ellipsoid_matrix
from dynid.robot.inertia import (
    MASS,
    N_LINK_PARAMETERS,
    from_log_cholesky,
    pseudo_inertia,
    to_log_cholesky,
)

__all__ = ["CONSTRAINED_METHODS", "ConstrainedResult", "identify_constrained"]

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


def identify_constrained(robot: Robot, data: Dataset, *, method: str = "cls3",
                         friction: FrictionModel | None = None,
                         bounds: ParameterBounds | None = None,
                         prior: ArrayLike | None = None, regulariser: str = "euclidean",
                         weight: float | None = None) -> ConstrainedResult:
    """Identify the full link parameters under physical constraints (see the module).

    ``bounds`` default to the robot file's; ``prior`` ``(n, 10)`` defaults to the robot's own
    parameters (its CAD or previous values); ``weight`` scales the regulariser against the
    normalised data fit ``|tau - tau^|^2 / |tau|^2`` (default 1e-3 Euclidean, 1e-6 entropic;
    the divergence is of order one per link away from the prior, the fit of order
    (noise / torque)^2: larger weights trade fit for closeness to the prior).
    """
    import cvxpy as cp

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
    if data.ddq is None:
        raise ValueError("`data` has no accelerations (ddq): differentiate the velocities first")
    weight = (1e-3 if regulariser == "euclidean" else 1e-6) if weight is None else weight
    if not weight >= 0:
        raise ValueError(f"`weight` must be >= 0, got {weight}")
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
    base = robot_base_parameters(robot, friction=friction)
    template = LinearModel(robot=robot, friction=friction, base=base,
                           coefficients=np.zeros(base.rank), std=np.zeros(base.rank))
    stacked = template.base_regressor(data.q, data.dq, data.ddq).reshape(-1, base.rank)
    factor = triangular_factor(stacked, extra=data.tau.ravel())
    r, z = factor[:-1, :-1], factor[:-1, -1]
    rigid = N_LINK_PARAMETERS * n
    n_friction = base.n_parameters - rigid
    scale = parameter_scale(bounds)
    operator = r @ base.regrouping  # (r, p): full parameters -> compressed residual
    norm = np.linalg.norm(z)

    if method == "log-cholesky":
        start = identify_constrained(robot, data, method="cls3", friction=friction,
                                     bounds=bounds, prior=prior, regulariser=regulariser,
                                     weight=weight)
        parameters, coefficients, status = _log_cholesky(
            operator, z, start.parameters, start.friction, n, scale=scale, prior=prior,
            weight=weight)
    else:
        x = cp.Variable(rigid)
        pi = cp.multiply(scale, x)
        f = cp.Variable(n_friction)
        constraints = []
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
        problem = cp.Problem(cp.Minimize(fit + weight * regularise), constraints)
        status = solve(problem, method, hint="; check the bounds against the data")
        parameters = (scale * x.value).reshape(n, N_LINK_PARAMETERS)
        coefficients = f.value if n_friction else np.zeros(0)
    full = np.concatenate([parameters.ravel(), coefficients])
    base_coefficients = base.regrouping @ full
    residual = np.concatenate([r @ base_coefficients - z, [factor[-1, -1]]])
    # the Jaco2 paper's uncertainty of a constrained estimate: sigma^2 (Y_b^T Y_b)^-1 on the
    # base representation, sigma^2 from the constrained fit's own residual
    sigma2 = float(residual @ residual) / max(stacked.shape[0] - base.rank, 1)
    inverse = np.linalg.inv(r)
    relative_error = float(100 * np.linalg.norm(residual) / np.linalg.norm(data.tau))
    std = np.sqrt(sigma2 * np.sum(inverse**2, axis=1))
    model = LinearModel(robot=robot.with_parameters(parameters), friction=friction, base=base,
                        coefficients=base_coefficients, std=std,
                        report={"method": method, "status": status, "rank": base.rank,
                                "condition_number": float(np.linalg.cond(r)),
                                "relative_error_percent": relative_error,
                                "n_samples": data.n_samples,
                                "n_equations": stacked.shape[0]})
    return ConstrainedResult(
        method=method, model=model, parameters=parameters, friction=coefficients,
        consistency=check_consistency(parameters, bounds), status=status,
        success=status == "optimal",
        relative_error_percent=relative_error,
        seconds=time.perf_counter() - clock)


def _log_cholesky(operator: NDArray, z: NDArray, start: NDArray, friction: NDArray, n: int,
                  *, scale: NDArray, prior: NDArray, weight: float):
    """Nonlinear least squares over log-Cholesky coordinates (and the linear friction
    coefficients), from a consistent start, with the Euclidean regulariser of the convex
    methods as extra residual rows (without it the unidentifiable directions drift)."""
    import scipy.optimize

    start = start.copy()
    eigen = np.linalg.eigvalsh(pseudo_inertia(start))[:, 0]
    bump = np.maximum(1e-6 * start[:, MASS] - eigen, 0.0)  # strictly inside J > 0
    # adding b to Ixx, Iyy, Izz adds b / 2 to the 3x3 block of J: add 2 b
    start[:, 4] += 2 * bump
    start[:, 7] += 2 * bump
    start[:, 9] += 2 * bump
    theta0 = np.concatenate([to_log_cholesky(start).ravel(), friction])
    rigid = N_LINK_PARAMETERS * n
    norm = np.linalg.norm(z)
    pull = np.sqrt(weight / rigid) / scale  # regulariser rows: pull * (pi - prior)
    target = prior.ravel()

    def residual(theta: NDArray) -> NDArray:
        pi = from_log_cholesky(theta[:rigid].reshape(n, N_LINK_PARAMETERS)).ravel()
        fit = (operator @ np.concatenate([pi, theta[rigid:]]) - z) / norm
        return np.concatenate([fit, pull * (pi - target)])

    def jacobian(theta: NDArray) -> NDArray:
        """Each link's 10-vector depends on its own 10 coordinates only: central differences
        of all links at once (one batched call per coordinate), chained with the operator."""
        links = theta[:rigid].reshape(n, N_LINK_PARAMETERS)
        step = 1e-7 * np.maximum(np.abs(links), 1.0)
        local = np.empty((n, N_LINK_PARAMETERS, N_LINK_PARAMETERS))  # d pi_link / d theta_link
        for c in range(N_LINK_PARAMETERS):
            up, down = links.copy(), links.copy()
            up[:, c] += step[:, c]
            down[:, c] -= step[:, c]
            local[:, :, c] = (from_log_cholesky(up) - from_log_cholesky(down)) / (
                2 * step[:, c, None])
        fit_rows = operator.shape[0]
        out = np.zeros((fit_rows + rigid, theta.size))
        for k in range(n):
            block = slice(N_LINK_PARAMETERS * k, N_LINK_PARAMETERS * (k + 1))
            pull_rows = slice(fit_rows + block.start, fit_rows + block.stop)
            out[:fit_rows, block] = operator[:, block] @ local[k] / norm
            out[pull_rows, block] = pull[block, None] * local[k]
        out[:fit_rows, rigid:] = operator[:, rigid:] / norm
        return out

    # the exponentials (alpha, d1..d3) are kept in a range where exp neither over- nor
    # underflows: e^-25 ~ 1e-11 (kg, m) is far below any link, e^10 far above
    logs = np.zeros(N_LINK_PARAMETERS, dtype=bool)
    logs[:4] = True
    lower = np.where(np.tile(logs, n), -25.0, -np.inf)
    upper = np.where(np.tile(logs, n), 10.0, np.inf)
    lower = np.concatenate([lower, np.full(friction.size, -np.inf)])
    upper = np.concatenate([upper, np.full(friction.size, np.inf)])
    theta0 = np.clip(theta0, lower + 1e-9, upper - 1e-9)
    result = scipy.optimize.least_squares(residual, theta0, jac=jacobian, method="trf",
                                          bounds=(lower, upper),
                                          max_nfev=50 * theta0.size)
    theta = result.x
    parameters = from_log_cholesky(theta[:rigid].reshape(n, N_LINK_PARAMETERS))
    status = "optimal" if result.success else f"stopped: {result.message}"
    return parameters, theta[rigid:], status
