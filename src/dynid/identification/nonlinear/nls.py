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

Solved by bounded Levenberg-Marquardt (``_levenberg_marquardt``) on the normal equations with
the exact Jacobian: the regressor is linear in the link 10-vectors pi and pi(chi) is polynomial
(``_link_parameters_and_slope``); the friction models give their parameter Jacobians in closed
form (``FrictionModel.parameter_jacobian``; LuGre's bristle-state sensitivities carried by its
compiled recursion). ``J^T J`` and ``J^T r`` are assembled from the regressor's Gram matrix and
per-joint products, so an iteration costs little more than one torque evaluation; the rigid
block adds the residual's own curvature through pi(chi) (its positive part: a modified
Newton step, which the fits of noisy data need where a link is pushed against its bounds).
The directions the data do not see get a Tikhonov pull to where each stage starts, scaled by
the misfit (``_Problem.anchored``, ``_staged``). The fit starts from the consistent linear
solution (cls3 with viscous + Coulomb friction) with each friction model shaped from that
friction line, and where that ends above the line, again from the model that reproduces it
(``line_start``): the solver never raises the cost, so the fit ends no worse than linear
friction on the data it fits. It stops on its cost, step or gradient tolerance and says
which. Logs longer than ``max_samples`` are decimated evenly for the fit (a LuGre state is
integrated on the full series first).

Several logs fit together, each with its own torque offsets: per-log deviations around the
friction model's own offset (effects coding, as in ``dynid.identification._logs``) are linear
unknowns beside the rotor inertias; the report lists every log's offsets.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.linalg
from numpy.typing import NDArray

from dynid.data.dataset import Dataset, concatenate
from dynid.dynamics import regressor, rotor_regressor
from dynid.friction.fit import FITTABLE_MODELS, fit_friction, friction_line, line_start
from dynid.friction.models import Arctan, FrictionModel, NoFriction, ViscousCoulomb
from dynid.identification._logs import Offsets, as_logs
from dynid.identification._stream import deviation_block
from dynid.identification.constrained.cls import gain_bounds, identify_constrained
from dynid.identification.drive_gains import (
    KnownPayload,
    _payload_columns,
    gains_and_std,
    identify_drive_gains,
    scale_knowledge,
)
from dynid.identification.estimate import refuse_coupling
from dynid.identification.linear.estimators import RankDeficiencyWarning
from dynid.identification.linear.idim import identify
from dynid.metrics import mae, rmse
from dynid.model._compress import triangular_factor
from dynid.model.base_parameters import robot_base_parameters
from dynid.model.consistency import ConsistencyReport, check_consistency
from dynid.model.linear_model import LinearModel
from dynid.robot import Robot
from dynid.robot.bounds import ParameterBounds
from dynid.robot.inertia import (
    FIRST_MOMENT,
    INERTIA,
    MASS,
    N_LINK_PARAMETERS,
    PARAMETER_NAMES,
    from_com,
    inertia_vector,
    to_com,
)

__all__ = ["NLS_FRICTION_MODELS", "FrictionComparison", "NLSResult", "compare_friction",
           "identify_nls"]

NLS_FRICTION_MODELS = ("none", *FITTABLE_MODELS)
_TRIL = ((0, 0), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2))  # L's entries in the unknowns
_EPSILON = 1e-4  # the smoothing of |x| in the L1 term (scaled units)
_MASS_MARGIN = 0.005  # the total-mass hinge sits this fraction of the range inside it
# every link's mass spreads at least this far [m] along each principal axis (the CoM second
# moment is L L^T + m d^2 E): inertia strictly positive definite, no zero-thickness rods
_THINNEST = 1e-3
# the solver's tolerances: relative fall of the cost, relative step (scaled), and the cosine
# between the residual and any free column of the Jacobian
_FTOL, _XTOL, _GTOL = 1e-9, 1e-10, 1e-10
# the Tikhonov pull to the start on the unseen directions (`_Problem.anchored`): its weight
# (scaled units, per unit of the relative misfit) and the eigenvalue below which a direction
# counts as unseen; the stages
# re-anchor it while the cost falls below `_RESTAGE` of the stage's start (`_staged`)
_PULL, _UNSEEN = 0.3, 1e-8
_RESTAGE, _STAGES = 0.5, 10
_STAGE_FTOL = 1e-6  # a stage before the last stops at this relative fall


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
    iterations: int = 0  # Levenberg-Marquardt iterations
    cost: float = float("nan")  # |r|^2 [N^2 m^2] on the fitted samples (penalty rows included)
    start_cost: float = float("nan")  # the same at the start

    def to_json(self) -> dict:
        return {"method": "nls", "friction": self.friction.name, "status": self.status,
                "success": self.success, "consistent": self.consistency.consistent,
                "within_bounds": self.consistency.within_bounds,
                "not_checked": self.consistency.not_checked(),
                "total_mass": self.consistency.total_mass, "rmse": self.rmse.tolist(),
                "mae": self.mae.tolist(), "n_samples_fitted": self.n_samples_fitted,
                "seconds": self.seconds, "iterations": self.iterations,
                "friction_parameters": self.friction.to_dict(),
                **({"drive_gains": self.model.report["drive_gains"]}
                   if "drive_gains" in self.model.report else {})}

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


def _link_parameters_and_slope(chi: NDArray) -> tuple[NDArray, NDArray]:
    """``_link_parameters(chi)`` ``(n, 10)`` and its derivative ``(n, 10, 10)``, entry
    ``[k, i, u]`` = d pi_k,i / d chi_k,u, in closed form: with ``Sigma = L L^T + m d^2 E``,
    ``I_com = tr(Sigma) E - Sigma`` and ``I_origin = I_com + m (c.c E - c c^T)``::

        d/dm:    (1, c, 2 d^2 E + c.c E - c c^T)
        d/dc_a:  (0, m e_a, m (2 c_a E - e_a c^T - c e_a^T))
        d/dL_ab: (0, 0, tr(S) E - S),  S = e_a (L e_b)^T + (L e_b) e_a^T
    """
    n = chi.shape[0]
    mass, com = chi[:, 0], chi[:, 1:4]
    factor = np.zeros((n, 3, 3))
    for e, (a, b) in enumerate(_TRIL):
        factor[:, a, b] = chi[:, 4 + e]
    eye = np.eye(3)
    d_mass = np.zeros((n, N_LINK_PARAMETERS))
    d_mass[:, 0] = 1.0
    d_first = np.zeros((n, N_LINK_PARAMETERS, 3))
    d_first[:, 0] = com
    d_origin = np.zeros((n, N_LINK_PARAMETERS, 3, 3))
    steiner = (np.einsum("ki,ki->k", com, com)[:, None, None] * eye
               - com[:, :, None] * com[:, None, :])
    d_origin[:, 0] = 2 * _THINNEST**2 * eye + steiner
    for a in range(3):
        d_first[:, 1 + a, a] = mass
        unit = np.zeros((n, 3, 3))
        unit[:, a, :] = com
        d_origin[:, 1 + a] = mass[:, None, None] * (
            2 * com[:, a, None, None] * eye - unit - np.swapaxes(unit, 1, 2))
    for e, (a, b) in enumerate(_TRIL):
        change = np.zeros((n, 3, 3))
        change[:, a, :] += factor[:, :, b]
        change[:, :, a] += factor[:, :, b]
        d_origin[:, 4 + e] = 2 * factor[:, a, b, None, None] * eye - change
    slope = np.empty((n, N_LINK_PARAMETERS, N_LINK_PARAMETERS))
    slope[:, MASS, :] = d_mass
    slope[:, FIRST_MOMENT, :] = np.swapaxes(d_first, 1, 2)
    slope[:, INERTIA, :] = np.swapaxes(inertia_vector(d_origin), 1, 2)
    return _link_parameters(chi), slope


def _link_second(chi: NDArray, weights: NDArray) -> NDArray:
    """``(n, 10, 10)``: per link the Hessian of ``weights_k . pi_k(chi_k)`` by ``chi_k``, the
    second-order term ``sum_i r_i d^2 r_i`` of the fit through the link parameters (with
    ``weights = A^T r``). pi is cubic in chi, so its slope is quadratic and a central difference
    of the slope with a unit step is exact."""
    n = chi.shape[0]
    out = np.empty((n, N_LINK_PARAMETERS, N_LINK_PARAMETERS))
    for u in range(N_LINK_PARAMETERS):
        up, down = chi.copy(), chi.copy()
        up[:, u] += 1.0
        down[:, u] -= 1.0
        ahead = np.einsum("ki,kiv->kv", weights, _link_parameters_and_slope(up)[1])
        behind = np.einsum("ki,kiv->kv", weights, _link_parameters_and_slope(down)[1])
        out[:, :, u] = (ahead - behind) / 2
    out = 0.5 * (out + np.swapaxes(out, 1, 2))
    values, vectors = np.linalg.eigh(out)
    return vectors @ (np.maximum(values, 0.0)[..., None] * np.swapaxes(vectors, 1, 2))


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
                 lasso: float = 0.0, max_samples: int = 10_000, max_iterations: int = 1000,
                 rotor_inertia: bool | None = None, offsets: Offsets = "per-log",
                 progress: Callable[[str], None] | None = None,
                 payload_data: Dataset | None = None, payload: KnownPayload | None = None,
                 gains: Mapping[int | str, float] | None = None) -> NLSResult:
    """Fit the physical parameters and a friction model jointly (see the module) to ``data``:
    one log, or several (``offsets="per-log"``, default: each its own torque offsets;
    ``"shared"``: the friction model's offset for all).

    ``friction``: a name of ``NLS_FRICTION_MODELS`` (started where it reproduces the linear
    viscous + Coulomb + offset friction of the start as closely as it can: exactly for
    viscous-Coulomb and Stribeck, in steady state for LuGre) or a model instance (its values are
    the start; its "fixed" fields stay). ``bounds`` default to the robot file's (mass range and
    CoM box per link; without bounds, masses stay positive and CoMs free). The start: with
    bounds, the consistent linear fit ``identify_constrained(method="cls3")`` with viscous +
    Coulomb + offset friction (rigid body, rotor inertias, friction line and per-log offsets),
    from which the fit only descends; without, the robot's own parameters (CAD) and the
    friction line of an OLS fit. ``start`` ``(n, 10)`` replaces the start's rigid body;
    ``lasso`` is Gilbert's lambda. ``rotor_inertia``: fit each drive's rotor inertia too,
    >= 0 (default: when the robot states them). ``max_iterations``: the Levenberg-Marquardt
    iterations allowed (each one linear solve and one residual evaluation); the fit stops
    earlier on its cost, step or gradient tolerance, and ``success`` says whether it did.
    ``max_samples``: the samples fitted, over all logs (each log decimated in proportion).

    Motor currents (logs with ``effort="current"``, ``tau`` in A): the drive gains K
    (torque = K current) are unknowns too, fitted in current units, joint j's residual
    ``h_j (tau_model_j + payload torque_j) - i_j`` with ``h = 1/K``, as in
    ``identify_drive_gains`` (Gautier & Briot 2014), whose unbiased linear fit starts them:
    ``payload_data`` is a current log with the known ``payload`` on the last link (its known
    part's torque on the right, its unknown part fitted), ``gains`` known gains that stay
    fixed (``{joint number or name: K}``); currents alone fix the dynamics only up to a scale.
    The model's ``drive_gains`` and ``drive_gains_std`` (Gauss-Newton covariance) and the
    report's ``drive_gains``, ``kind`` and ``payload`` say what was found; ``rmse`` and
    ``mae`` are in N m (the currents times the fitted gains).
    """
    clock = time.perf_counter()
    refuse_coupling(robot, "nls")
    say = progress or (lambda _line: None)
    logs = as_logs(data, effort=None)
    efforts = sorted({log.effort for log in logs})
    if efforts not in (["torque"], ["current"]):
        raise ValueError(f"`data` must hold joint torques or motor currents, one kind in all "
                         f"logs (effort 'torque' or 'current'), got {efforts}")
    currents = efforts == ["current"]
    if not currents and (payload_data is not None or payload is not None or gains):
        raise ValueError("`payload_data`, `payload` and `gains` are for motor-current logs "
                         "(effort 'current'); `data` holds torques")
    if not lasso >= 0:
        raise ValueError(f"`lasso` must be >= 0, got {lasso}")
    if not (isinstance(max_samples, int) and max_samples >= 10):
        raise ValueError(f"`max_samples` must be an integer >= 10, got {max_samples!r}")
    if not (isinstance(max_iterations, int) and max_iterations >= 1):
        raise ValueError(f"`max_iterations` must be an integer >= 1, got {max_iterations!r}")
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
    if start is not None:
        start = np.asarray(start, float)
        if start.shape != (n, N_LINK_PARAMETERS):
            raise ValueError(f"`start` must have shape ({n}, 10), got {start.shape}")
    _check_friction(robot, friction)
    rotor = bool(robot.rotor_inertia.any()) if rotor_inertia is None else rotor_inertia
    n_rotor = n if rotor else 0
    torque_logs, every, drive = logs, logs, None
    if currents:
        known_gains = scale_knowledge(robot, payload_data, payload, gains)
        drive = identify_drive_gains(robot, logs, payload_data=payload_data, payload=payload,
                                     gains=gains, friction=ViscousCoulomb.zeros(n),
                                     rotor_inertia=rotor, offsets=offsets)
        # the linear start in torque units: the currents times the start's gains
        torque_logs = [dataclasses.replace(log, tau=log.tau * drive.drive_gains,
                                           effort="torque") for log in logs]
        every = logs + ([payload_data] if payload_data is not None else [])
        free_gains = np.array([j for j in range(n) if j not in known_gains], dtype=int)
    picks = _decimation(every, max_samples)
    used = _joined([log.select(pick) for log, pick in zip(every, picks, strict=True)])
    n_logs = len(every) if offsets == "per-log" else 1
    n_deviations = (n_logs - 1) * n
    linear_start = _linear_start(robot, torque_logs, bounds, rotor, offsets,
                                 line=isinstance(friction, str) and friction != "none")
    # a named model starts shaped by the data (stiction above Coulomb where the model has it);
    # where that ends above the linear friction, the fit runs again from the model that
    # reproduces it (`exact`)
    model0 = _friction_start(robot, used, friction, linear_start.line, stiction=0.5)
    exact = _friction_start(robot, used, friction, linear_start.line, stiction=0.0)
    if exact is model0 or np.array_equal(_friction_table(exact)[1],
                                         _friction_table(model0)[1]):
        exact = None
    total_samples = sum(log.n_samples for log in every)
    say(f"nls: {used.n_samples} of {total_samples} samples"
        + (f" from {len(every)} logs" if len(every) > 1 else "") + f", friction {model0.name}, "
        f"started from {linear_start.source}" + (", drive gains fitted" if currents else ""))

    columns = [regressor(robot, used.q, used.dq, used.ddq)]
    if rotor:
        columns.append(rotor_regressor(used.ddq))
    if n_deviations:
        columns.append(np.concatenate([deviation_block(k, n_logs, pick.size, n)
                                       for k, pick in enumerate(picks)]))
    known_torque, payload0, payload_names = None, np.zeros(0), []
    if currents and payload_data is not None:
        # the payload log's rows (the last ones): the known part's torque, the unknown part's
        # identifiable columns (`identify_drive_gains`'s)
        known, unknown, independent = _payload_columns(robot, payload)
        payload_names = [f"payload_{PARAMETER_NAMES[unknown[k]]}" for k in independent]
        rows = slice(used.n_samples - picks[-1].size, used.n_samples)
        last_link = columns[0][rows][..., N_LINK_PARAMETERS * (n - 1):]
        block = np.zeros((used.n_samples, n, len(payload_names)))
        block[rows] = last_link[..., unknown[independent]]
        columns.append(block)
        known_torque = np.zeros((used.n_samples, n))
        known_torque[rows] = last_link @ known
        payload0 = np.array(list(drive.report["payload"]["identified"].values()))
    rigid = N_LINK_PARAMETERS * n
    # the link block, rotor inertias, log deviations, the payload's unknown part
    linear = rigid + n_rotor + n_deviations + payload0.size
    per_joint = np.concatenate(columns, axis=-1)  # (N, n, linear)

    # unknowns: the rigid (n, 10) block, then the free friction fields (joint-major per field)
    chi0 = _unknowns(linear_start.parameters if start is None else start, bounds)
    names0, table0 = _friction_table(model0)
    kinds = np.array([model0.KINDS[name] for name in names0], dtype=str)
    free = kinds != "fixed"
    logarithmic = kinds[free] == "positive"
    k_free = int(free.sum())
    rotor0 = (linear_start.rotor_inertia if linear_start.rotor_inertia is not None
              else robot.rotor_inertia)[:n_rotor]
    deviations0 = (linear_start.deviations if linear_start.deviations is not None
                   and linear_start.deviations.size == n_deviations else np.zeros(n_deviations))
    gains0 = (1.0 / drive.drive_gains[free_gains]) if currents else np.zeros(0)  # h = 1/K
    x0 = np.concatenate([chi0.ravel(), rotor0, deviations0, payload0,
                         _free_unknowns(model0, free, logarithmic),  # friction field-major
                         gains0])

    lower_rigid = np.full((n, N_LINK_PARAMETERS), -np.inf)
    upper_rigid = np.full((n, N_LINK_PARAMETERS), np.inf)
    lower_rigid[:, 0] = 1e-6
    if bounds is not None:
        for k, link in enumerate(bounds.links):
            lower_rigid[k, 0] = max(link.mass[0], 1e-6)
            upper_rigid[k, 0] = link.mass[1]
            lower_rigid[k, 1:4], upper_rigid[k, 1:4] = link.com_lower, link.com_upper
    low_friction = np.where(kinds[free] == "nonneg", 0.0, -np.inf)
    # h = 1/K within the gains' bounds of the consistent methods (the robot file's range, else
    # GAIN_FLOOR around the start on its sign): h never crosses zero
    low_h, high_h = np.zeros(0), np.zeros(0)
    if currents:
        low_k, high_k = gain_bounds(robot, None, drive.drive_gains, list(free_gains))
        low_h, high_h = 1.0 / high_k, 1.0 / low_k
    lower = np.concatenate([lower_rigid.ravel(), np.zeros(n_rotor),
                            np.full(n_deviations + payload0.size, -np.inf),
                            np.repeat(low_friction, n), low_h])
    upper = np.concatenate([upper_rigid.ravel(),
                            np.full(x0.size - rigid - gains0.size, np.inf), high_h])
    x0 = np.clip(x0, lower, upper)
    problem = _Problem(per_joint=per_joint, tau=used.tau, rigid=rigid, linear=linear,
                       model0=model0, table0=table0, free=free, logarithmic=logarithmic,
                       series=[(log.t, log.dq, pick) for log, pick in zip(every, picks,
                                                                          strict=True)],
                       used_dq=used.dq, lasso=lasso, lasso_scale=np.repeat(
                           np.maximum(np.abs(chi0[:, [4, 6, 9]]).mean(axis=1), 1e-4), 3),
                       total=bounds.total_mass if bounds is not None else None,
                       known_torque=known_torque,
                       gains=(drive.drive_gains, free_gains) if currents else None)
    solution = _staged(problem, x0, lower, upper, max_iterations)
    if exact is not None:  # never end above the linear friction: try from it too
        exact_x = np.clip(np.concatenate([x0[:linear], _free_unknowns(exact, free, logarithmic),
                                          x0[linear + k_free * n:]]), lower, upper)
        problem.pull = None
        linear_cost = float(problem.evaluate(exact_x, False))
        if solution.cost > linear_cost and solution.iterations < max_iterations:
            say(f"nls: ended above the linear friction ({solution.cost:.6g} > "
                f"{linear_cost:.6g}); fitting again from it")
            again = _staged(problem, exact_x, lower, upper,
                            max_iterations - solution.iterations)
            again.iterations += solution.iterations
            again.evaluations += solution.evaluations
            solution = again if again.cost < solution.cost else dataclasses.replace(
                solution, iterations=again.iterations, evaluations=again.evaluations)
    problem.second = False  # Gauss-Newton J^T J for the covariance
    _, _, solution.normal = problem.evaluate(solution.x, True)
    chi, table = problem.split(solution.x)
    parameters = _link_parameters(chi)
    fitted = model0.from_per_joint(table) if kinds.size else NoFriction(n)
    say(f"nls: {solution.status} after {solution.iterations} iterations "
        f"({solution.evaluations} evaluations)")
    ends = rigid + n_rotor + n_deviations
    deviations = solution.x[rigid + n_rotor:ends]
    offset_torque = per_joint[:, :, rigid + n_rotor:ends] @ deviations
    drive_gains = 1.0 / problem.inverse_gains(solution.x) if currents else np.ones(n)
    links_torque = used  # what the links alone (no payload) give, in N m
    if currents:
        extra = per_joint[:, :, ends:linear] @ solution.x[ends:linear]
        links_torque = dataclasses.replace(
            used, effort="torque", tau=used.tau * drive_gains - extra
            - (known_torque if known_torque is not None else 0.0))
    model = _linear_model(
        robot.with_rotor_inertia(solution.x[rigid:rigid + n_rotor]) if rotor else robot,
        parameters, fitted, links_torque, problem.friction(table)[0] + offset_torque,
        solution.status, rotor)
    model.report["iterations"] = solution.iterations
    model.report.update(converged=solution.success, convergence=solution.status)
    model.report["start"] = linear_start.source
    if len(every) > 1:
        model.report["logs"] = [{"source": str(log.metadata.get("source", f"log {k + 1}")),
                                 "n_samples": log.n_samples} for k, log in enumerate(every)]
        model.report["offsets"] = offsets
        if n_deviations:
            model.report["log_offsets"] = _log_offsets(
                every, deviations, _offset_field(fitted), solution.normal, model.report,
                slice(rigid + n_rotor, ends), _offset_position(names0, free, n, linear))
    if currents:
        covariance = solution.cost / max(used.n_samples * n - solution.x.size, 1) * np.linalg.pinv(
            solution.normal, hermitian=True)
        drive_gains, spread = gains_and_std(1.0 / drive_gains, covariance,
                                            solution.x.size - free_gains.size, list(free_gains))
        model = dataclasses.replace(model, drive_gains=drive_gains, drive_gains_std=spread)
        model.report["kind"] = "current"
        model.report["drive_gains"] = {
            "value": drive_gains.tolist(), "std": spread.tolist(),
            "known": {robot.joint_names[j]: g for j, g in known_gains.items()}}
        if payload_names:
            model.report["payload"] = {
                "mass": payload.mass,
                "com_tool": None if payload.com is None else np.asarray(payload.com).tolist(),
                "identified": dict(zip(payload_names, solution.x[ends:linear].tolist(),
                                       strict=True))}
    tau_all, predicted = [], []
    for k, log in enumerate(logs):
        shift = deviation_block(k, n_logs, 1, n)[0] @ deviations if n_deviations else 0.0
        tau_all.append(log.tau * drive_gains)
        predicted.append(model.predict(log.q, log.dq, log.ddq, log.t) + shift)
    tau_all, predicted = np.concatenate(tau_all), np.concatenate(predicted)
    return NLSResult(
        model=model, parameters=parameters, friction=fitted,
        consistency=check_consistency(parameters, bounds), status=solution.status,
        success=solution.success, rmse=rmse(tau_all, predicted),
        mae=mae(tau_all, predicted), n_samples_fitted=used.n_samples,
        seconds=time.perf_counter() - clock, iterations=solution.iterations,
        cost=solution.cost * problem.norm**2, start_cost=solution.start_cost * problem.norm**2)


class _Problem:
    """The fit's cost ``|r|^2 / |tau|^2`` (plus the lasso and total-mass rows) in the unknowns
    ``x`` = (chi, rotor inertias, log deviations, free friction fields field-major), with its
    exact gradient and Gauss-Newton normal matrix ``J^T J``.

    The residual rows (N n of them) enter only through ``J^T J``, ``J^T r`` and ``|r|^2``: the
    regressor A is linear in the link 10-vectors pi, so ``J = [A dpi/dchi, F]`` with F the
    friction's parameter Jacobian, block-diagonal over the joints. ``A^T A`` is formed once;
    an evaluation costs one product with A, one with A^T and the per-joint products with F."""

    def __init__(self, *, per_joint: NDArray, tau: NDArray, rigid: int, linear: int,
                 model0: FrictionModel, table0: NDArray, free: NDArray, logarithmic: NDArray,
                 series: list, used_dq: NDArray, lasso: float, lasso_scale: NDArray,
                 total: tuple[float, float] | None, known_torque: NDArray | None = None,
                 gains: tuple[NDArray, NDArray] | None = None) -> None:
        self.n_samples, self.n, _ = per_joint.shape
        self.stacked = per_joint.reshape(-1, linear)
        # (n, linear, N): joint j's regressor rows, transposed, contiguous for the products
        self.by_joint = np.ascontiguousarray(per_joint.transpose(1, 2, 0))
        self.gram = self.stacked.T @ self.stacked
        # motor currents: the known torque (a payload's), and the drive gains (all joints', the
        # free ones' index: their inverses h = 1/K end the unknowns)
        self.known_torque = known_torque
        self.gains = gains
        if gains is not None:
            self.joint_grams = np.matmul(self.by_joint, self.by_joint.transpose(0, 2, 1))
        self.tau = tau
        self.norm = float(np.linalg.norm(tau))
        self.rigid, self.linear = rigid, linear
        self.model0, self.table0, self.free, self.logarithmic = model0, table0, free, logarithmic
        self.k_free = int(free.sum())
        self.series, self.used_dq = series, used_dq
        self.lasso, self.lasso_scale = lasso, lasso_scale
        self.total = total
        off_diagonal = np.zeros((self.n, N_LINK_PARAMETERS), dtype=bool)
        off_diagonal[:, [5, 7, 8]] = True  # L21, L31, L32 (see _TRIL)
        self.lasso_columns = np.flatnonzero(off_diagonal.ravel())
        self.masses = np.arange(self.n) * N_LINK_PARAMETERS
        self.second = True  # the rigid block's Hessian exact (Newton), not Gauss-Newton
        self.anchor: NDArray | None = None  # the start's chi, set with `anchored`
        self.pull: NDArray | None = None

    def anchored(self, x: NDArray) -> float:
        """Anchor a Tikhonov pull ``(chi - chi_a)^T M (chi - chi_a)`` at the rigid unknowns of
        ``x`` on the directions the data do not see there (eigenvectors V of the chi block of
        the normal matrix scaled to unit diagonal, ``D^-1 H D^-1``, with eigenvalue below
        ``_UNSEEN`` times the largest): ``M = _PULL c D V V^T D``, c the cost at ``x`` (over
        ``|tau|^2``). It keeps the steps bounded along the unidentifiable combinations of the
        physical parameters (where ``H`` is singular and the fit crawls along flat curved
        valleys) without touching the identifiable ones; scaled by the misfit, it fades as
        the fit improves (the stages re-anchor it), so noise-free data still give back the
        truth. Returns the cost at ``x``."""
        rigid = self.rigid
        self.pull = None
        cost, _, matrix = self.evaluate(x, True)
        self.anchor = x[:rigid].copy()
        block = matrix[:rigid, :rigid]
        scale = np.sqrt(np.maximum(np.diag(block), 0.0))
        scale = np.where(scale > 0, scale, max(float(scale.max(initial=0.0)), 1e-300))
        values, vectors = np.linalg.eigh(block / np.outer(scale, scale))
        null = scale[:, None] * vectors[:, values < _UNSEEN * max(values[-1], 1e-300)]
        self.pull = _PULL * cost * null @ null.T
        return cost

    def inverse_gains(self, x: NDArray) -> NDArray:
        """``h = 1/K`` per joint ``(n,)``: the fixed ones from the gains, the free from ``x``
        (ones for torque logs)."""
        if self.gains is None:
            return np.ones(self.n)
        values, free = self.gains
        out = 1.0 / values
        out[free] = x[x.size - free.size:]
        return out

    def split(self, x: NDArray) -> tuple[NDArray, NDArray]:
        """Unknowns -> (chi ``(n, 10)``, the friction table ``(n, k)`` with the fixed fields)."""
        chi = x[:self.rigid].reshape(self.n, N_LINK_PARAMETERS)
        theta = x[self.linear:self.linear + self.k_free * self.n].reshape(self.k_free,
                                                                          self.n).T
        table = self.table0.copy()
        if self.k_free:
            table[:, self.free] = np.where(self.logarithmic, np.exp(np.minimum(theta, 700.0)),
                                           theta)
        return chi, table

    def friction(self, table: NDArray, jacobian: bool = False
                 ) -> tuple[NDArray, NDArray | None]:
        """The friction torque on the fitted samples ``(N, n)`` and, asked, its Jacobian by
        the free unknowns ``(N, n, k_free)`` (a logarithm's chain rule applied); a stateful
        model is integrated on each full log, then picked."""
        if not self.table0.size:
            return np.zeros((self.n_samples, self.n)), np.zeros((self.n_samples, self.n, 0))
        model = self.model0.from_per_joint(table)
        slope = None
        if model.stateful:
            parts = [(model.torque_and_jacobian_along(t, dq) if jacobian
                      else (model.torque_along(t, dq), None)) for t, dq, _ in self.series]
            torque = np.concatenate([part[0][pick] for part, (_, _, pick)
                                     in zip(parts, self.series, strict=True)])
            if jacobian:
                slope = np.concatenate([part[1][pick] for part, (_, _, pick)
                                        in zip(parts, self.series, strict=True)])
        else:
            torque = model.torque(self.used_dq)
            if jacobian:
                slope = model.parameter_jacobian(self.used_dq)
        if jacobian:
            chain = np.where(self.logarithmic, table[:, self.free], 1.0)  # d p / d log p = p
            slope = slope[:, :, self.free] * chain
        return torque, slope

    def evaluate(self, x: NDArray, normal: bool) -> float | tuple[float, NDArray, NDArray]:
        """The cost at ``x``; with ``normal``, ``(cost, J^T r, J^T J)`` too (all over
        ``|tau|^2``: the cost is ``|r|^2`` of the scaled rows, its gradient ``2 J^T r``)."""
        n, rigid, linear, k_free = self.n, self.rigid, self.linear, self.k_free
        chi, table = self.split(x)
        if normal:
            links, slope_links = _link_parameters_and_slope(chi)
        else:
            links = _link_parameters(chi)
        pi = np.concatenate([links.ravel(), x[rigid:linear]])
        torque, slope_friction = self.friction(table, normal)
        model = (self.stacked @ pi).reshape(self.n_samples, n) + torque
        if self.known_torque is not None:
            model += self.known_torque
        inverse = self.inverse_gains(x)
        r = model * inverse - self.tau  # in the measured units (currents: h (tau) - i)
        weighted = r * inverse  # d r / d (model torque) = h: the chain to every other unknown
        scale = self.norm**2
        cost = float(np.sum(r**2)) / scale
        if normal:
            chain = np.eye(linear)  # d (pi, Ia, d) / d (chi, Ia, d): block diagonal
            for k in range(n):
                rows = slice(N_LINK_PARAMETERS * k, N_LINK_PARAMETERS * (k + 1))
                chain[rows, rows] = slope_links[k]
            by_pi = self.stacked.T @ weighted.ravel()  # d |r|^2 / 2 d (pi, Ia, d)
            gradient_linear = chain.T @ by_pi
            gram = (self.gram if self.gains is None
                    else np.einsum("j,jab->ab", inverse**2, self.joint_grams))
            normal_linear = chain.T @ gram @ chain
            if self.second:  # the residual's own curvature through pi(chi): exact Newton
                second = _link_second(chi, by_pi[:rigid].reshape(n, N_LINK_PARAMETERS))
                for k in range(n):
                    rows = slice(N_LINK_PARAMETERS * k, N_LINK_PARAMETERS * (k + 1))
                    normal_linear[rows, rows] += second[k]
            if k_free:
                by_joint = slope_friction.transpose(1, 0, 2)  # (n, N, k_free)
                # (n, linear, k_free): h_j^2 A_j^T F_j
                cross = np.matmul(self.by_joint, by_joint) * (inverse**2)[:, None, None]
                cross = chain.T @ cross.transpose(1, 2, 0).reshape(linear, k_free * n)
                friction_gram = (np.matmul(by_joint.transpose(0, 2, 1), by_joint)
                                 * (inverse**2)[:, None, None])
                block = np.zeros((k_free * n, k_free * n))
                for j in range(n):  # joints do not mix
                    where = np.arange(k_free) * n + j
                    block[np.ix_(where, where)] = friction_gram[j]
                gradient_friction = np.einsum("sjf,sj->fj", slope_friction, weighted).ravel()
                matrix = np.block([[normal_linear, cross], [cross.T, block]])
                gradient = np.concatenate([gradient_linear, gradient_friction])
            else:
                matrix, gradient = normal_linear, gradient_linear
            # d r_j / d h_j = the model torque of joint j; none when every gain is given
            if self.gains is not None and self.gains[1].size:
                free = self.gains[1]
                on = model[:, free]  # (N, g)
                # per free joint (no copy of by_joint's (g, linear, N) slice)
                with_linear = (chain.T @ np.column_stack(
                    [self.by_joint[j] @ on[:, g] for g, j in enumerate(free)])
                    * inverse[free])
                with_friction = np.zeros((k_free * n, free.size))
                if k_free:
                    for g, j in enumerate(free):
                        with_friction[np.arange(k_free) * n + j, g] = inverse[j] * (
                            slope_friction[:, j, :].T @ on[:, g])
                side = np.vstack([with_linear, with_friction])
                matrix = np.block([[matrix, side],
                                   [side.T, np.diag(np.sum(on**2, axis=0))]])
                gradient = np.concatenate([gradient, np.sum(on * r[:, free], axis=0)])
            matrix, gradient = matrix / scale, gradient / scale
        if self.lasso > 0:
            value, derivative = _smooth_abs_root(x[self.lasso_columns] / self.lasso_scale)
            rows = np.sqrt(self.lasso) * value
            cost += float(rows @ rows)
            if normal:
                slopes = np.sqrt(self.lasso) * derivative / self.lasso_scale
                matrix[self.lasso_columns, self.lasso_columns] += slopes**2
                gradient[self.lasso_columns] += slopes * rows
        if self.total is not None:  # the total-mass hinge, one residual row
            low_total, high_total = self.total
            width = max(high_total - low_total, 1e-2 * high_total, 1e-6)
            low = low_total + _MASS_MARGIN * width
            high = high_total - _MASS_MARGIN * width
            mass = float(x[self.masses].sum())
            if not low <= mass <= high:
                side = 1.0 if mass > high else -1.0
                row = (mass - high if side > 0 else low - mass) / width
                cost += row**2
                if normal:
                    slope = side / width
                    matrix[np.ix_(self.masses, self.masses)] += slope**2
                    gradient[self.masses] += slope * row
        if self.pull is not None:
            away = x[:rigid] - self.anchor
            pulled = self.pull @ away
            cost += float(away @ pulled)
            if normal:
                gradient[:rigid] += pulled
                matrix[:rigid, :rigid] += self.pull
        if not normal:
            return cost
        return cost, gradient, matrix


def _damped_step(normal: NDArray, gradient: NDArray, mu: NDArray, x: NDArray, lower: NDArray,
                 upper: NDArray, keep: NDArray) -> NDArray | None:
    """The step minimising ``2 g.s + s^T (H + mu I) s`` with the unknowns outside ``keep``
    fixed, and every unknown the step would carry across a bound fixed on it in turn (then
    the rest solved again): a step inside the bounds on which the model is minimal, not a
    clipped one whose predicted fall may be negative. None where the damped matrix is not
    positive definite in floating point."""
    step = np.zeros_like(x)
    keep = keep.copy()
    for _ in range(x.size):
        if not keep.any():
            break
        rest = ~keep
        matrix = normal[np.ix_(keep, keep)].copy()
        matrix[np.diag_indices_from(matrix)] += mu[keep]
        right = gradient[keep] + normal[np.ix_(keep, rest)] @ step[rest]
        try:
            factor = scipy.linalg.cho_factor(matrix)
        except np.linalg.LinAlgError:
            return None
        step[keep] = -scipy.linalg.cho_solve(factor, right)
        trial = x + step
        out = keep & ((trial < lower) | (trial > upper))
        if not out.any():
            break
        step[out] = np.clip(trial[out], lower[out], upper[out]) - x[out]
        keep &= ~out
    return step


def _staged(problem: _Problem, x0: NDArray, lower: NDArray, upper: NDArray, budget: int
            ) -> _Solution:
    """Levenberg-Marquardt in stages: each anchors the pull of ``_Problem.anchored`` at its
    start (the unseen directions turn with the parameters); a stage stops at ``_STAGE_FTOL``,
    and once one lowers the cost by less than ``_RESTAGE``, a last one runs to the full
    tolerances. The solution's ``cost`` and ``start_cost`` are the
    fit's own (no pull)."""
    x, iterations, evaluations = x0, 0, 0
    start_cost, polish = None, False
    for stage in range(_STAGES):
        polish = polish or stage == _STAGES - 1
        before = problem.anchored(x)
        start_cost = before if start_cost is None else start_cost
        solution = _levenberg_marquardt(problem.evaluate, x, lower, upper, budget - iterations,
                                        ftol=_FTOL if polish else _STAGE_FTOL)
        iterations += solution.iterations
        evaluations += solution.evaluations
        x = solution.x
        if not solution.success or polish:
            break
        polish = solution.cost > _RESTAGE * before
    problem.pull = None
    return dataclasses.replace(solution, iterations=iterations, evaluations=evaluations,
                               start_cost=start_cost, cost=float(problem.evaluate(x, False)))


def _free_unknowns(model: FrictionModel, free: NDArray, logarithmic: NDArray) -> NDArray:
    """A friction model's free fields as unknowns: logarithms where "positive", field-major."""
    theta = model.per_joint()[:, free]
    return np.where(logarithmic, np.log(np.maximum(theta, 1e-12)), theta).T.ravel()


@dataclass
class _Solution:
    x: NDArray
    status: str
    success: bool
    iterations: int
    evaluations: int
    cost: float
    start_cost: float
    normal: NDArray  # J^T J at x (over |tau|^2)


def _levenberg_marquardt(evaluate: Callable, x0: NDArray, lower: NDArray, upper: NDArray,
                         budget: int, *, ftol: float = _FTOL, xtol: float = _XTOL,
                         gtol: float = _GTOL) -> _Solution:
    """Bounded Levenberg-Marquardt on the cost ``evaluate(x, False)`` with its quadratic
    model ``evaluate(x, True) = (cost, g, H)``: ``cost(x + s) ~ cost + 2 g.s + s^T H s``.

    Each iteration solves ``(H + mu D) s = -g`` (D: Marquardt's scaling, the largest diagonal
    of H seen) over the unknowns not held at a bound by the gradient, fixing on its bound any
    unknown the step would carry across one (``_damped_step``), and takes the step when the
    cost falls by at least 1e-4 of the predicted fall (Nielsen's damping update): the cost
    never rises. Stops on the cost (both the actual and the predicted fall below ``ftol`` of
    the cost), the step (``|s| <= xtol (|x| + xtol)``) or the gradient (every free column's
    cosine with the residual below ``gtol``), else on the ``budget`` of iterations; the
    status says which."""
    x = np.clip(x0, lower, upper)
    cost, gradient, normal = evaluate(x, True)
    start_cost = cost
    scale = np.diag(normal).copy()
    mu, floor = 1e-3, 1e-15
    growth = 2.0
    iterations, evaluations = 0, 1
    reason = None
    while True:
        blocked = (((x <= lower) & (gradient > 0)) | ((x >= upper) & (gradient < 0)))
        column = np.sqrt(np.maximum(np.diag(normal), 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            cosine = np.where(blocked | (column == 0), 0.0,
                              np.abs(gradient) / (column * np.sqrt(max(cost, 1e-300))))
        if cosine.max(initial=0.0) <= gtol:
            reason = f"gradient tolerance met (largest cosine {cosine.max(initial=0.0):.1e})"
            break
        if iterations >= budget:
            break
        iterations += 1
        scale = np.maximum(scale, np.diag(normal))  # Marquardt's, the largest seen
        damping = mu * np.maximum(scale, 1e-12 * scale.max())
        solved = _damped_step(normal, gradient, damping, x, lower, upper, ~blocked)
        if solved is None:  # not positive definite in floating point: damp more
            mu, growth = mu * growth, growth * 2
            continue
        step = solved
        trial = np.clip(x + step, lower, upper)  # on a bound exactly, not a rounding past it
        predicted = -(2 * gradient @ step + step @ normal @ step)
        small = np.linalg.norm(step) <= xtol * (np.linalg.norm(x) + xtol)
        try:
            new_cost = evaluate(trial, False)
        except ValueError:  # outside a friction model's domain (an exp underflowed to 0)
            new_cost = np.inf
        evaluations += 1
        ratio = (cost - new_cost) / predicted if predicted > 0 and new_cost < cost else -1.0
        if ratio > 1e-4:
            previous, x = cost, trial
            cost, gradient, normal = evaluate(x, True)
            evaluations += 1
            mu = max(mu * max(1 / 3, 1 - (2 * ratio - 1) ** 3), floor)
            growth = 2.0
            if previous - cost <= ftol * previous and predicted <= ftol * previous:
                reason = f"cost tolerance met (relative fall below {ftol:.0e})"
                break
            if small:
                reason = f"step tolerance met (relative step below {xtol:.0e})"
                break
        else:
            if small:
                reason = f"step tolerance met (relative step below {xtol:.0e})"
                break
            mu, growth = mu * growth, growth * 2
            if not np.isfinite(mu) or mu > 1e30:
                reason = None
                break
    if reason is None:
        status = (f"stopped: the budget of {budget} iterations ran out before a tolerance was "
                  "met" if iterations >= budget
                  else "stopped: no step reduces the cost (the damping diverged)")
    else:
        status = f"converged: {reason}"
    return _Solution(x=x, status=status, success=reason is not None, iterations=iterations,
                     evaluations=evaluations, cost=cost, start_cost=start_cost, normal=normal)


@dataclass
class _LinearStart:
    """Where the fit starts: a linear fit with viscous + Coulomb + offset friction."""

    parameters: NDArray  # (n, 10)
    rotor_inertia: NDArray | None  # (n,), None: the robot's
    line: NDArray  # (n, 3): fv, fc, fo per joint
    deviations: NDArray | None  # the per-log offset deviations (effects coding), None: zeros
    source: str


def _linear_start(robot: Robot, logs: Sequence[Dataset], bounds: ParameterBounds | None,
                  rotor: bool, offsets: Offsets, *, line: bool) -> _LinearStart:
    """The consistent linear fit (cls3, viscous + Coulomb + offset friction) when there are
    bounds; else (or where cls3 refuses the bounds) the robot's own parameters with the
    friction line of an OLS fit's residual (``line``: when a named friction model needs it;
    else zeros)."""
    n = robot.n_joints
    data = logs[0] if len(logs) == 1 else list(logs)
    refused = ""
    if bounds is not None:
        try:
            with warnings.catch_warnings():
                # a start: where the data leave a direction open, the prior's value is a
                # start as good as any (NLS's own fit is what the user reads)
                warnings.simplefilter("ignore", RankDeficiencyWarning)
                fit = identify_constrained(robot, data, method="cls3", bounds=bounds,
                                           friction=ViscousCoulomb.zeros(n),
                                           rotor_inertia=rotor, offsets=offsets)
        except ValueError as error:  # e.g. a total-mass range of zero width
            refused = f" (cls3 refused the bounds: {error})"
        else:
            if np.isfinite(fit.parameters).all() and np.isfinite(fit.friction).all():
                line = fit.friction.reshape(3, n).T
                deviations = None
                if "log_offsets" in fit.model.report:  # o_k = fo + d_k for all logs but the last
                    deviations = np.concatenate([
                        np.asarray(entry["offsets"]) - line[:, 2]
                        for entry in fit.model.report["log_offsets"][:-1]])
                return _LinearStart(
                    parameters=fit.parameters,
                    rotor_inertia=fit.model.robot.rotor_inertia if rotor else None,
                    line=line, deviations=deviations,
                    source=f"cls3 with viscous + Coulomb friction ({fit.status})")
            refused = f" (cls3 gave no finite estimate: {fit.status})"
    if not line:
        return _LinearStart(parameters=robot.parameters, rotor_inertia=None,
                            line=np.zeros((n, 3)), deviations=None,
                            source="the robot's parameters" + refused)
    # the friction line from the residual of an OLS fit, on the whole log (compressed: cheap;
    # a decimation may not excite every column)
    ols = identify(robot, data, friction=ViscousCoulomb.zeros(n))
    residual = np.concatenate([log.tau - ols.rigid_torque(log.q, log.dq, log.ddq)
                               for log in logs])
    line = friction_line(np.concatenate([log.dq for log in logs]), residual)
    return _LinearStart(parameters=robot.parameters, rotor_inertia=None, line=line,
                        deviations=None,
                        source="the robot's parameters, OLS friction line" + refused)


def _check_friction(robot: Robot, friction: str | FrictionModel) -> None:
    n = robot.n_joints
    if isinstance(friction, FrictionModel):
        if friction.n_joints != n:
            raise ValueError(f"`friction` has {friction.n_joints} joints, the robot {n}")
        if friction.name not in NLS_FRICTION_MODELS:
            raise ValueError(f"`friction` must be one of {NLS_FRICTION_MODELS}, got "
                             f"{friction.name!r}")
    elif friction not in NLS_FRICTION_MODELS:
        raise ValueError(f"`friction` must be one of {NLS_FRICTION_MODELS}, got {friction!r}")


def _friction_start(robot: Robot, used: Dataset, friction: str | FrictionModel,
                    line: NDArray, *, stiction: float) -> FrictionModel:
    """The friction model to fit, with its start values: a given model as it is, a named one
    from the start's friction line (``line_start``, with ``stiction``)."""
    if isinstance(friction, FrictionModel):
        return friction
    if friction == "none":
        return NoFriction(robot.n_joints)
    start = line_start(friction, line, used.dq, stiction=stiction)
    if isinstance(start, Arctan) and isinstance(robot.friction, Arctan):
        # the robot file's own shape constants (they stay fixed in the fit)
        start = Arctan(start.tau_s, start.tau_sc, start.tau_v, robot.friction.k_v,
                       robot.friction.delta)
    return start


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


def _log_offsets(logs: Sequence[Dataset], deviations: NDArray, fo: NDArray, normal: NDArray,
                 report: dict, where: slice, fo_position: NDArray | None) -> list[dict]:
    """Every log's offsets ``fo + d_l`` with a standard deviation from the Gauss-Newton
    covariance ``sigma^2 (J^T J)^-1`` (``normal = J^T J / |tau|^2``; the report's relative
    error is ``|r| / |tau|``)."""
    n = fo.size
    n_logs = len(logs)
    sigma2 = (report["relative_error_percent"] / 100) ** 2 / max(
        report["n_equations"] - normal.shape[1], 1)  # over |tau|^2, as `normal`
    covariance = sigma2 * np.linalg.pinv(normal, hermitian=True)
    out = []
    for k, log in enumerate(logs):
        for_log = np.zeros((n, normal.shape[1]))  # o_k = fo + this matrix @ unknowns
        for_log[:, where] = deviation_block(k, n_logs, 1, n)[0]
        if fo_position is not None:
            for_log[np.arange(n), fo_position] = 1.0
        spread = np.einsum("ij,jk,ik->i", for_log, covariance, for_log)
        out.append({"source": str(log.metadata.get("source", f"log {k + 1}")),
                    "offsets": (fo + deviation_block(k, n_logs, 1, n)[0] @ deviations).tolist(),
                    "std": np.sqrt(np.maximum(spread, 0)).tolist()})
    return out


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
    # the rigid body's least-squares std with the friction taken as known, the bounds left
    # out: a lower bound (LinearModel.std_kind)
    std = np.sqrt(sigma2 * np.sum(inverse**2, axis=1))
    return LinearModel(robot=body, friction=NoFriction(n), base=base, coefficients=coefficients,
                       rotor_inertia=rotor,
                       std=std, report={"method": "nls", "status": status,
                                        "std_kind": "lower bound", "rank": base.rank,
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
