"""Feasible-parameter retrieval: from identified base coefficients to a full set of link
parameters (m, c, I_com per link) that reproduces them and is a real body's (Gaz et al. 2019,
§V).

Two routes to the same question:

- ``retrieve_sdp``: the convex one. Pseudo-inertia ``J_i >= 0`` is exactly the triangle
  inequality (Wensing et al. 2017), CoM box bounds are linear in (m, m c), and mass bounds and
  the total-mass range are linear: minimising ``|G pi - pi_hat|^2`` under these is a
  semidefinite program with a global optimum (cvxpy + Clarabel). A small regulariser towards a
  prior (CAD values, or the bounds' centre) picks one of the many exact solutions.
- ``retrieve_penalty``: Algorithm 1 as published — random starts in the bounds, successive
  penalty steps on the triangle inequality and the total mass, simulated annealing plus a local
  refinement, independent restarts in parallel. Not guaranteed global, but it takes any
  nonlinear constraint one can write as a distance.

Both return a ``RetrievalResult``: parameters, the residual per coefficient, the consistency
report, the solver's status — never a bare array that hides a failed solve. Coefficients
dropped at identification (``exclude``) are left out of the fit.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._parallel import run_parallel
from dynid._validation import as_link_table, as_vector
from dynid.identification._sdp import link_pseudo_inertia, solve
from dynid.model.base_parameters import BaseParameters
from dynid.model.consistency import ConsistencyReport, check_consistency
from dynid.robot import Robot
from dynid.robot.bounds import ParameterBounds, ellipsoid_matrix
from dynid.robot.inertia import (
    FIRST_MOMENT,
    INERTIA,
    MASS,
    N_LINK_PARAMETERS,
    from_com,
    inertia_vector,
    to_com,
)

__all__ = [
    "RETRIEVAL_METHODS",
    "RetrievalResult",
    "check_bounds",
    "gaz2019_penalty_weights",
    "parameter_scale",
    "retrieve_penalty",
    "retrieve_sdp",
]

RETRIEVAL_METHODS = ("sdp", "penalty")


@dataclass
class RetrievalResult:
    """A retrieved parameter set and how well it does."""

    method: str
    parameters: NDArray  # (n, 10) link-frame 10-vectors
    residual: NDArray  # G pi - pi_hat per fitted coefficient (those of `coefficients`)
    coefficients: NDArray  # indices (into the base) of the fitted coefficients
    relative_error_percent: float  # 100 |G pi - pi_hat| / |pi_hat| over them
    consistency: ConsistencyReport
    success: bool
    status: str
    message: str = ""
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def consistent(self) -> bool:
        return self.consistency.consistent and self.consistency.within_bounds

    @property
    def total_mass(self) -> float:
        return float(self.parameters[:, MASS].sum())

    def to_json(self) -> dict:
        return {"method": self.method, "relative_error_percent": self.relative_error_percent,
                "consistent": self.consistent, "total_mass": self.total_mass,
                "seconds": self.seconds, "success": self.success, "status": self.status,
                "message": self.message, "residual": self.residual.tolist(),
                "coefficients": self.coefficients.tolist(),
                "consistency": self.consistency.to_json(), **self.extra}


def check_bounds(bounds: ParameterBounds, total_mass: tuple[float, float] | None) -> None:
    """Conflicts that make every retrieval infeasible, named (ValueError)."""
    low = sum(link.mass[0] for link in bounds.links)
    high = sum(link.mass[1] for link in bounds.links)
    if total_mass is not None:
        if len(total_mass) != 2 or not 0 <= total_mass[0] <= total_mass[1] < np.inf:
            raise ValueError(f"`total_mass` must be [min, max] with 0 <= min <= max, got "
                             f"{list(total_mass)} kg")
        if total_mass[1] < low:
            raise ValueError(f"infeasible bounds: the total-mass range {list(total_mass)} kg "
                             f"lies below the sum of the links' lower mass bounds ({low:g} kg)")
        if total_mass[0] > high:
            raise ValueError(f"infeasible bounds: the total-mass range {list(total_mass)} kg "
                             f"lies above the sum of the links' upper mass bounds ({high:g} kg)")


def parameter_scale(bounds: ParameterBounds) -> NDArray:
    """A size for every standard parameter from the bounds: mass ``m`` (mid-range), first
    moments ``m L``, inertias ``m L^2`` with ``L`` the largest CoM bound (at least 5 cm).
    Variables divided by it are of order one: what keeps the solvers' steps well scaled."""
    out = []
    for link in bounds.links:
        mass = max(0.5 * (link.mass[0] + link.mass[1]), 1e-3)
        length = max(np.abs(link.com_lower).max(), np.abs(link.com_upper).max(), 0.05)
        entry = np.empty(N_LINK_PARAMETERS)
        entry[MASS], entry[FIRST_MOMENT], entry[INERTIA] = mass, mass * length, mass * length**2
        out.append(entry)
    return np.concatenate(out)


def _setup(robot: Robot, base: BaseParameters, coefficients: ArrayLike,
           bounds: ParameterBounds | None, total_mass, exclude: Sequence[int]):
    n = robot.n_joints
    bounds = bounds if bounds is not None else robot.bounds
    if bounds is None:
        raise ValueError(f"`bounds`: {robot.name!r} has no parameter bounds; give them "
                         "(robot file `bounds:` or --bounds FILE)")
    if bounds.n_links != n:
        raise ValueError(f"`bounds` has {bounds.n_links} links, the robot {n}")
    total = total_mass if total_mass is not None else bounds.total_mass
    if total is not None:
        total = tuple(float(v) for v in total)
    check_bounds(bounds, total)
    rigid = N_LINK_PARAMETERS * n
    if base.n_parameters < rigid:
        raise ValueError(f"`base` must regroup the {rigid} rigid-body parameters")
    target = as_vector("coefficients", coefficients, base.rank)
    excluded = np.zeros(base.rank, dtype=bool)
    for k in exclude:
        if not (isinstance(k, (int, np.integer)) and 0 <= k < base.rank):
            raise ValueError(f"`exclude` holds base-coefficient indices in [0, {base.rank}), "
                             f"got {k!r}")
        excluded[k] = True
    # only base parameters made of rigid-body terms constrain the links (not friction)
    rows = np.flatnonzero((np.abs(base.regrouping[:, :rigid]).max(axis=1) > 0) & ~excluded)
    if rows.size == 0:
        raise ValueError("`exclude` leaves no rigid-body coefficient to fit")
    if not np.abs(target[rows]).max() > 0:
        raise ValueError("`coefficients`: every rigid-body coefficient is zero, which no arm "
                         "with mass has (a model of a log that never loaded the joints?); "
                         "identify it again from a log that moves the arm")
    regrouping = base.regrouping[np.ix_(rows, np.arange(rigid))]
    return bounds, total, regrouping, target[rows], rows


def _result(method, bounds, total, regrouping, target, rows, parameters, success, status,
            message, seconds, extra=None) -> RetrievalResult:
    residual = regrouping @ parameters.ravel() - target
    report = check_consistency(parameters, ParameterBounds(
        bounds.links, total_mass=total, source=bounds.source))
    return RetrievalResult(
        method=method, parameters=parameters, residual=residual, coefficients=rows,
        relative_error_percent=float(100 * np.linalg.norm(residual) / np.linalg.norm(target)),
        consistency=report, success=success, status=status, message=message, seconds=seconds,
        extra=extra or {})


def retrieve_sdp(robot: Robot, base: BaseParameters, coefficients: ArrayLike, *,
                 bounds: ParameterBounds | None = None,
                 total_mass: tuple[float, float] | None = None, exclude: Sequence[int] = (),
                 prior: ArrayLike | None = None, prior_weight: float = 1e-4) -> RetrievalResult:
    """The convex retrieval (see the module docstring).

    ``coefficients`` (r,) are the base parameters of ``base``; ``bounds`` default to the
    robot's; ``total_mass`` overrides their range; ``exclude`` are coefficients left out of
    the fit (those dropped at identification). Minimises ``|G pi - pi_hat| / |pi_hat| +
    prior_weight |pi - prior|_scaled``: among the best fits, the closest to ``prior``
    ``(n, 10)`` (e.g. CAD values; default: each link at its bounds' centre with a small sphere
    of inertia).
    """
    import cvxpy as cp

    clock = time.perf_counter()
    bounds, total, regrouping, target, rows = _setup(robot, base, coefficients, bounds,
                                                     total_mass, exclude)
    n = robot.n_joints
    if prior is None:
        prior = np.array([from_com(np.mean(b.mass), b.com_centre,
                                   np.mean(b.mass) * 0.01 * np.eye(3)) for b in bounds.links])
    prior = as_link_table("prior", prior, n)
    scale = parameter_scale(bounds)
    x = cp.Variable(n * N_LINK_PARAMETERS)
    pi = cp.multiply(scale, x)
    constraints = []
    for k, link in enumerate(bounds.links):
        m, h, _, j = link_pseudo_inertia(pi, N_LINK_PARAMETERS * k)
        constraints += [j >> 0, m >= link.mass[0], m <= link.mass[1],
                        h >= m * link.com_lower, h <= m * link.com_upper]
        if link.ellipsoid_centre is not None:  # density realizable inside the link's ellipsoid
            q = ellipsoid_matrix(link.ellipsoid_centre, link.ellipsoid_semi_axes)
            constraints.append(cp.trace(q @ j) >= 0)
    if total is not None:
        masses = cp.hstack([pi[N_LINK_PARAMETERS * k + MASS] for k in range(n)])
        constraints += [cp.sum(masses) >= total[0], cp.sum(masses) <= total[1]]
    # one problem, fit plus a small weight times the distance to the prior. Both terms are
    # norms (not squares): the fit is then an exact penalty — where an exact solution exists
    # the optimum fits exactly, whatever the small prior weight; among the exact solutions the
    # prior picks — and the objective stays of order one for the solver.
    fit = cp.norm(regrouping @ pi - target) / np.linalg.norm(target)
    closeness = cp.norm(x - prior.ravel() / scale) / np.sqrt(x.size)
    problem = cp.Problem(cp.Minimize(fit + prior_weight * closeness), constraints)
    status = solve(problem, "the SDP retrieval",
                   infeasible="infeasible bounds: no parameter set satisfies the mass, CoM and "
                              "total-mass bounds with a consistent pseudo-inertia")
    parameters = (scale * x.value).reshape(n, N_LINK_PARAMETERS)
    return _result("sdp", bounds, total, regrouping, target, rows, parameters,
                   status == "optimal", status, "", time.perf_counter() - clock)


# --- Algorithm 1 of Gaz et al. 2019: penalties, simulated annealing, restarts --------------

# (row, column) of the inertia entries xx, xy, xz, yy, yz, zz
_ENTRIES = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))
_MARGIN = 1e-9  # the polish keeps the constraints this far inside (relative units)


def gaz2019_penalty_weights(stages: int) -> tuple[float, ...]:
    """Algorithm 1's schedule: xi_1 = 0, then xi_{k+1} = 10 k."""
    return tuple(10.0 * k for k in range(stages))


def _search_box(bounds: ParameterBounds) -> tuple[NDArray, NDArray]:
    """[LB, UB] of every link's search variables (m, c, I_com entries): the bounds' own inertia
    ranges, or [0, m L^2] (diagonal) and [-m L^2, m L^2] (products) from the mass and CoM
    bounds."""
    lower, upper = [], []
    for link in bounds.links:
        if link.inertia_lower is not None:
            i_low, i_high = link.inertia_lower, link.inertia_upper
        else:
            length = max(np.abs(link.com_lower).max(), np.abs(link.com_upper).max(), 0.05)
            size = link.mass[1] * length**2
            diagonal = np.array([1, 0, 0, 1, 0, 1], dtype=bool)
            i_low, i_high = np.where(diagonal, 0.0, -size), np.full(6, size)
        lower.append(np.concatenate([[link.mass[0]], link.com_lower, i_low]))
        upper.append(np.concatenate([[link.mass[1]], link.com_upper, i_high]))
    return np.concatenate(lower), np.concatenate(upper)


def _link_parameters(p: NDArray) -> NDArray:
    """Search variables ``(n, 10)`` = (m, c, I_com entries) -> link 10-vectors ``(n, 10)``:
    ``m c`` and ``I_com + m (|c|^2 E - c c^T)`` (Steiner), written out for speed."""
    m, c = p[:, 0], p[:, 1:4]
    out = np.empty_like(p)
    out[:, 0] = m
    out[:, 1:4] = m[:, None] * c
    square = np.einsum("ki,ki->k", c, c)
    for e, (a, b) in enumerate(_ENTRIES):
        out[:, 4 + e] = p[:, 4 + e] + m * ((square if a == b else 0.0) - c[:, a] * c[:, b])
    return out


def _link_jacobian(p: NDArray) -> NDArray:
    """d(link 10-vector)/d(search variables), ``(n, 10, 10)``."""
    n = p.shape[0]
    m, c = p[:, 0], p[:, 1:4]
    square = np.einsum("ki,ki->k", c, c)
    out = np.zeros((n, N_LINK_PARAMETERS, N_LINK_PARAMETERS))
    out[:, 0, 0] = 1.0
    out[:, 1:4, 0] = c
    out[:, 1:4, 1:4] = m[:, None, None] * np.eye(3)
    for e, (a, b) in enumerate(_ENTRIES):
        out[:, 4 + e, 0] = (square if a == b else 0.0) - c[:, a] * c[:, b]
        for k in range(3):
            out[:, 4 + e, 1 + k] = m * (2 * c[:, k] * (a == b) - (a == k) * c[:, b]
                                        - c[:, a] * (b == k))
        out[:, 4 + e, 4 + e] = 1.0
    return out


@dataclass
class _PenaltyProblem:
    """Algorithm 1 on the unit box: ``p = LB + u (UB - LB)``, every variable of order one.

    ``residual(u)`` is the fit ``(G pi(p) - pi_hat) / |pi_hat|`` (so phi = |residual|^2 is
    relative); ``violations(u)`` are eq. 32's distances, g1 per link (``lambda_max(I_com) -
    tr(I_com) / 2`` when positive, over the link's inertia scale) and g2 (the total mass
    outside its range, over the range's width, at least 1 kg), each with its exact Jacobian."""

    regrouping: NDArray  # (r, 10 n)
    target: NDArray  # (r,)
    lower: NDArray  # (10 n,)
    upper: NDArray
    total: tuple[float, float] | None
    inertia_scale: NDArray  # (n,)
    mass_scale: float
    prior: NDArray | None = None  # (10 n,) the prior's search variables on the unit box
    pull: float = 0.0  # sqrt(weight / (10 n)): the prior's rows, pull (u - prior)

    def __post_init__(self) -> None:
        self.width = self.upper - self.lower
        self.n = self.lower.size // N_LINK_PARAMETERS
        self.norm = float(np.linalg.norm(self.target))

    def search_variables(self, u: NDArray) -> NDArray:
        return (self.lower + u * self.width).reshape(self.n, N_LINK_PARAMETERS)

    def residual(self, u: NDArray) -> NDArray:
        pi = _link_parameters(self.search_variables(u)).ravel()
        return (self.regrouping @ pi - self.target) / self.norm

    def fit_rows(self, u: NDArray) -> NDArray:
        """The rows minimised: the relative fit, then the pull towards the prior (if any)."""
        if self.prior is None:
            return self.residual(u)
        return np.concatenate([self.residual(u), self.pull * (u - self.prior)])

    def fit_rows_jacobian(self, u: NDArray) -> NDArray:
        if self.prior is None:
            return self.residual_jacobian(u)
        return np.vstack([self.residual_jacobian(u), self.pull * np.eye(u.size)])

    def residual_jacobian(self, u: NDArray) -> NDArray:
        local = _link_jacobian(self.search_variables(u))
        out = np.empty((self.target.size, u.size))
        for k in range(self.n):
            block = slice(N_LINK_PARAMETERS * k, N_LINK_PARAMETERS * (k + 1))
            out[:, block] = self.regrouping[:, block] @ local[k]
        return out * (self.width / self.norm)

    def _tensors(self, p: NDArray) -> NDArray:
        tensor = np.empty((self.n, 3, 3))
        for e, (a, b) in enumerate(_ENTRIES):
            tensor[:, a, b] = tensor[:, b, a] = p[:, 4 + e]
        return tensor

    def _mass_margins(self, p: NDArray) -> NDArray:
        if self.total is None:
            return np.zeros(0)
        mass = p[:, 0].sum()
        return np.array([mass - self.total[0], self.total[1] - mass]) / self.mass_scale

    def margins(self, u: NDArray) -> tuple[NDArray, NDArray]:
        """The constraints as smooth margins ``c(u) >= 0`` and their Jacobian: per link
        ``(tr(I_com) / 2 - lambda_max) / scale`` (the triangle inequality, eq. 16), then the
        total mass above its minimum and below its maximum."""
        p = self.search_variables(u)
        values, vectors = np.linalg.eigh(self._tensors(p))
        top = vectors[:, :, 2]
        mass = self._mass_margins(p)
        out = np.concatenate([(0.5 * values.sum(axis=1) - values[:, 2]) / self.inertia_scale,
                              mass])
        jacobian = np.zeros((out.size, u.size))
        for e, (a, b) in enumerate(_ENTRIES):
            # d lambda_max / d entry = v_a v_b (twice for an off-diagonal entry)
            slope = (0.5 - top[:, a] ** 2) if a == b else -2.0 * top[:, a] * top[:, b]
            jacobian[np.arange(self.n), np.arange(self.n) * N_LINK_PARAMETERS + 4 + e] = (
                slope / self.inertia_scale)
        if mass.size:
            masses = np.arange(self.n) * N_LINK_PARAMETERS
            jacobian[self.n, masses] = 1.0 / self.mass_scale
            jacobian[self.n + 1, masses] = -1.0 / self.mass_scale
        return out, jacobian * self.width

    def violation_values(self, u: NDArray) -> NDArray:
        """Eq. 32's distances g (n + 1,): g1 per link, g2 the total mass (eigenvalues only:
        the annealing's hot path)."""
        p = self.search_variables(u)
        values = np.linalg.eigvalsh(self._tensors(p))
        excess = (values[:, 2] - 0.5 * values.sum(axis=1)) / self.inertia_scale
        return np.append(np.maximum(excess, 0.0),
                         np.max(-self._mass_margins(p), initial=0.0))

    def violations(self, u: NDArray) -> tuple[NDArray, NDArray]:
        """g (n + 1,) and dg/du (n + 1, 10 n): the margins' negative parts."""
        margins, slopes = self.margins(u)
        g = np.zeros(self.n + 1)
        jacobian = np.zeros((self.n + 1, u.size))
        active = margins[:self.n] < 0
        g[:self.n] = np.where(active, -margins[:self.n], 0.0)
        jacobian[:self.n] = -slopes[:self.n] * active[:, None]
        if margins.size > self.n:
            worst = self.n + int(np.argmin(margins[self.n:]))
            if margins[worst] < 0:
                g[-1] = -margins[worst]
                jacobian[-1] = -slopes[worst]
        return g, jacobian

    def objective(self, u: NDArray, weight: float) -> float:
        """The stage's cost phi + xi sum g^2 (see ``retrieve_penalty`` on the square)."""
        residual = self.fit_rows(u)
        g = self.violation_values(u)
        return float(residual @ residual + weight * (g @ g))


def _penalty_run(task: dict) -> dict:
    """One independent run of Algorithm 1 (module level: it runs in a worker process)."""
    import scipy.optimize

    problem: _PenaltyProblem = task["problem"]
    rng = np.random.default_rng(task["seed"])
    u = rng.uniform(size=problem.lower.size)  # line 1: p0 = LB + (UB - LB) U(0, 1)
    box = [(0.0, 1.0)] * u.size
    evaluations = 0
    for weight in task["weights"]:
        root = np.sqrt(weight)

        def stacked(x: NDArray, root=root) -> NDArray:
            return np.concatenate([problem.fit_rows(x), root * problem.violation_values(x)])

        def stacked_jacobian(x: NDArray, root=root) -> NDArray:
            return np.vstack([problem.fit_rows_jacobian(x), root * problem.violations(x)[1]])

        if task["annealing_evaluations"] > 0:  # the global stage (simulated annealing family)
            annealed = scipy.optimize.dual_annealing(
                problem.objective, box, args=(weight,), x0=u,
                maxfun=task["annealing_evaluations"], no_local_search=True,
                seed=int(rng.integers(2**31)))
            evaluations += annealed.nfev
            u = annealed.x
        # local refinement: bounded Gauss-Newton (trust region) with the exact Jacobian
        local = scipy.optimize.least_squares(
            stacked, u, jac=stacked_jacobian, bounds=(0.0, 1.0), method="trf",
            max_nfev=task["local_iterations"], xtol=1e-15, ftol=1e-15, gtol=1e-15)
        evaluations += local.nfev
        if problem.objective(local.x, weight) <= problem.objective(u, weight):
            u = local.x
    u = _polish(problem, u, task["local_iterations"])
    residual = problem.residual(u)
    g = problem.violation_values(u)
    return {"u": u, "fit": float(residual @ residual), "violation": float(g.sum()),
            "evaluations": evaluations, "seed": task["seed"]}


def _polish(problem: _PenaltyProblem, u: NDArray, iterations: int) -> NDArray:
    """The last stage's point made feasible (beyond the paper, whose penalty leaves violations
    of order 1 / xi): SLSQP on min phi subject to the smooth margins, then every link still
    outside the triangle inequality is restored exactly by adding ``2 excess (1 + 1e-9)`` to
    its principal moments (``tr / 2`` grows by 3/2 of the shift, ``lambda_max`` by one). Of the
    restored stage point and the restored SLSQP point, the better fit among the feasible."""
    import scipy.optimize

    if problem.violation_values(u).sum() == 0:
        return u

    def fit(x: NDArray) -> tuple[float, NDArray]:
        residual = problem.fit_rows(x)
        return float(residual @ residual), 2 * problem.fit_rows_jacobian(x).T @ residual

    result = scipy.optimize.minimize(
        fit, u, jac=True, method="SLSQP", bounds=[(0.0, 1.0)] * u.size,
        constraints=[{"type": "ineq", "fun": lambda x: problem.margins(x)[0] - _MARGIN,
                      "jac": lambda x: problem.margins(x)[1]}],
        options={"maxiter": iterations, "ftol": 1e-16})
    candidates = [_restore(problem, u), _restore(problem, np.clip(result.x, 0.0, 1.0))]
    return min(candidates, key=lambda x: (problem.violation_values(x).sum(), fit(x)[0]))


def _restore(problem: _PenaltyProblem, u: NDArray) -> NDArray:
    """``u`` with each link's triangle inequality restored by a shift of its principal
    moments (see ``_polish``); clipped to the box."""
    p = problem.search_variables(u).copy()
    values = np.linalg.eigvalsh(problem._tensors(p))
    excess = values[:, 2] - 0.5 * values.sum(axis=1)
    shift = np.where(excess > 0, 2.0 * excess * (1.0 + _MARGIN), 0.0)
    for diagonal in (4, 7, 9):  # xx, yy, zz
        p[:, diagonal] += shift
    return np.clip((p.ravel() - problem.lower) / problem.width, 0.0, 1.0)


def retrieve_penalty(robot: Robot, base: BaseParameters, coefficients: ArrayLike, *,
                     bounds: ParameterBounds | None = None,
                     total_mass: tuple[float, float] | None = None,
                     exclude: Sequence[int] = (), restarts: int = 8, stages: int = 10,
                     weights: Sequence[float] | None = None,
                     annealing_evaluations: int = 3000, local_iterations: int = 200,
                     prior: ArrayLike | None = None, prior_weight: float = 1e-3,
                     seed: int = 0, executor: Executor | None = None,
                     progress: Callable[[str], None] | None = None) -> RetrievalResult:
    """Algorithm 1 of Gaz et al. 2019 (eq. 29-32).

    ``restarts`` (Q) independent runs from uniform random starts in [LB, UB] (the bounds'
    mass, CoM and inertia ranges). Each runs ``stages`` (kappa) steps from the previous step's
    solution, minimising ``phi + xi_k gamma`` in the box: phi the relative fit to the base
    coefficients, gamma the violations of the triangle inequality per link (g1) and of the
    total-mass range (g2), ``weights`` the xi_k (default the paper's 0, 10, 20, ...). A step is
    a simulated-annealing search (``scipy.optimize.dual_annealing``, the family of Matlab's
    ``simulannealbnd``; ``annealing_evaluations`` per step, 0 to skip) then a local refinement,
    a bounded Gauss-Newton with the exact Jacobian where the paper used fmincon. Two
    departures, both for exactness: gamma sums the *squared* distances (smooth where the
    constraints become active, so Gauss-Newton applies); and the last point is polished by
    SLSQP to satisfy the constraints exactly.

    The runs go through ``executor`` (any ``concurrent.futures.Executor``: default a local
    process pool; a Dask or Ray cluster's executor works the same); the best run that
    satisfies every constraint wins. ``exclude`` are coefficients left out of the fit (those
    dropped for a high relative std, as Gaz did).

    ``prior`` ``(n, 10)`` (e.g. the CAD values; beyond the paper): the base coefficients fix
    only r combinations of the 10 n parameters, and the paper's search returns whatever point
    of that set its random start reaches (a Panda link 2 of 6.7-9.2 kg); with a prior every
    stage also pulls towards it, ``prior_weight / (10 n) |u - u_prior|^2`` on the unit box
    (default 1e-3 against the relative fit), which picks the feasible set nearest the prior.
    """
    clock = time.perf_counter()
    bounds, total, regrouping, target, rows = _setup(robot, base, coefficients, bounds,
                                                     total_mass, exclude)
    if restarts < 1 or stages < 1:
        raise ValueError(f"`restarts` and `stages` must be >= 1, got {restarts}, {stages}")
    weights = gaz2019_penalty_weights(stages) if weights is None else tuple(weights)
    if len(weights) != stages or not all(w >= 0 for w in weights):
        raise ValueError(f"`weights` must be {stages} values >= 0 (one per stage), got "
                         f"{list(weights)}")
    if annealing_evaluations < 0 or local_iterations < 1:
        raise ValueError("`annealing_evaluations` must be >= 0 and `local_iterations` >= 1, "
                         f"got {annealing_evaluations}, {local_iterations}")
    n = robot.n_joints
    lower, upper = _search_box(bounds)
    sizes = parameter_scale(bounds).reshape(n, N_LINK_PARAMETERS)
    pulled = None
    if prior is not None:
        if not (np.isfinite(prior_weight) and prior_weight > 0):
            raise ValueError(f"`prior_weight` must be > 0, got {prior_weight}")
        table = as_link_table("prior", prior, n)
        mass, com, inertia = to_com(table)
        search = np.column_stack([mass, com, inertia_vector(inertia)]).ravel()
        pulled = np.clip((search - lower) / (upper - lower), 0.0, 1.0)
    problem = _PenaltyProblem(
        regrouping=regrouping, target=target, lower=lower, upper=upper, total=total,
        inertia_scale=sizes[:, INERTIA].max(axis=1),
        mass_scale=max(total[1] - total[0], 1.0) if total else 1.0, prior=pulled,
        pull=float(np.sqrt(prior_weight / lower.size)) if prior is not None else 0.0)
    tasks = [{"problem": problem, "seed": seed + q, "weights": weights,
              "annealing_evaluations": annealing_evaluations,
              "local_iterations": local_iterations} for q in range(restarts)]
    say = progress or (lambda _line: None)

    done = 0

    def arrived(run: dict) -> None:
        nonlocal done
        done += 1
        say(f"penalty retrieval: run {done}/{restarts} (seed {run['seed']}): relative error "
            f"{100 * np.sqrt(run['fit']):.3g} %, violation {run['violation']:.2g}")

    runs = run_parallel(_penalty_run, tasks, executor=executor, on_result=arrived)
    runs.sort(key=lambda run: run["seed"])
    best = min(runs, key=lambda run: (run["violation"] > 0, run["fit"]))
    parameters = _link_parameters(problem.search_variables(best["u"]))
    success = best["violation"] == 0
    feasible = sum(run["violation"] == 0 for run in runs)
    return _result("penalty", bounds, total, regrouping, target, rows, parameters, success,
                   "converged" if success else "constraints violated",
                   f"best of {restarts} runs, {feasible} of them feasible",
                   time.perf_counter() - clock,
                   extra={"restarts": restarts, "stages": stages, "weights": list(weights),
                          "prior_weight": prior_weight if prior is not None else None,
                          "runs": [{"seed": run["seed"],
                                    "relative_error_percent": 100 * np.sqrt(run["fit"]),
                                    "violation": run["violation"],
                                    "evaluations": run["evaluations"]} for run in runs]})
