"""Levenberg–Marquardt calibration of a kinematic model on end-effector measurements.

Residuals, each divided by its measurement's standard deviation:

- position: ``p_model - p_measured`` (3 per measurement) [m];
- pose: the position, then the rotation error ``log(R_model R_measured^T)`` (3, the rotation
  vector in the measurement frame) [rad]; its Jacobian is ``J_l^-1(r) omega`` (exact);
- plane: the signed distance ``n_k . p_model - d_k`` of the tool point to its plane [m]; the
  planes are unknown, 3 parameters each (the unit normal by two angles about its least-squares
  start, and the offset), estimated with the kinematics.

Standard deviations from ``s^2 (J^T W J)^-1`` with the a-posteriori variance factor
``s^2 = chi^2 / dof`` (``chi2_dof`` reported too).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.optimize
from numpy.typing import ArrayLike, NDArray

from dynid.calibration.measurements import Measurements
from dynid.calibration.model import KinematicModel
from dynid.robot import Robot
from dynid.robot._urdf_tree import matrix_rpy

__all__ = ["Calibration", "calibrate", "plot_calibration"]


def rotation_log(rotation: NDArray) -> NDArray:
    """Rotation vectors ``(*, 3)`` of rotations ``(*, 3, 3)`` (angle in [0, pi]; scipy's
    quaternion route: accurate to round-off near pi too)."""
    from scipy.spatial.transform import Rotation

    rotation = np.asarray(rotation, dtype=float)
    return Rotation.from_matrix(rotation.reshape(-1, 3, 3)).as_rotvec().reshape(
        *rotation.shape[:-2], 3)


def _left_jacobian_inverse(phi: NDArray) -> NDArray:
    """``J_l^-1(phi)`` ``(*, 3, 3)``: d log(exp(d) exp(phi)) / d d at d = 0."""
    angle = np.linalg.norm(phi, axis=-1)
    k = np.zeros((*phi.shape[:-1], 3, 3))
    k[..., 0, 1], k[..., 0, 2], k[..., 1, 2] = -phi[..., 2], phi[..., 1], -phi[..., 0]
    k = k - np.swapaxes(k, -1, -2)
    small = angle < 1e-6
    safe = np.where(small, 1.0, angle)
    coef = np.where(small, 1.0 / 12.0,
                    1.0 / safe**2 - (1.0 + np.cos(safe)) / (2.0 * safe * np.sin(safe)))
    return np.eye(3) - 0.5 * k + coef[..., None, None] * (k @ k)


def _plane_fit(points: NDArray) -> tuple[NDArray, float]:
    """Least-squares plane through ``points`` ``(k, 3)``: unit normal and offset ``n.p = d``."""
    centre = points.mean(axis=0)
    normal = np.linalg.svd(points - centre)[2][-1]
    return normal, float(normal @ centre)


def _tangents(normal: NDArray) -> tuple[NDArray, NDArray]:
    helper = np.eye(3)[int(np.argmin(np.abs(normal)))]
    t1 = np.cross(normal, helper)
    t1 /= np.linalg.norm(t1)
    return t1, np.cross(normal, t1)


class _Problem:
    """The stacked weighted residuals of several measurement sets over the estimated
    parameters (kinematic ones, then 3 per plane)."""

    def __init__(self, model: KinematicModel, sets: list[Measurements], estimated: NDArray,
                 fixed: NDArray) -> None:
        self.model, self.sets, self.estimated, self.fixed = model, sets, estimated, fixed
        self.planes: list[tuple[int, int, NDArray, NDArray, NDArray]] = []
        # per plane: (set index, label, start normal n0, tangents t1, t2)
        self.n_kinematic = estimated.size

    def start_planes(self, values: NDArray) -> NDArray:
        out = []
        self.planes = []
        for s, data in enumerate(self.sets):
            if data.kind != "plane":
                continue
            points = self.model.pose(values, data.q)[:, :3, 3]
            for label in np.unique(data.plane):
                normal, offset = _plane_fit(points[data.plane == label])
                t1, t2 = _tangents(normal)
                self.planes.append((s, int(label), normal, t1, t2))
                out.extend([0.0, 0.0, offset])
        return np.array(out)

    @property
    def n_planes(self) -> int:
        return len(self.planes)

    def values(self, x: NDArray) -> NDArray:
        out = np.array(self.fixed)
        out[self.estimated] = x[:self.n_kinematic]
        return out

    def plane(self, x: NDArray, k: int) -> tuple[NDArray, float, NDArray, NDArray]:
        """Plane k's unit normal, offset and the normal's derivatives by its two angles."""
        a, b, d = x[self.n_kinematic + 3 * k: self.n_kinematic + 3 * k + 3]
        _, _, n0, t1, t2 = self.planes[k]
        raw = n0 + np.tan(a) * t1 + np.tan(b) * t2
        norm = np.linalg.norm(raw)
        normal = raw / norm
        grads = []
        for angle, t in ((a, t1), (b, t2)):
            draw = t / np.cos(angle) ** 2
            grads.append(draw / norm - raw * (raw @ draw) / norm**3)
        return normal, d, grads[0], grads[1]

    def residuals(self, x: NDArray, jacobian: bool = False):
        values = self.values(x)
        blocks, jacs = [], []
        plane_index = 0
        n_x = x.size
        for data in self.sets:
            if jacobian:
                pose, jac = self.model.jacobian(values, data.q)
            else:  # a residual alone (most of LM's evaluations): the poses, half the work
                pose = self.model.pose(values, data.q)
            p = pose[:, :3, 3]
            sp = data.sigma_position[:, None]
            if data.kind in ("position", "pose"):
                blocks.append(((p - data.position) / sp).ravel())
                if jacobian:
                    full = np.zeros((len(data), 3, n_x))
                    full[..., :self.n_kinematic] = jac[:, :3][..., self.estimated] / sp[..., None]
                    jacs.append(full.reshape(-1, n_x))
            if data.kind == "pose":
                sr = data.sigma_rotation[:, None]
                error = rotation_log(pose[:, :3, :3] @ np.swapaxes(data.rotation, 1, 2))
                blocks.append((error / sr).ravel())
                if jacobian:
                    full = np.zeros((len(data), 3, n_x))
                    full[..., :self.n_kinematic] = (_left_jacobian_inverse(error)
                                                    @ jac[:, 3:][..., self.estimated]) \
                        / sr[..., None]
                    jacs.append(full.reshape(-1, n_x))
            if data.kind == "plane":
                r = np.zeros(len(data))
                full = np.zeros((len(data), n_x))
                for label in np.unique(data.plane):
                    rows = data.plane == label
                    normal, d, ga, gb = self.plane(x, plane_index)
                    r[rows] = p[rows] @ normal - d
                    if jacobian:
                        column = self.n_kinematic + 3 * plane_index
                        full[rows, :self.n_kinematic] = np.einsum(
                            "i,mip->mp", normal, jac[rows, :3][..., self.estimated])
                        full[rows, column] = p[rows] @ ga
                        full[rows, column + 1] = p[rows] @ gb
                        full[rows, column + 2] = -1.0
                    plane_index += 1
                blocks.append(r / data.sigma_position)
                if jacobian:
                    jacs.append(full / data.sigma_position[:, None])
        residual = np.concatenate(blocks)
        return (residual, np.vstack(jacs)) if jacobian else residual


def _errors(model: KinematicModel, values: NDArray, data: Measurements,
            planes: list | None = None) -> dict:
    """Per-measurement errors: ``position`` [m] (norm; for a plane contact the distance to its
    plane, the plane refitted at these kinematics unless given), ``rotation`` [rad]."""
    pose = model.pose(values, data.q)
    p = pose[:, :3, 3]
    if data.kind == "plane":
        distance = np.zeros(len(data))
        for k, label in enumerate(np.unique(data.plane)):
            rows = data.plane == label
            normal, offset = _plane_fit(p[rows]) if planes is None else planes[k]
            distance[rows] = p[rows] @ normal - offset
        return {"position": np.abs(distance), "rotation": None}
    out = {"position": np.linalg.norm(p - data.position, axis=1), "rotation": None}
    if data.kind == "pose":
        out["rotation"] = np.linalg.norm(rotation_log(
            pose[:, :3, :3] @ np.swapaxes(data.rotation, 1, 2)), axis=1)
    return out


def _rms(values: list[NDArray | None]) -> float | None:
    values = [v for v in values if v is not None]
    if not values:
        return None
    return float(np.sqrt(np.mean(np.concatenate(values) ** 2)))


@dataclass(frozen=True, eq=False)
class Calibration:
    """The result of ``calibrate`` (see it). Errors per measurement set: ``errors_before`` /
    ``errors_after`` lists of ``{"position": (m,) [m], "rotation": (m,) [rad] or None}`` (the
    position error's norm; a plane contact's distance to its plane)."""

    model: KinematicModel
    values: NDArray  # (P,) every parameter, estimated or held
    start: NDArray  # (P,) the values the fit started from
    estimated: tuple[str, ...]
    std: NDArray  # (len(estimated),) standard deviations [rad or m]
    chi2_dof: float
    dof: int
    errors_before: list
    errors_after: list
    converged: bool
    iterations: int
    message: str
    planes: list = field(default_factory=list)  # per plane (unit normal (3,), offset [m])
    identifiability: object = None  # the Identifiability behind the default parameter set

    @property
    def robot(self) -> Robot:
        """The corrected robot (base frame excluded: ``base_transform``)."""
        return self.model.robot(self.values)

    @property
    def base_transform(self) -> NDArray:
        return self.model.base_transform(self.values)

    @property
    def rms_position_before(self) -> float:
        return _rms([e["position"] for e in self.errors_before])

    @property
    def rms_position_after(self) -> float:
        return _rms([e["position"] for e in self.errors_after])

    @property
    def rms_rotation_before(self) -> float | None:
        return _rms([e["rotation"] for e in self.errors_before])

    @property
    def rms_rotation_after(self) -> float | None:
        return _rms([e["rotation"] for e in self.errors_after])

    def heldout(self, measurements: Measurements | Sequence[Measurements]) -> dict:
        """Per-pose errors on measurements not used in the fit, nominal (``before``, at the
        fit's start values) vs corrected (``after``): ``{"before": [...], "after": [...],
        "rms_position_before", "rms_position_after", "rms_rotation_before",
        "rms_rotation_after"}`` (lists per set as in ``errors_before``; plane contacts are
        measured against their plane refitted at each kinematics)."""
        sets = _as_sets(measurements, self.model)
        before = [_errors(self.model, self.start, data) for data in sets]
        after = [_errors(self.model, self.values, data) for data in sets]
        return {"before": before, "after": after,
                "rms_position_before": _rms([e["position"] for e in before]),
                "rms_position_after": _rms([e["position"] for e in after]),
                "rms_rotation_before": _rms([e["rotation"] for e in before]),
                "rms_rotation_after": _rms([e["rotation"] for e in after])}

    def report(self) -> dict:
        """A JSON-able summary: parameters (nominal, estimate, std, unit), fit statistics."""
        index = {name: k for k, name in enumerate(self.estimated)}
        parameters = []
        for k, p in enumerate(self.model.parameters):
            row = {"name": p.name, "unit": p.unit, "nominal": p.nominal,
                   "value": float(self.values[k]), "estimated": p.name in index}
            if p.name in index:
                row["std"] = float(self.std[index[p.name]])
            parameters.append(row)
        base = self.base_transform
        return {"converged": bool(self.converged), "iterations": int(self.iterations),
                "message": self.message, "chi2_dof": float(self.chi2_dof), "dof": self.dof,
                "rms_position_before_m": self.rms_position_before,
                "rms_position_after_m": self.rms_position_after,
                "rms_rotation_before_rad": self.rms_rotation_before,
                "rms_rotation_after_rad": self.rms_rotation_after,
                "n_estimated": len(self.estimated), "parameters": parameters,
                "base_xyz_m": base[:3, 3].tolist(),
                "base_rpy_rad": matrix_rpy(base[:3, :3]).tolist(),
                "planes": [{"normal": n.tolist(), "offset_m": float(d)}
                           for n, d in self.planes],
                "identifiability": None if self.identifiability is None
                else self.identifiability.report()}


def _as_sets(measurements, model: KinematicModel) -> list[Measurements]:
    sets = [measurements] if isinstance(measurements, Measurements) else list(measurements)
    if not sets:
        raise ValueError("`measurements` holds no measurement set")
    for k, data in enumerate(sets):
        if not isinstance(data, Measurements):
            raise TypeError(f"`measurements[{k}]` must be dynid.calibration.Measurements, got "
                            f"{type(data).__name__}")
        if data.n_joints != model.n_joints:
            raise ValueError(f"`measurements[{k}]`: joint readings of {data.n_joints} joints, "
                             f"the robot has {model.n_joints}")
    return sets


JOINT_LIMIT_MARGIN = 0.1  # [rad or m] beyond the limits a joint reading is refused


def _check_joint_limits(model: KinematicModel, sets: list[Measurements]) -> None:
    """ValueError naming `measurements` when a joint reading lies more than
    ``JOINT_LIMIT_MARGIN`` outside the robot's limits: readings in degrees (or mm) would."""
    limits = model.robot_nominal.limits
    lower = np.asarray(limits.lower, dtype=float) - JOINT_LIMIT_MARGIN
    upper = np.asarray(limits.upper, dtype=float) + JOINT_LIMIT_MARGIN
    for k, data in enumerate(sets):
        outside = (data.q < lower) | (data.q > upper)
        if outside.any():
            row, joint = (int(i) for i in np.argwhere(outside)[0])
            unit = "rad" if model.robot_nominal.joints[joint].kind == "revolute" else "m"
            raise ValueError(
                f"`measurements[{k}]`: measurement {row + 1} reads joint {joint + 1} at "
                f"{data.q[row, joint]:.6g} {unit}, outside its limits [{limits.lower[joint]:.4g}, "
                f"{limits.upper[joint]:.4g}] {unit} by more than {JOINT_LIMIT_MARGIN:g}: "
                "joint readings in degrees? (a file's joint columns take a `_deg` suffix) "
                "Or the wrong robot")


def _kabsch(source: NDArray, target: NDArray) -> NDArray:
    """The rigid transform ``(4, 4)`` with ``target ~ R source + t`` (least squares)."""
    cs, ct = source.mean(axis=0), target.mean(axis=0)
    u, _, vt = np.linalg.svd((source - cs).T @ (target - ct))
    d = np.sign(np.linalg.det(vt.T @ u.T))
    rotation = vt.T @ np.diag([1.0, 1.0, d]) @ u.T
    out = np.eye(4)
    out[:3, :3], out[:3, 3] = rotation, ct - rotation @ cs
    return out


def _registered_start(model: KinematicModel, sets: list[Measurements],
                      start: NDArray) -> NDArray:
    """The start with the base frame registered rigidly (Kabsch) on the measured points, when
    the base is a parameter and at least 3 positions are measured: LM then starts near the
    instrument's frame however far it stands from the robot."""
    if not model.with_base:
        return start
    measured = [d for d in sets if d.kind != "plane"]
    if sum(len(d) for d in measured) < 3:
        return start
    # points in the robot base frame at the start values
    inverse = np.linalg.inv(model.base_transform(start))
    points = np.vstack([(inverse @ model.pose(start, d.q))[:, :3, 3] for d in measured])
    target = np.vstack([d.position for d in measured])
    base_free = _kabsch(points, target)
    out = np.array(start)
    # the base's nominal rotation is the identity: R = Rx(rx) Ry(ry) Rz(rz), intrinsic XYZ
    from scipy.spatial.transform import Rotation

    with warnings.catch_warnings():  # a gimbal lock only picks one of equivalent angle sets
        warnings.simplefilter("ignore", UserWarning)
        angles = Rotation.from_matrix(base_free[:3, :3]).as_euler("XYZ")
    for role, value in zip(("x", "y", "z", "rx", "ry", "rz"), (*base_free[:3, 3], *angles),
                           strict=True):
        out[model.names.index(f"base {role}")] = value
    return out


def calibrate(model: KinematicModel, measurements: Measurements | Sequence[Measurements], *,
              parameters: Sequence[str] | None = None, start: ArrayLike | None = None,
              max_evaluations: int = 200) -> Calibration:
    """Estimate kinematic parameters from end-effector measurements (module docstring).

    ``measurements``: one set or a sequence of sets (kinds may be mixed). ``parameters``: the
    names to estimate (None: the identifiable set of the measured kinds, ``model.identifiable``
    of "pose" if any set is a pose set, else of "position", else of "plane"); the others are
    held at ``start`` (default nominal, with the base frame registered on the measured points
    when it is estimated). ValueError when the measurements cannot determine the parameters
    (fewer residuals than unknowns, or a rank-deficient Jacobian at these poses), when a
    joint reading lies more than ``JOINT_LIMIT_MARGIN`` outside the robot's limits (readings
    in degrees), or when only plane contacts are fitted with every length free (their scale
    is unknown: ``KinematicModel.plane_determined``).
    """
    if not isinstance(model, KinematicModel):
        raise TypeError(f"`model` must be a KinematicModel, got {type(model).__name__}")
    sets = _as_sets(measurements, model)
    kinds = {d.kind for d in sets}
    identifiability = None
    if parameters is None:
        kind = "pose" if "pose" in kinds else ("position" if "position" in kinds else "plane")
        identifiability = model.identifiable(kind)
        names = identifiability.independent
    else:
        names = tuple(parameters)
        unknown = [n for n in names if n not in model.names]
        if unknown:
            raise ValueError(f"`parameters`: {unknown[0]!r} is no parameter of the model "
                             f"(e.g. {', '.join(model.names[:3])}, ...)")
        if len(set(names)) != len(names):
            raise ValueError("`parameters` names a parameter twice")
    estimated = np.array(sorted(model.names.index(n) for n in names), dtype=int)
    if estimated.size == 0:
        raise ValueError("`parameters`: nothing to estimate")
    _check_joint_limits(model, sets)
    names = tuple(model.names[k] for k in estimated)
    if isinstance(max_evaluations, bool) or not isinstance(max_evaluations, (int, np.integer)) \
            or max_evaluations < 1:
        raise ValueError(f"`max_evaluations` must be a positive integer, got {max_evaluations!r}")
    start_values = model.check_values(start, "start") if start is not None else \
        _registered_start(model, sets, np.array(model.nominal))
    if kinds == {"plane"} and parameters is not None and not model.plane_determined(
            estimated, start_values):
        raise ValueError("`parameters`: plane contacts cannot determine these parameters"
                         + (" (with every length free, the robot's scale: scaling every "
                            "length and plane offset together leaves the contacts on their "
                            "planes; hold one length at nominal, as the default parameters "
                            f"do with {model.identifiable('plane').scale_held!r}, or add "
                            "position measurements: a known distance)"
                            if model.scale_free else "") + "; estimate fewer")
    problem = _Problem(model, sets, estimated, start_values)
    x0 = np.concatenate([start_values[estimated], problem.start_planes(start_values)])
    residual0, jac0 = problem.residuals(x0, jacobian=True)
    if residual0.size < x0.size:
        raise ValueError(f"`measurements`: {residual0.size} residuals for {x0.size} unknowns "
                         f"({estimated.size} kinematic parameters"
                         f"{f', {problem.n_planes} planes x 3' if problem.n_planes else ''}); "
                         "measure more poses")
    singular = np.linalg.svd(jac0 / np.maximum(np.linalg.norm(jac0, axis=0), 1e-300),
                             compute_uv=False)
    if singular[-1] < 1e-8 * singular[0]:
        raise ValueError(f"`measurements`: the {estimated.size} parameters are not all "
                         "determined by these poses (rank-deficient Jacobian, condition "
                         f"{singular[0] / max(singular[-1], 1e-300):.3g}); measure more or "
                         "more varied poses, or estimate fewer `parameters`")
    before = [_errors(model, start_values, data) for data in sets]

    def fun(x):
        return problem.residuals(x)

    def jac(x):
        return problem.residuals(x, jacobian=True)[1]
    result = scipy.optimize.least_squares(fun, x0, jac=jac, method="lm", x_scale="jac",
                                          max_nfev=max_evaluations)
    if result.status <= 0:
        warnings.warn(f"calibrate: Levenberg–Marquardt stopped without converging after "
                      f"{result.nfev} evaluations ({result.message}); raise "
                      "`max_evaluations` or give a closer `start`", RuntimeWarning,
                      stacklevel=2)
    residual, jacobian = problem.residuals(result.x, jacobian=True)
    dof = residual.size - result.x.size
    chi2 = float(residual @ residual)
    variance = chi2 / dof if dof > 0 else np.nan
    covariance = variance * np.linalg.pinv(jacobian.T @ jacobian)
    std = np.sqrt(np.clip(np.diag(covariance), 0.0, None))[:estimated.size]
    values = problem.values(result.x)
    planes = [problem.plane(result.x, k)[:2] for k in range(problem.n_planes)]
    after, k = [], 0
    for data in sets:
        if data.kind == "plane":
            count = np.unique(data.plane).size
            after.append(_errors(model, values, data, planes[k:k + count]))
            k += count
        else:
            after.append(_errors(model, values, data))
    return Calibration(model=model, values=values, start=start_values, estimated=names,
                       std=std, chi2_dof=float(variance), dof=int(dof), errors_before=before,
                       errors_after=after, converged=bool(result.status > 0),
                       iterations=int(result.nfev), message=str(result.message),
                       planes=[(np.array(n), float(d)) for n, d in planes],
                       identifiability=identifiability)


def plot_calibration(calibration: Calibration, heldout: Measurements | Sequence[Measurements]
                     | None = None):
    """A matplotlib figure: position errors per pose before/after (fit set, and the held-out
    set when given), and their histogram [mm]."""
    import matplotlib.pyplot as plt  # lazily: only plots need it

    panels = [("fit", calibration.errors_before, calibration.errors_after)]
    if heldout is not None:
        check = calibration.heldout(heldout)
        panels.append(("held out", check["before"], check["after"]))
    figure, axes = plt.subplots(len(panels), 2, figsize=(10, 3.2 * len(panels)),
                                squeeze=False)
    for row, (title, before, after) in zip(axes, panels, strict=True):
        b = 1e3 * np.concatenate([e["position"] for e in before])
        a = 1e3 * np.concatenate([e["position"] for e in after])
        index = np.arange(1, b.size + 1)
        row[0].plot(index, b, "o-", ms=3, label="nominal")
        row[0].plot(index, a, "o-", ms=3, label="calibrated")
        row[0].set_xlabel("pose")
        row[0].set_ylabel("position error [mm]")
        row[0].set_title(f"{title}: per pose")
        row[0].legend()
        bins = np.linspace(0.0, max(b.max(), a.max()) * 1.05 + 1e-12, 30)
        row[1].hist(b, bins=bins, alpha=0.6, label="nominal")
        row[1].hist(a, bins=bins, alpha=0.6, label="calibrated")
        row[1].set_xlabel("position error [mm]")
        row[1].set_title(f"{title}: histogram")
        row[1].legend()
    figure.tight_layout()
    return figure
