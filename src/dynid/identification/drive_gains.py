"""Drive gains and dynamic parameters from motor currents: the global method of Gautier &
Briot (2014), "Global identification of joint drive gains and dynamic parameters of robots".

Most industrial drives log motor currents ``i``, not joint torques: ``tau_j = K_j i_j`` with
an unknown gain ``K_j`` per joint (the motor's torque constant times the gear ratio). The
inverse dynamic model ``Y_b beta = K i`` is homogeneous in ``(beta, K)``: scaling both leaves
it true, so currents alone fix everything up to one scale. One more piece of knowledge fixes
it:

- a log with a known payload on the last link: its mass ``m_L`` (and optionally its CoM)
  enter the torque as known regressor columns ``Y_L pi_L``, moved to the right-hand side:
  ``Y_b beta - diag(i) K + Y_L,u pi_L,u = -Y_L,k pi_L,k`` — the payload's unknown part
  (its inertia, and its first moments when the CoM is not given) is identified along;
- or a known gain on one joint: its column moves to the right-hand side.

All logs (and the payload log) are stacked into one linear least-squares problem, each log
with its own torque offsets (``dynid.identification._logs``); the unknowns are the base
parameters, the n gains, the per-log offset deviations and the payload's unknown part. The
gains and their standard deviations come from the same covariance as the base parameters.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_vector
from dynid.data.dataset import Dataset
from dynid.dynamics import regressor
from dynid.friction.models import FrictionModel
from dynid.identification._fitting import check_rows, fit_base
from dynid.identification._logs import (
    Offsets,
    as_logs,
    deviation_names,
    excitation_faults,
    log_offsets,
)
from dynid.identification._stream import deviation_block, from_arrays
from dynid.identification.linear.estimators import OLS
from dynid.identification.linear.idim import linear_template
from dynid.model._compress import triangular_factor
from dynid.model.base_parameters import (
    STRUCTURAL_RTOL,
    Method,
    base_parameters,
    default_friction,
    structural_regressor,
)
from dynid.model.linear_model import LinearModel
from dynid.robot import Robot
from dynid.robot.inertia import FIRST_MOMENT, INERTIA, MASS, N_LINK_PARAMETERS, PARAMETER_NAMES

__all__ = ["KnownPayload", "identify_drive_gains"]



@dataclass(frozen=True)
class KnownPayload:
    """What is known of the payload of the payload log: its ``mass`` [kg] and, optionally, its
    centre of mass ``com`` ``(3,)`` [m] in the robot's tool (flange) frame. The rest (its
    inertia, and its first moments without ``com``) is identified with the gains."""

    mass: float
    com: ArrayLike | None = None

    def __post_init__(self) -> None:
        if isinstance(self.mass, bool) or not (isinstance(self.mass, (int, float))
                                               and np.isfinite(self.mass) and self.mass > 0):
            raise ValueError(f"`payload.mass` must be a number > 0 kg, got {self.mass!r:.60}")
        if self.com is not None:
            object.__setattr__(self, "com", as_vector("payload.com", self.com, 3))


def _payload_columns(robot: Robot, payload: KnownPayload) -> tuple[NDArray, NDArray, NDArray]:
    """The payload's link-frame parameters that are known ``(10,)`` (zero elsewhere), the
    last-link columns that are unknown, and which of them represent the identifiable
    combinations (structural: e.g. ``XX - YY`` of a link turning about z; the payload's
    identified values are those combinations)."""
    known = np.zeros(N_LINK_PARAMETERS)
    known[MASS] = payload.mass
    every = np.arange(N_LINK_PARAMETERS)
    unknown = list(every[INERTIA])
    if payload.com is None:
        unknown = list(every[FIRST_MOMENT]) + unknown
    else:
        rotation, position = robot.tool[:3, :3], robot.tool[:3, 3]
        known[FIRST_MOMENT] = payload.mass * (rotation @ payload.com + position)
    last = N_LINK_PARAMETERS * (robot.n_joints - 1)
    stacked = structural_regressor(robot)[:, [last + k for k in unknown]]
    names = [PARAMETER_NAMES[k] for k in unknown]
    base = base_parameters(stacked, names=names, rtol=STRUCTURAL_RTOL)
    return known, np.array(unknown), base.independent


def _gain_lookup(robot: Robot, gains: Mapping[int | str, float] | None) -> dict[int, float]:
    """Known gains by joint index (0-based) from a mapping keyed by 1-based joint numbers or
    joint names."""
    gains = dict(gains or {})
    out: dict[int, float] = {}
    for j, (key, value) in zip(robot.joint_indices(gains, "gains"), gains.items(), strict=True):
        if isinstance(value, bool) or not (isinstance(value, (int, float))
                                           and np.isfinite(value) and value != 0):
            raise ValueError(f"`gains[{key!r}]` must be a nonzero number [N m/A], got "
                             f"{value!r:.40}")
        out[j] = float(value)
    return out


@dataclass
class CurrentSystem:
    """The current logs as one problem, per joint j: ``A_j theta + c_j = K_j i_j`` with
    ``theta`` the linear unknowns ``names`` (the base parameters of ``template``, the per-log
    offset deviations, the payload's unknown part), ``c_j`` the known payload's torque and
    ``i_j`` the currents. ``factors[j]``: the triangular factor of ``[A_j c_j i_j]``, all
    a fit in either form needs, are in the fit (``CurrentFit.factors``)."""

    template: LinearModel
    logs: list[Dataset]  # the arm's logs, then the payload log
    names: list[str]
    n_deviations: int
    payload_names: list[str]
    payload: KnownPayload | None
    known_gains: dict[int, float]  # joint index -> K
    free: list[int]  # joints whose gain is unknown
    design: NDArray  # (N, n, len(names)): A
    known_torque: NDArray  # (N, n): c
    current: NDArray  # (N, n): i [A]
    hint: str  # what the logs lack, for a rank-deficiency message

    def payload_report(self, theta: NDArray) -> dict:
        """The report's ``payload`` entry from the unknowns ``theta``."""
        return {"mass": self.payload.mass,
                "com_tool": (None if self.payload.com is None
                             else np.asarray(self.payload.com).tolist()),
                "identified": dict(zip(self.payload_names,
                                       theta[len(theta) - len(self.payload_names):].tolist(),
                                       strict=True))}

    def gains_report(self, drive: NDArray, drive_std: NDArray) -> dict:
        """The report's ``drive_gains`` entry."""
        names = self.template.robot.joint_names
        return {"value": drive.tolist(), "std": drive_std.tolist(),
                "known": {names[j]: g for j, g in self.known_gains.items()}}


def scale_knowledge(robot: Robot, payload_data: Dataset | None, payload: KnownPayload | None,
                    gains: Mapping[int | str, float] | None) -> dict[int, float]:
    """The known gains by joint index, once what fixes the scale of current logs is checked:
    a payload log with its ``KnownPayload``, or a known gain (ValueError without either:
    currents alone identify only ratios)."""
    if (payload_data is None) != (payload is None):
        raise ValueError("`payload_data` and `payload` come together: the payload log and what "
                         "is known of its payload (KnownPayload(mass=...))")
    if payload is not None and not isinstance(payload, KnownPayload):
        raise ValueError(f"`payload` must be a KnownPayload (mass, com), got "
                         f"{type(payload).__name__}")
    if payload_data is not None:
        as_logs(payload_data, effort="current")
        if payload_data.n_joints != robot.n_joints:
            raise ValueError(f"`payload_data` has {payload_data.n_joints} joints, `robot` "
                             f"{robot.n_joints}")
    known_gains = _gain_lookup(robot, gains)
    if payload_data is None and not known_gains:
        raise ValueError("motor currents fix the dynamics only up to a scale: give a payload "
                         "log with its known mass (`payload_data`, `payload`) or a known gain "
                         "for one joint (`gains`); without either only ratios (of the gains, "
                         "of the parameters) are identifiable")
    return known_gains


def current_system(robot: Robot, data: Dataset | Sequence[Dataset], *,
                   payload_data: Dataset | None, payload: KnownPayload | None,
                   gains: Mapping[int | str, float] | None, friction: FrictionModel,
                   method: Method, rotor_inertia: bool, offsets: Offsets) -> CurrentSystem:
    """The current logs ``data`` (and the payload log) as one ``CurrentSystem``; ValueError
    for logs of torques, a missing scale (no payload log, no known gain), or a payload log
    without its payload."""
    logs = as_logs(data, effort="current")
    known_gains = scale_knowledge(robot, payload_data, payload, gains)
    every = logs + ([payload_data] if payload_data is not None else [])
    for k, log in enumerate(every):
        if log.n_joints != robot.n_joints:
            raise ValueError(f"log {k + 1} has {log.n_joints} joints, `robot` {robot.n_joints}")
    template = linear_template(robot, friction, method=method, rotor_inertia=rotor_inertia)
    n = robot.n_joints
    deviations = deviation_names(template, every, offsets)
    free = [j for j in range(n) if j not in known_gains]
    if payload_data is not None:
        known, unknown, independent = _payload_columns(robot, payload)
        payload_names = [f"payload_{PARAMETER_NAMES[unknown[k]]}" for k in independent]
    else:
        payload_names = []
    names = [*template.base.base_names, *deviations, *payload_names]
    linear, known_torque, currents = [], [], []
    last = N_LINK_PARAMETERS * (n - 1)
    for k, log in enumerate(every):
        block = [template.base_regressor(log.q, log.dq, log.ddq)]
        if deviations:
            block.append(deviation_block(k, len(every), log.n_samples, n))
        known_part = np.zeros((log.n_samples, n))
        if payload_names:
            link = np.zeros((log.n_samples, n, len(payload_names)))
            if log is payload_data:
                columns = regressor(robot, log.q, log.dq, log.ddq)[..., last:]
                link = columns[..., unknown[independent]]
                known_part = columns @ known
            block.append(link)
        linear.append(np.concatenate(block, axis=-1))
        known_torque.append(known_part)
        currents.append(log.tau)
    faults = excitation_faults(every, robot.joint_names)
    return CurrentSystem(
        template=template, logs=every, names=names, n_deviations=len(deviations),
        payload_names=payload_names, payload=payload, known_gains=known_gains, free=free,
        design=np.concatenate(linear), known_torque=np.concatenate(known_torque),
        current=np.concatenate(currents),
        hint="; ".join(faults) or "every joint must move, in both directions for Coulomb "
                                  "friction")


def identify_drive_gains(robot: Robot, data: Dataset | Sequence[Dataset], *,
                         payload_data: Dataset | None = None,
                         payload: KnownPayload | None = None,
                         gains: Mapping[int | str, float] | None = None,
                         friction: FrictionModel | None = None, method: Method = "rref",
                         rotor_inertia: bool | None = None,
                         offsets: Offsets = "per-log") -> LinearModel:
    """Drive gains ``K`` (torque = K current, per joint) jointly with the base parameters
    from motor-current logs (Gautier & Briot 2014; see the module).

    ``data``: one or more logs with ``effort="current"`` [A]. The scale is fixed by
    ``payload_data`` (a current log with the payload ``payload`` on the last link) or by
    ``gains`` (known gains, ``{joint number or name: K}``), or both. ``friction``,
    ``method``, ``rotor_inertia`` and ``offsets`` as for ``identify``. Returns a LinearModel in
    torque units with ``drive_gains`` and ``drive_gains_std``; the report holds the payload's
    identified part and every log's offsets. The physically consistent methods take currents
    too (``identify_constrained``).
    """
    friction = default_friction(robot) if friction is None else friction
    rotor = bool(robot.rotor_inertia.any()) if rotor_inertia is None else rotor_inertia
    system = current_system(robot, data, payload_data=payload_data, payload=payload,
                            gains=gains, friction=friction, method=method, rotor_inertia=rotor,
                            offsets=offsets)
    template = system.template
    rank, n_deviations = template.base.rank, system.n_deviations
    fit = gautier_briot_fit(system)
    theta, inverse_gains, covariance = fit.theta, fit.inverse_gains, fit.covariance
    size = len(system.names)
    drive, drive_std = gains_and_std(inverse_gains, covariance, size, system.free)
    std = np.sqrt(np.diag(covariance)[:size])
    design, current = system.design, system.current
    predicted = design @ theta + system.known_torque
    measured = current * drive
    report = {"method": "gautier-briot", "kind": "current", "rank": size + len(system.free),
              "condition_number": fit.condition, "n_samples": int(current.shape[0]),
              "n_equations": int(current.size),
              "relative_error_percent": float(100 * np.linalg.norm(measured - predicted)
                                              / np.linalg.norm(measured)),
              "drive_gains": system.gains_report(drive, drive_std)}
    if system.payload_names:
        report["payload"] = system.payload_report(theta)
    keep = np.arange(rank + n_deviations)  # the base parameters and the deviations
    per_log = log_offsets(template, system.logs, theta[keep], covariance[np.ix_(keep, keep)],
                          n_deviations)
    if per_log is not None:
        report["log_offsets"] = per_log
    return dataclasses.replace(template, coefficients=theta[:rank], std=std[:rank],
                               report=report, drive_gains=drive, drive_gains_std=drive_std)


def gains_and_std(inverse_gains: NDArray, covariance: NDArray, size: int, free: list[int]
                  ) -> tuple[NDArray, NDArray]:
    """The gains ``K = 1 / h`` and their standard deviations (zero for known gains) from the
    covariance of ``(theta (size), h[free])``: ``std(K) = std(h) / h^2`` (first order)."""
    drive = 1.0 / inverse_gains
    drive_std = np.zeros(inverse_gains.size)
    drive_std[free] = (np.sqrt(np.maximum(np.diag(covariance)[size:], 0))
                       / inverse_gains[free] ** 2)
    return drive, drive_std


@dataclass
class CurrentFit:
    """The least-squares fit in current units (``gautier_briot_fit``): the unknowns ``theta``, the
    inverse gains ``h = 1 / K`` ``(n,)``, the covariance of ``(theta, h[free])``, the
    condition number of the final weighted problem, each joint's current noise [A] (ones
    where the currents are noise-free) and the per-joint factors of ``[A_j c_j i_j]``."""

    theta: NDArray
    inverse_gains: NDArray
    covariance: NDArray
    condition: float
    noise: NDArray
    factors: list[NDArray]


def gautier_briot_fit(system: CurrentSystem) -> CurrentFit:
    """The unconstrained fit of ``system`` (see ``_fit``)."""
    return _fit(system.design, system.known_torque, system.current, system.free,
                system.known_gains, system.names, bool(system.payload_names), system.hint)


def _fit(design: NDArray, known_torque: NDArray, current: NDArray, free: list[int],
         known_gains: dict[int, float], names: list[str], with_payload: bool, hint: str
         ) -> CurrentFit:
    """``theta`` (the linear unknowns ``names``), the inverse gains ``h = 1 / K`` ``(n,)``, the
    covariance of ``(theta, h[free])`` and the condition number of the final (weighted)
    problem, in a ``CurrentFit``.

    The linear form ``A theta - diag(i) K = -c`` (``c``: the known payload torque) has the
    noisy currents in its regressor, which biases the gains towards zero (errors in
    variables: -18 % on a weak joint of the twin). It gives the start and the rank check; the
    estimate is the least-squares fit in current units, ``i = h (A theta + c)``, where the
    noise is: Gauss-Newton on ``(theta, h)`` on each joint's compressed rows, then again with
    each joint's rows weighted by its own current noise (drives differ: a joint's noise in
    amperes is its torque noise over its gain), the covariance ``sigma^2 (J^T W J)^-1`` at the
    solution.
    """
    n = current.shape[1]
    target = np.zeros_like(current)
    for j, gain in known_gains.items():
        target[:, j] = gain * current[:, j]
    columns = np.zeros((*current.shape, len(free)))
    columns[:, free, np.arange(len(free))] = -current[:, free]
    start = OLS()
    gain_names = [f"K{j + 1}" for j in free]
    check_rows(design.shape[0] * design.shape[1], len(names) + len(free), "the current logs")
    try:
        fit_base(start, from_arrays(np.concatenate([design, columns], axis=-1),
                                    target - known_torque),
                 names + gain_names, "the current logs", hint)
    except ValueError as error:
        if with_payload and not known_gains and re.search(r"\b(K\d+|payload_\w+)\b",
                                                          str(error)):
            raise ValueError(
                "the payload log does not fix the drive gains: its payload is not excited (the "
                "known payload's torque must vary over the log — move the joints that carry "
                "it; a payload held still cannot be told from the log's torque offsets)"
            ) from None
        raise
    size = len(names)
    theta = start.coef_[:size]  # the columns now hold d(i - h (A theta + c)) / d h
    gains = np.zeros(n)
    for j, gain in known_gains.items():
        gains[j] = gain
    gains[free] = start.coef_[size:]
    if not (gains != 0).all():
        raise ValueError("the current logs leave a drive gain at zero: excite every joint")
    inverse = 1.0 / gains
    # per joint j, [A_j c_j i_j] compressed once to R_j: the residual i_j - h_j (A_j theta + c_j)
    # and its Jacobian are [A_j c_j i_j] times small matrices, so every step is (u+2)-sized
    factors = [triangular_factor(np.column_stack([design[:, j], known_torque[:, j]]),
                                 extra=current[:, j]) for j in range(n)]
    unknowns = size + len(free)
    samples = current.shape[0]
    noise = used = np.ones(n)
    for _ in range(2):  # unweighted, then each joint weighted by its own current noise
        used = noise
        weighted = [factor / sigma for factor, sigma in zip(factors, noise, strict=True)]
        for _ in range(_MAX_STEPS):
            jacobian, residual = _step_problem(weighted, theta, inverse, free)
            step = np.linalg.lstsq(jacobian, -residual, rcond=None)[0]
            theta = theta + step[:size]
            inverse[free] += step[size:]
            scale = np.abs(np.concatenate([theta, inverse[free]])) + 1e-300
            if np.max(np.abs(step) / scale) < _STEP_RTOL:
                break
        level = noise * joint_noise(weighted, theta, inverse, free, samples, unknowns)
        # noise-free (simulated) currents: nothing to weigh by, the unweighted fit stands
        noise = level if (level > 1e-12 * np.abs(current).max()).all() else noise
    covariance, condition = current_covariance(weighted, theta, inverse, free, current.size)
    return CurrentFit(theta=theta, inverse_gains=inverse, covariance=covariance,
                      condition=condition, noise=used, factors=factors)


def joint_noise(factors: list[NDArray], theta: NDArray, inverse: NDArray, free: list[int],
                samples: int, unknowns: int) -> NDArray:
    """Each joint's residual RMS ``(n,)`` (in the units of ``factors``' rows) at ``(theta,
    h)``, the unknowns shared out evenly among the joints."""
    _, residual = _step_problem(factors, theta, inverse, free)
    per_joint = (residual.reshape(len(factors), -1) ** 2).sum(axis=1)
    return np.sqrt(per_joint / (samples - unknowns / len(factors)))


def current_covariance(factors: list[NDArray], theta: NDArray, inverse: NDArray,
                       free: list[int], n_equations: int) -> tuple[NDArray, float]:
    """The Gauss-Newton covariance ``sigma^2 (J^T J)^-1`` of ``(theta, h[free])`` at ``(theta,
    h)`` on the (noise-weighted) factors, ``sigma^2`` from the residual there, and the
    condition number of ``J``."""
    jacobian, residual = _step_problem(factors, theta, inverse, free)
    sigma2 = float(residual @ residual) / (n_equations - theta.size - len(free))
    return sigma2 * np.linalg.pinv(jacobian.T @ jacobian), float(np.linalg.cond(jacobian))


def _step_problem(factors: list[NDArray], theta: NDArray, inverse: NDArray, free: list[int]
                  ) -> tuple[NDArray, NDArray]:
    """The compressed Gauss-Newton problem at ``(theta, h)``: ``R_j`` times the residual's
    weights ``(-h_j theta, -h_j, 1)`` and times its derivatives, stacked over the joints."""
    size = theta.size
    rows, targets = [], []
    for j, factor in enumerate(factors):
        weights = np.concatenate([-inverse[j] * theta, [-inverse[j], 1.0]])
        derivative = np.zeros((size + 2, size + len(free)))
        derivative[:size, :size] = -inverse[j] * np.eye(size)
        if j in free:
            derivative[:size + 1, size + free.index(j)] = np.concatenate([-theta, [-1.0]])
        rows.append(factor @ derivative)
        targets.append(factor @ weights)
    return np.concatenate(rows), np.concatenate(targets)


_MAX_STEPS = 20  # Gauss-Newton steps in current units (3-5 reach 1e-10 on the twin)
_STEP_RTOL = 1e-10
