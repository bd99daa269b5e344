"""Nonlinear identification of the physical parameters jointly with friction (Gilbert et al.
2024, eq. 16-22, 29-31), and their friction-model comparison (Tables 6-7).

The unknowns per link are physical: mass ``m``, centre of mass ``c`` (link frame), and the
inertia about the CoM through the Cholesky factor ``L`` of the CoM second moment
``Sigma = L L^T + m d^2 E`` (d = 1 mm: no link thinner than that),
``I_com = tr(Sigma) E - Sigma``. Every ``L`` gives a positive definite inertia that satisfies
the triangle inequality strictly — stronger than Gilbert's ``I_G > 0``, and without their
nonlinear constraint. Mass and CoM stay inside the robot's bounds (eq. 22,
``chi_lb <= chi <= chi_ub``). The parameters of any friction model of ``dynid.friction`` are
fitted with them (LuGre along the time series, its state included). The robot file's
total-mass range, when it has one, is kept by an exterior penalty (a hinge 0.5 % inside the
range). An optional L1 term ``lambda sum |x|`` (eq. 29) acts on L's off-diagonal entries
(scaled by the start's principal ones): it drives the products of inertia to zero, the use
Gilbert gives it, without pulling masses, CoMs or principal moments (a lasso on those shrinks
the links into point masses).

Solved by bounded trust-region least squares (scipy) on an equivalent square problem built from
``J^T J`` and ``J^T r`` — assembled from the regressor's Gram matrix and per-joint products, so
an iteration costs little more than one torque evaluation. Logs longer than ``max_samples`` are
decimated evenly for the fit (a LuGre state is integrated on the full series first).

Several logs fit together, each with its own torque offsets: per-log deviations around the
friction model's own offset (effects coding, as in ``dynid.identification._logs``) are linear
unknowns beside the rotor inertias; the report lists every log's offsets.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dynid.data.dataset import Dataset, concatenate
from dynid.dynamics import regressor, rotor_regressor
from dynid.friction.fit import FITTABLE_MODELS, fit_friction, start_model
from dynid.friction.models import Arctan, FrictionModel, NoFriction, ViscousCoulomb
from dynid.identification._compress import triangular_factor
from dynid.identification._logs import Offsets, as_logs
from dynid.identification._stream import deviation_block
from dynid.identification.base_parameters import robot_base_parameters
from dynid.identification.consistency import ConsistencyReport, check_consistency
from dynid.identification.linear import identify
from dynid.identification.model import LinearModel
from dynid.metrics import mae, rmse
from dynid.robot import Robot
from dynid.robot.bounds import ParameterBounds
from dynid.robot.inertia import N_LINK_PARAMETERS, from_com, to_com

__all__ = ["NLS_FRICTION_MODELS", "FrictionComparison", "NLSResult", "compare_friction",
           "identify_nls"]

NLS_FRICTION_MODELS = ("none", *FITTABLE_MODELS)
_TRIL = ((0, 0), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2))  # L's entries in the unknowns
_EPSILON = 1e-4  # the smoothing of |x| in the L1 term (scaled units)
_MASS_MARGIN = 0.005  # the total-mass hinge sits this fraction of the range inside it
# every link's mass spreads at least this far [m] along each principal axis (the CoM second
# moment is L L^T + m d^2 E): inertia strictly positive definite, no zero-thickness rods
_THINNEST = 1e-3


@dataclass
class NLSResult:
    """A joint physical + friction fit: the model (rigid body from the physical parameters,
    the fitted friction on top), the parameters, their consistency, the solver's word."""

    model: LinearModel
    parameters: NDArray  # (n, 10) link-frame 10-vectors
    friction: FrictionModel
    consistency: ConsistencyReport
    status: str
    success: bool
    rmse: NDArray  # (n,) on the identification data (all samples)
    mae: NDArray
    n_samples_fitted: int
    seconds: float

    def to_json(self) -> dict:
        return {"method": "nls", "friction": self.friction.name, "status": self.status,
                "success": self.success, "consistent": self.consistency.consistent,
                "within_bounds": self.consistency.within_bounds,
                "not_checked": self.consistency.not_checked(),
                "total_mass": self.consistency.total_mass, "rmse": self.rmse.tolist(),
                "mae": self.mae.tolist(), "n_samples_fitted": self.n_samples_fitted,
                "seconds": self.seconds, "friction_parameters": self.friction.to_dict()}

    def friction_table(self) -> tuple[tuple[str, ...], NDArray]:
        """The fitted friction's field names and values per joint ``(n, k)``; no fields and
        an ``(n, 0)`` table for a fit without friction."""
        return _friction_table(self.friction)

    def lines(self) -> list[str]:
        """The fitted friction, joint by joint, and the consistency of the parameters."""
        names, table = self.friction_table()
        if not names:
            out = [f"  friction {self.friction.name}: no friction parameters fitted"]
        else:
            out = [f"  friction {self.friction.name}, per joint:"]
            for j, row in enumerate(table):
                cells = ", ".join(f"{name} {value:.4g}"
                                  for name, value in zip(names, row, strict=True))
                out.append(f"    joint {j + 1}: {cells}")
        return out + self.consistency.lines()


def _friction_table(model: FrictionModel) -> tuple[tuple[str, ...], NDArray]:
    """A friction model's field names and its ``(n, k)`` table of values per joint
    (``per_joint``); ``NoFriction`` has no fields: ``((), (n, 0))``."""
    if isinstance(model, NoFriction):
        return (), np.zeros((model.n_joints, 0))
    return model.field_names(), model.per_joint()


def _link_parameters(chi: NDArray) -> NDArray:
    """Unknowns ``(n, 10)`` = (m, c, L entries) -> link-frame 10-vectors ``(n, 10)``."""
    factor = np.zeros((chi.shape[0], 3, 3))
    for e, (a, b) in enumerate(_TRIL):
        factor[:, a, b] = chi[:, 4 + e]
    second = factor @ np.swapaxes(factor, 1, 2) + (chi[:, 0] * _THINNEST**2)[:, None, None] \
        * np.eye(3)
    trace = np.trace(second, axis1=1, axis2=2)
    return from_com(chi[:, 0], chi[:, 1:4], trace[:, None, None] * np.eye(3) - second)


def _unknowns(parameters: NDArray, bounds: ParameterBounds | None) -> NDArray:
    """Link 10-vectors -> unknowns, projected into the bounds and onto consistent inertia (a
    start for the fit)."""
    n = parameters.shape[0]
    out = np.zeros((n, N_LINK_PARAMETERS))
    mass = np.maximum(parameters[:, 0], 1e-3)
    safe = parameters.copy()
    safe[:, 0] = mass
    m, c, inertia = to_com(safe)
    if bounds is not None:
        m = np.clip(m, [b.mass[0] for b in bounds.links], [b.mass[1] for b in bounds.links])
        m = np.maximum(m, 1e-6)
        c = np.clip(c, [b.com_lower for b in bounds.links], [b.com_upper for b in bounds.links])
    second = (np.trace(inertia, axis1=1, axis2=2)[:, None, None] / 2 * np.eye(3) - inertia
              - (m * _THINNEST**2)[:, None, None] * np.eye(3))
    values, vectors = np.linalg.eigh(second)
    floor = 1e-6 * np.maximum(values[:, -1:], 1e-9)
    second = vectors @ (np.maximum(values, floor)[..., None] * np.swapaxes(vectors, 1, 2))
    factor = np.linalg.cholesky(second)
    out[:, 0], out[:, 1:4] = m, c
    for e, (a, b) in enumerate(_TRIL):
        out[:, 4 + e] = factor[:, a, b]
    return out


def _smooth_abs_root(x: NDArray) -> tuple[NDArray, NDArray]:
    """``s(x)`` with ``s^2 = sqrt(x^2 + eps^2) - eps`` (~|x|), odd and smooth, and ``s'``."""
    r = np.sqrt(x**2 + _EPSILON**2)
    root = 1.0 / np.sqrt(r + _EPSILON)
    return x * root, root * (1.0 - x**2 / (2.0 * r * (r + _EPSILON)))


def identify_nls(robot: Robot, data: Dataset | Sequence[Dataset], *,
                 friction: str | FrictionModel = "stribeck",
                 bounds: ParameterBounds | None = None, start: NDArray | None = None,
                 lasso: float = 0.0, max_samples: int = 10_000, max_iterations: int = 200,
                 rotor_inertia: bool | None = None, offsets: Offsets = "per-log",
                 progress: Callable[[str], None] | None = None) -> NLSResult:
    """Fit the physical parameters and a friction model jointly (see the module) to ``data``:
    one log, or several (``offsets="per-log"``, default: each its own torque offsets;
    ``"shared"``: the friction model's offset for all).

    ``friction``: a name of ``NLS_FRICTION_MODELS`` (its start is fitted on the residual of an
    OLS fit) or a model instance (its values are the start; its "fixed" fields stay).
    ``bounds`` default to the robot file's (mass range and CoM box per link; without bounds,
    masses stay positive and CoMs free); ``start`` ``(n, 10)`` defaults to the robot's own
    parameters (CAD), projected into the bounds; ``lasso`` is Gilbert's lambda.
    ``rotor_inertia``: fit each drive's rotor inertia too, >= 0, from the robot's (default:
    when the robot states them). ``max_iterations``: the solver's evaluation budget;
    ``max_samples``: the samples fitted, over all logs (each log decimated in proportion).
    """
    import scipy.optimize

    clock = time.perf_counter()
    say = progress or (lambda _line: None)
    logs = as_logs(data)
    if not lasso >= 0:
        raise ValueError(f"`lasso` must be >= 0, got {lasso}")
    if not (isinstance(max_samples, int) and max_samples >= 10):
        raise ValueError(f"`max_samples` must be an integer >= 10, got {max_samples!r}")
    if offsets not in ("per-log", "shared"):
        raise ValueError(f"`offsets` must be 'per-log' or 'shared', got {offsets!r}")
    n = robot.n_joints
    for k, log in enumerate(logs):
        where = "data" if len(logs) == 1 else f"data[{k}]"
        if log.n_joints != n:
            raise ValueError(f"`{where}` has {log.n_joints} joints, `robot` {n}")
        if not np.any(log.tau):
            raise ValueError(f"`{where}.tau` is zero on every joint and sample: there is no "
                             "torque to fit the parameters to (were the torques logged?)")
    bounds = bounds if bounds is not None else robot.bounds
    if bounds is not None and bounds.n_links != n:
        raise ValueError(f"`bounds` has {bounds.n_links} links, the robot {n}")
    start_parameters = robot.parameters if start is None else np.asarray(start, float)
    if start_parameters.shape != (n, N_LINK_PARAMETERS):
        raise ValueError(f"`start` must have shape ({n}, 10), got {start_parameters.shape}")
    picks = _decimation(logs, max_samples)
    used = _joined([log.select(pick) for log, pick in zip(logs, picks, strict=True)])
    n_logs = len(logs) if offsets == "per-log" else 1
    n_deviations = (n_logs - 1) * n
    rotor = bool(robot.rotor_inertia.any()) if rotor_inertia is None else rotor_inertia
    n_rotor = n if rotor else 0
    columns = [regressor(robot, used.q, used.dq, used.ddq)]
    if rotor:
        columns.append(rotor_regressor(used.ddq))
    if n_deviations:
        columns.append(np.concatenate([deviation_block(k, n_logs, pick.size, n)
                                       for k, pick in enumerate(picks)]))
    stacked = np.concatenate(columns, axis=-1).reshape(
        -1, N_LINK_PARAMETERS * n + n_rotor + n_deviations)
    tau = used.tau.ravel()
    norm = float(np.linalg.norm(tau))
    model0 = _friction_start(robot, logs, used, friction)
    total_samples = sum(log.n_samples for log in logs)
    say(f"nls: {used.n_samples} of {total_samples} samples"
        + (f" from {len(logs)} logs" if len(logs) > 1 else "") + f", friction {model0.name}")

    # unknowns: the rigid (n, 10) block, then the free friction fields (joint-major per field)
    chi0 = _unknowns(start_parameters, bounds)
    names0, table0 = _friction_table(model0)
    kinds = np.array([model0.KINDS[name] for name in names0], dtype=str)
    free = kinds != "fixed"
    logarithmic = kinds[free] == "positive"
    theta0 = table0[:, free]  # (n, k_free)
    theta0 = np.where(logarithmic, np.log(np.maximum(theta0, 1e-12)), theta0)
    k_free = int(free.sum())
    rigid = N_LINK_PARAMETERS * n
    # the link block, then the rotor inertias, then the logs' offset deviations
    linear = rigid + n_rotor + n_deviations
    x0 = np.concatenate([chi0.ravel(), robot.rotor_inertia[:n_rotor], np.zeros(n_deviations),
                         theta0.T.ravel()])  # friction field-major

    lower_rigid = np.full((n, N_LINK_PARAMETERS), -np.inf)
    upper_rigid = np.full((n, N_LINK_PARAMETERS), np.inf)
    lower_rigid[:, 0] = 1e-6
    if bounds is not None:
        for k, link in enumerate(bounds.links):
            lower_rigid[k, 0] = max(link.mass[0], 1e-6)
            upper_rigid[k, 0] = link.mass[1]
            lower_rigid[k, 1:4], upper_rigid[k, 1:4] = link.com_lower, link.com_upper
    low_friction = np.where(kinds[free] == "nonneg", 0.0, -np.inf)
    lower = np.concatenate([lower_rigid.ravel(), np.zeros(n_rotor),
                            np.full(n_deviations, -np.inf), np.repeat(low_friction, n)])
    upper = np.concatenate([upper_rigid.ravel(),
                            np.full(n_rotor + n_deviations + k_free * n, np.inf)])
    x0 = np.clip(x0, lower, upper)
    # the L1 term: L's off-diagonal entries over the size of the link's principal ones
    off_diagonal = np.zeros((n, N_LINK_PARAMETERS), dtype=bool)
    off_diagonal[:, [5, 7, 8]] = True  # L21, L31, L32 (see _TRIL)
    sizes = np.maximum(np.abs(chi0[:, [4, 6, 9]]).mean(axis=1), 1e-4)
    lasso_columns = np.flatnonzero(off_diagonal.ravel())
    lasso_scale = np.repeat(sizes, 3)
    total = bounds.total_mass if bounds is not None else None
    masses = np.arange(n) * N_LINK_PARAMETERS

    def split(x: NDArray) -> tuple[NDArray, NDArray]:
        chi = x[:rigid].reshape(n, N_LINK_PARAMETERS)
        theta = x[linear:].reshape(k_free, n).T
        table = table0.copy()
        if k_free:
            table[:, free] = np.where(logarithmic, np.exp(np.minimum(theta, 700.0)), theta)
        return chi, table

    def friction_torque(table: NDArray) -> NDArray:
        if not kinds.size:
            return np.zeros((used.n_samples, n))
        model = model0.from_per_joint(table)
        if model.stateful:  # integrate the state on each full series, then pick
            return np.concatenate([model.torque_along(log.t, log.dq)[pick]
                                   for log, pick in zip(logs, picks, strict=True)])
        return model.torque(used.dq)

    # The residual rows (N n of them) enter only through J^T J, J^T r and |r|^2, each cheap
    # from A^T A (once) and per-joint products: the solver gets an equivalent square problem
    # [R; 0] x ~ [r^; rho] with R^T R = J^T J, R^T r^ = J^T r and |r^|^2 + rho^2 = |r|^2, so
    # its Gauss-Newton model, gradient and cost are exactly those of the full problem.
    per_joint = stacked.reshape(used.n_samples, n, linear)
    gram = stacked.T @ stacked
    cache: dict = {}

    def evaluate(x: NDArray) -> tuple[NDArray, NDArray]:
        key = x.tobytes()
        if key in cache:
            return cache[key]
        chi, table = split(x)
        pi = np.concatenate([_link_parameters(chi).ravel(), x[rigid:linear]])
        r = ((stacked @ pi).reshape(used.n_samples, n) + friction_torque(table) - used.tau)
        slope_rigid = np.eye(linear)  # d (pi, Ia, d) / d (chi, Ia, d): block diagonal

        step = 1e-7 * np.maximum(np.abs(chi), 1e-3)
        for c in range(N_LINK_PARAMETERS):  # every link at once
            up, down = chi.copy(), chi.copy()
            up[:, c] += step[:, c]
            down[:, c] -= step[:, c]
            slope = (_link_parameters(up) - _link_parameters(down)) / (2 * step[:, c, None])
            for k in range(n):
                rows = slice(N_LINK_PARAMETERS * k, N_LINK_PARAMETERS * (k + 1))
                slope_rigid[rows, N_LINK_PARAMETERS * k + c] = slope[k]
        theta = x[linear:].reshape(k_free, n).T
        slope_friction = np.empty((used.n_samples, n, k_free))
        for f in range(k_free):  # one field of every joint at once: joints do not mix
            h = 1e-7 * np.maximum(np.abs(theta[:, f]), 1e-3)
            up, down = theta.copy(), theta.copy()
            up[:, f] += h
            down[:, f] = np.maximum(down[:, f] - h, low_friction[f])  # one-sided at a bound
            torque_up = friction_torque(split(np.concatenate([x[:linear], up.T.ravel()]))[1])
            torque_down = friction_torque(split(np.concatenate([x[:linear],
                                                                down.T.ravel()]))[1])
            slope_friction[:, :, f] = (torque_up - torque_down) / (up[:, f] - down[:, f])
        cross = np.zeros((linear, k_free * n))  # A^T F
        friction_gram = np.zeros((k_free * n, k_free * n))  # F^T F (joints do not mix)
        friction_gradient = np.zeros(k_free * n)  # F^T r
        for j in range(n):
            columns = np.arange(k_free) * n + j
            cross[:, columns] = per_joint[:, j, :].T @ slope_friction[:, j, :]
            friction_gram[np.ix_(columns, columns)] = (slope_friction[:, j, :].T
                                                       @ slope_friction[:, j, :])
            friction_gradient[columns] = slope_friction[:, j, :].T @ r[:, j]
        top = slope_rigid.T @ cross
        normal = np.block([[slope_rigid.T @ gram @ slope_rigid, top],
                           [top.T, friction_gram]]) / norm**2
        gradient = np.concatenate([slope_rigid.T @ (stacked.T @ r.ravel()),
                                   friction_gradient]) / norm**2
        cost = float(np.sum(r**2)) / norm**2
        if lasso > 0:
            value, derivative = _smooth_abs_root(x[lasso_columns] / lasso_scale)
            rows_l = np.sqrt(lasso) * value
            slopes_l = np.sqrt(lasso) * derivative / lasso_scale
            normal[lasso_columns, lasso_columns] += slopes_l**2
            gradient[lasso_columns] += slopes_l * rows_l
            cost += float(rows_l @ rows_l)
        if total is not None:  # the total-mass hinge, one residual row
            width = max(total[1] - total[0], 1e-2 * total[1], 1e-6)
            low, high = total[0] + _MASS_MARGIN * width, total[1] - _MASS_MARGIN * width
            mass = float(x[masses].sum())
            if not low <= mass <= high:
                side = 1.0 if mass > high else -1.0
                row = (mass - high if side > 0 else low - mass) / width
                slope = side / width
                normal[np.ix_(masses, masses)] += slope**2
                gradient[masses] += slope * row
                cost += row**2
        values, vectors = np.linalg.eigh(normal)
        keep = values > max(values[-1], 1e-300) * 1e-14
        square = np.zeros((x.size + 1, x.size))
        square[: x.size][keep] = np.sqrt(values[keep])[:, None] * vectors[:, keep].T
        reduced = np.zeros(x.size + 1)
        reduced[: x.size][keep] = (vectors[:, keep].T @ gradient) / np.sqrt(values[keep])
        reduced[-1] = np.sqrt(max(cost - float(reduced @ reduced), 0.0))
        cache.clear()
        cache[key] = (reduced, square)
        return reduced, square

    # the unknowns are SI values of order 0.01-10 (or logarithms): unscaled steps converge;
    # x_scale="jac" blows the steps up along the unidentifiable directions and crawls
    result = scipy.optimize.least_squares(
        lambda x: evaluate(x)[0], x0, jac=lambda x: evaluate(x)[1], bounds=(lower, upper),
        method="trf", xtol=1e-12, ftol=1e-10, gtol=1e-14, max_nfev=max_iterations)
    chi, table = split(result.x)
    parameters = _link_parameters(chi)
    fitted = model0.from_per_joint(table) if kinds.size else NoFriction(n)
    status = "converged" if result.success else f"stopped: {result.message}"
    say(f"nls: {status} after {result.nfev} evaluations")
    deviations = result.x[rigid + n_rotor:linear]
    offset_torque = stacked[:, rigid + n_rotor:linear] @ deviations
    model = _linear_model(
        robot.with_rotor_inertia(result.x[rigid:rigid + n_rotor]) if rotor else robot,
        parameters, fitted, used, friction_torque(table) + offset_torque.reshape(-1, n),
        status, rotor)
    if len(logs) > 1:
        model.report["logs"] = [{"source": str(log.metadata.get("source", f"log {k + 1}")),
                                 "n_samples": log.n_samples} for k, log in enumerate(logs)]
        model.report["offsets"] = offsets
        if n_deviations:
            model.report["log_offsets"] = _log_offsets(
                logs, deviations, _offset_field(fitted), evaluate(result.x)[1], norm,
                model.report, slice(rigid + n_rotor, linear),
                _offset_position(names0, free, n, linear))
    tau_all, predicted = [], []
    for k, log in enumerate(logs):
        shift = deviation_block(k, n_logs, 1, n)[0] @ deviations if n_deviations else 0.0
        tau_all.append(log.tau)
        predicted.append(model.predict(log.q, log.dq, log.ddq, log.t) + shift)
    tau_all, predicted = np.concatenate(tau_all), np.concatenate(predicted)
    return NLSResult(
        model=model, parameters=parameters, friction=fitted,
        consistency=check_consistency(parameters, bounds), status=status,
        success=bool(result.success), rmse=rmse(tau_all, predicted),
        mae=mae(tau_all, predicted), n_samples_fitted=used.n_samples,
        seconds=time.perf_counter() - clock)


def _decimation(logs: Sequence[Dataset], max_samples: int) -> list[NDArray]:
    """Each log's samples kept for the fit: evenly spread, ``max_samples`` in all, shared in
    proportion to the logs' lengths (at least 10 each)."""
    total = sum(log.n_samples for log in logs)
    picks = []
    for log in logs:
        share = max(min(log.n_samples, 10), round(max_samples * log.n_samples / total))
        picks.append(np.unique(np.linspace(0, log.n_samples - 1, min(log.n_samples, share))
                               .round().astype(int)))
    return picks


def _joined(parts: Sequence[Dataset]) -> Dataset:
    """The fitted samples of every log as one Dataset; each log's time follows the previous
    one's (only the sample rows matter here, not the time between logs)."""
    if len(parts) == 1:
        return parts[0]
    shifted, end = [], 0.0
    for part in parts:
        t = part.t - part.t[0] + end
        shifted.append(dataclasses.replace(part, t=t))
        end = float(t[-1]) + 1.0
    return concatenate(shifted)


def _offset_field(model: FrictionModel) -> NDArray:
    """The friction model's constant offset per joint ``(n,)`` (zero when it has none)."""
    names, table = _friction_table(model)
    return table[:, names.index("fo")] if "fo" in names else np.zeros(model.n_joints)


def _offset_position(names: Sequence[str], free: NDArray, n: int, first: int
                     ) -> NDArray | None:
    """Where the friction model's offsets ``fo`` (one per joint) sit among the unknowns (the
    friction's start at ``first``, field-major), or None when it has no free ``fo``."""
    if "fo" not in names or not free[list(names).index("fo")]:
        return None
    field = int(np.count_nonzero(free[: list(names).index("fo")]))
    return first + field * n + np.arange(n)


def _log_offsets(logs: Sequence[Dataset], deviations: NDArray, fo: NDArray, square: NDArray,
                 norm: float, report: dict, where: slice, fo_position: NDArray | None
                 ) -> list[dict]:
    """Every log's offsets ``fo + d_l`` with a standard deviation from the Gauss-Newton
    covariance ``sigma^2 (J^T J)^-1`` (``square^T square = J^T J / norm^2``)."""
    n = fo.size
    n_logs = len(logs)
    sigma2 = (norm * report["relative_error_percent"] / 100) ** 2 / max(
        report["n_equations"] - square.shape[1], 1)
    covariance = sigma2 * np.linalg.pinv(square.T @ square) / norm**2
    out = []
    for k, log in enumerate(logs):
        for_log = np.zeros((n, square.shape[1]))  # o_k = fo + this matrix @ unknowns
        for_log[:, where] = deviation_block(k, n_logs, 1, n)[0]
        if fo_position is not None:
            for_log[np.arange(n), fo_position] = 1.0
        spread = np.einsum("ij,jk,ik->i", for_log, covariance, for_log)
        out.append({"source": str(log.metadata.get("source", f"log {k + 1}")),
                    "offsets": (fo + deviation_block(k, n_logs, 1, n)[0] @ deviations).tolist(),
                    "std": np.sqrt(np.maximum(spread, 0)).tolist()})
    return out


def _friction_start(robot: Robot, logs: Sequence[Dataset], used: Dataset,
                    friction: str | FrictionModel) -> FrictionModel:
    """The friction model to fit, with its start values."""
    n = robot.n_joints
    if isinstance(friction, FrictionModel):
        if friction.n_joints != n:
            raise ValueError(f"`friction` has {friction.n_joints} joints, the robot {n}")
        if friction.name not in NLS_FRICTION_MODELS:
            raise ValueError(f"`friction` must be one of {NLS_FRICTION_MODELS}, got "
                             f"{friction.name!r}")
        return friction
    if friction not in NLS_FRICTION_MODELS:
        raise ValueError(f"`friction` must be one of {NLS_FRICTION_MODELS}, got {friction!r}")
    if friction == "none":
        return NoFriction(n)
    # the start from the residual of an OLS fit with viscous + Coulomb + offset columns, on
    # the whole log (compressed: cheap; the decimated samples may not excite every column)
    ols = identify(robot, logs[0] if len(logs) == 1 else list(logs),
                   friction=ViscousCoulomb.zeros(n))
    residual = used.tau - ols.rigid_torque(used.q, used.dq, used.ddq)
    start = start_model(friction, used.dq, residual)
    if isinstance(start, Arctan) and isinstance(robot.friction, Arctan):
        # the robot file's own shape constants (they stay fixed in the fit)
        start = Arctan(start.tau_s, start.tau_sc, start.tau_v, robot.friction.k_v,
                       robot.friction.delta)
    return start


def _linear_model(robot: Robot, parameters: NDArray, fitted: FrictionModel, used: Dataset,
                  friction_torque: NDArray, status: str, rotor: bool) -> LinearModel:
    """The rigid body as base coefficients of the physical parameters (uncertainty
    ``sigma^2 (W^T W)^-1`` on the fitted samples, as for a constrained estimate) with the
    fitted friction on top."""
    n = robot.n_joints
    body = robot.with_parameters(parameters)
    base = robot_base_parameters(body, friction=NoFriction(n), rotor_inertia=rotor)
    coefficients = base.base(np.concatenate([parameters.ravel(),
                                             body.rotor_inertia if rotor else []]))
    template = LinearModel(robot=body, friction=NoFriction(n), base=base,
                           coefficients=coefficients, std=np.zeros(base.rank),
                           rotor_inertia=rotor)
    stacked = template.base_regressor(used.q, used.dq, used.ddq).reshape(-1, base.rank)
    residual = (used.tau - template.predict(used.q, used.dq, used.ddq)
                - friction_torque).ravel()
    factor = triangular_factor(stacked)
    sigma2 = float(residual @ residual) / max(stacked.shape[0] - base.rank, 1)
    inverse = np.linalg.pinv(factor)
    std = np.sqrt(sigma2 * np.sum(inverse**2, axis=1))
    return LinearModel(robot=body, friction=NoFriction(n), base=base, coefficients=coefficients,
                       rotor_inertia=rotor,
                       std=std, report={"method": "nls", "status": status, "rank": base.rank,
                                        "condition_number": float(np.linalg.cond(factor)),
                                        "relative_error_percent": float(
                                            100 * np.linalg.norm(residual)
                                            / np.linalg.norm(used.tau)),
                                        "n_samples": used.n_samples,
                                        "n_equations": stacked.shape[0]},
                       fitted_friction=None if isinstance(fitted, NoFriction) else fitted)


@dataclass
class FrictionComparison:
    """Gilbert et al.'s Tables 6-7: RMSE and MAE per joint for each friction model, on the
    identification data and on a validation trajectory."""

    method: str
    models: list[str]
    rmse_identification: NDArray  # (models, n)
    rmse_validation: NDArray
    mae_identification: NDArray
    mae_validation: NDArray
    fits: list  # the per-model results (NLSResult, FrictionFit, or None for "none")
    fitted: list  # the per-model LinearModel that predicts the torques

    def to_json(self) -> dict:
        return {"method": self.method, "models": self.models,
                "rmse": {"identification": self.rmse_identification.tolist(),
                         "validation": self.rmse_validation.tolist()},
                "mae": {"identification": self.mae_identification.tolist(),
                        "validation": self.mae_validation.tolist()}}

    def lines(self) -> list[str]:
        n = self.rmse_identification.shape[1]
        head = f"  {'':<22}" + "".join(f"{'joint ' + str(j + 1):>9}" for j in range(n)) \
            + f"{'mean':>9}"
        out = []
        for title, table in (("RMSE identification", self.rmse_identification),
                             ("RMSE validation", self.rmse_validation),
                             ("MAE identification", self.mae_identification),
                             ("MAE validation", self.mae_validation)):
            out += [f"{title} [N m]", head]
            for name, row in zip(self.models, table, strict=True):
                out.append(f"  {name:<22}" + "".join(f"{v:>9.4f}" for v in row)
                           + f"{row.mean():>9.4f}")
        return out


def compare_friction(robot: Robot, data: Dataset, validation: Dataset, *,
                     models: Sequence[str] = ("none", "lugre", "stribeck", "sigmoid"),
                     method: str = "nls", rigid: LinearModel | None = None,
                     optimizer: str = "least-squares",
                     progress: Callable[[str], None] | None = None,
                     **options) -> FrictionComparison:
    """Each friction model fitted on ``data`` and checked on ``validation``.

    ``method="nls"``: Gilbert's way, the physical parameters and the friction fitted jointly
    (``identify_nls``; ``options`` go to it). ``method="residual"``: Gaz's way, each friction
    model fitted joint by joint (``optimizer``: least squares or Nelder-Mead) on what a
    rigid-body model leaves, ``tau - tau^``: ``rigid`` (e.g. the controller's model from
    ``identify_static``), else one OLS fit without friction columns on ``data``. Stribeck and
    LuGre carry a constant offset ``fo`` per joint, as the sigmoid does through ``phi3``: a
    torque sensor's zero error favours none of them.
    """
    if method not in ("nls", "residual"):
        raise ValueError(f"`method` must be 'nls' or 'residual', got {method!r}")
    if method == "nls" and rigid is not None:
        raise ValueError("`rigid` is for method 'residual' (nls fits the rigid body itself)")
    for name in models:
        if name not in NLS_FRICTION_MODELS:
            raise ValueError(f"`models` must be among {NLS_FRICTION_MODELS}, got {name!r}")
    if validation.ddq is None or data.ddq is None:
        raise ValueError("`data` and `validation` need accelerations (ddq)")
    say = progress or (lambda _line: None)
    scores = {key: [] for key in ("ri", "rv", "mi", "mv")}
    fits, fitted = [], []
    if method == "residual":  # the given model without any friction fitted on top before
        rigid = (identify(robot, data, friction=NoFriction(robot.n_joints)) if rigid is None
                 else dataclasses.replace(rigid, fitted_friction=None))
    if rigid is not None and rigid.robot.n_joints != robot.n_joints:
        raise ValueError(f"`rigid` has {rigid.robot.n_joints} joints, the robot "
                         f"{robot.n_joints}")
    for name in models:
        if method == "nls":
            fit = identify_nls(robot, data, friction=name, **options)
            model = fit.model
        else:
            residual = data.tau - rigid.predict(data.q, data.dq, data.ddq, data.t)
            fit = None
            extra = None
            if name != "none":
                fit = fit_friction(name, data.dq, residual, t=data.t, method=optimizer)
                extra = fit.model
            model = dataclasses.replace(rigid, fitted_friction=extra)
        fits.append(fit)
        fitted.append(model)
        for key, check in (("i", data), ("v", validation)):
            predicted = model.predict(check.q, check.dq, check.ddq, check.t)
            scores["r" + key].append(rmse(check.tau, predicted))
            scores["m" + key].append(mae(check.tau, predicted))
        say(f"friction {name}: mean RMSE identification {scores['ri'][-1].mean():.4f}, "
            f"validation {scores['rv'][-1].mean():.4f} N m")
    return FrictionComparison(method=method, models=list(models),
                              rmse_identification=np.array(scores["ri"]),
                              rmse_validation=np.array(scores["rv"]),
                              mae_identification=np.array(scores["mi"]),
                              mae_validation=np.array(scores["mv"]), fits=fits,
                              fitted=fitted)
