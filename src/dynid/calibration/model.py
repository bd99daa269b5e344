"""Kinematic parameter models: the tool pose in the measurement frame as a product of elementary
factors, each factor one named scalar parameter, and its exact Jacobian.

The chain from the measurement frame (the tracker's or camera's frame) to the tool is::

    meas_T_tool(q) = B  prod_j (Pre_j  motion_j(q_j)  Post_j)  Tool

with ``B`` the base frame (measurement frame -> robot base), ``Pre_j``/``Post_j`` the joint's
fixed parts and ``Tool`` the tool frame. Every fixed part is a product of elementary factors,
a rotation about or a translation along a unit vector ``u`` of the local frame, each either a
parameter or a constant:

- MDH rows (Craig): ``Rx(alpha) [Ry(beta)] Tx(a) Rz(theta) Tz(d)``; the joint offset is
  ``theta`` (revolute) or ``d`` (prismatic). Hayati's ``beta`` (rotation about y) is added
  where the joint axis is (nearly) parallel to the previous one (``|sin alpha| < 0.1``), where
  the table cannot express a tilt of the axis.
- DH rows (standard): ``Rz(theta) Tz(d) Tx(a) Rx(alpha) [Ry(beta)]``; where ``z_{i-1}`` is
  (nearly) parallel to ``z_i`` (``|sin alpha_i| < 0.1``) ``d`` is singular and is replaced by
  Hayati's ``beta`` (``d`` then stays a constant at its nominal value).
- URDF joints: the origin ``T(x, y, z) Rx(rx) Ry(ry) Rz(rz) R0``, ``R0`` the nominal rotation
  (a constant) and ``rx, ry, rz`` small error rotations (nominal 0) about the axes of the frame
  the origin is given in (the parent link's, where the previous joint's axis lies): never
  singular, whatever the nominal (a URDF pitch of exactly pi/2 included), and a dependency
  with the previous joint's axis stays exact when ``R0`` is written rounded (``1.5707963``);
  then the zero offset (a rotation about / translation along the joint axis); a
  non-identity ``post`` stays constant.
- base and tool: ``T(x, y, z) Rx(rx) Ry(ry) Rz(rz) R0`` likewise (base ``R0`` = identity).

Jacobian: a parameter's factor at frame ``F`` (the product of everything before it) moves the
tool by the screw ``omega = R_F u``, ``dp = omega x (p_tool - o_F)`` (rotation) or
``omega = 0``, ``dp = R_F u`` (translation): exact, batched over poses.

Units: lengths in m, angles in rad. ``Jacobian`` rows ``[dp (3) in m; omega (3) in rad]`` per
pose, in the measurement frame.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_float_array
from dynid.model.base_parameters import BaseParameters, base_parameters
from dynid.robot import Robot
from dynid.robot._joint import (
    Joint,
    PrismaticMDH,
    RevoluteDH,
    RevoluteMDH,
    skew,
)

__all__ = ["IDENTIFIABILITY_RTOL", "REGROUP_ATOL", "Identifiability", "KinematicModel",
           "Parameter", "project_on_planes"]

PARALLEL_SIN = 0.1  # |sin alpha| below this: consecutive axes (nearly) parallel, Hayati's beta
# Relative rank tolerance of the identifiability decision on the scaled Jacobian. Kinematic
# dependencies are exact (a parallel-axis pair, the base yaw and joint 1's offset), so they sit
# at round-off (~1e-15); genuine weak directions of an arm are above 1e-4.
IDENTIFIABILITY_RTOL = 1e-8
# A regrouping coefficient below this (in the unitless Jacobian's units) is rref round-off.
REGROUP_ATOL = 1e-6
_AXES = np.eye(3)
Kind = Literal["position", "pose", "plane"]


@dataclass(frozen=True)
class Parameter:
    """One scalar kinematic parameter: ``name`` (e.g. ``"joint 3 offset"``), ``unit`` ("rad"
    or "m"), ``nominal`` value, ``group`` ("base", "joint 3", "tool") and ``role`` (offset,
    a, alpha, d, theta, beta, x, y, z, rx, ry, rz)."""

    name: str
    unit: str
    nominal: float
    group: str
    role: str

    @property
    def is_angle(self) -> bool:
        return self.unit == "rad"


@dataclass(frozen=True)
class _Factor:
    rotation: bool  # rotation about u, else translation along u
    u: NDArray
    parameter: int | None  # index into the model's parameters, None: constant
    value: float  # the constant's value (unused for a parameter)


@dataclass(frozen=True)
class _Motion:
    joint: int


@dataclass(frozen=True)
class _Constant:
    matrix: NDArray


def _rotation(u: NDArray, angle: NDArray | float) -> NDArray:
    """Rodrigues: rotation by ``angle`` (any shape ``S``) about unit ``u`` -> ``(*S, 3, 3)``."""
    angle = np.asarray(angle, dtype=float)
    k = skew(u)
    s, c = np.sin(angle)[..., None, None], np.cos(angle)[..., None, None]
    return np.eye(3) + s * k + (1.0 - c) * (k @ k)


def _factor_matrix(rotation: bool, u: NDArray, value) -> NDArray:
    value = np.asarray(value, dtype=float)
    out = np.zeros((*value.shape, 4, 4))
    out[..., 3, 3] = 1.0
    if rotation:
        out[..., :3, :3] = _rotation(u, value)
    else:
        out[..., :3, :3] = np.eye(3)
        out[..., :3, 3] = value[..., None] * u
    return out


def _frame_factors(matrix: NDArray) -> list[tuple]:
    """(rotation, axis index, role, nominal) for ``T(x, y, z) Rx(rx) Ry(ry) Rz(rz) R0``, with
    ``None`` standing for the constant nominal rotation ``R0`` (the error angles start at 0,
    about the axes of the frame the origin is given in)."""
    x, y, z = matrix[:3, 3]
    return [(False, 0, "x", x), (False, 1, "y", y), (False, 2, "z", z),
            (True, 0, "rx", 0.0), (True, 1, "ry", 0.0), (True, 2, "rz", 0.0), None]


@dataclass(frozen=True)
class Identifiability:
    """The identifiable (base) kinematic parameters of one measurement kind.

    ``independent``: names estimated (one per independent direction of the scaled Jacobian);
    ``unidentifiable``: names the measurements cannot see at all (held at nominal);
    ``coefficients``: for each independent parameter entering a combination, the combination
    it stands for in physical units, ``{"joint 7 offset": {"joint 7 offset": 1.0, "tool y":
    16.67}}`` (a length entering an angle's combination in 1/m, an angle entering a length's
    in m; coefficients below ``REGROUP_ATOL`` in the unitless Jacobian dropped): its estimate
    absorbs the errors of the others, which are held at nominal; ``regrouped``: the same as
    text; ``scale_held``: for plane contacts, the length held at nominal to fix the robot's
    scale (None when the data fix it, e.g. a prismatic joint or a held length);
    ``base``: the rank decision itself (on the unitless Jacobian)."""

    kind: str
    independent: tuple[str, ...]
    unidentifiable: tuple[str, ...]
    regrouped: dict
    base: BaseParameters
    coefficients: dict = dataclasses.field(default_factory=dict)
    scale_held: str | None = None

    @property
    def rank(self) -> int:
        return len(self.independent)

    def report(self) -> dict:
        return {"kind": self.kind, "rank": self.rank, "independent": list(self.independent),
                "unidentifiable": list(self.unidentifiable), "regrouped": dict(self.regrouped),
                "coefficients": {name: dict(terms) for name, terms in self.coefficients.items()},
                "scale_held": self.scale_held}


def _expression(terms: dict) -> str:
    """``{"a": 1.0, "b": -0.5}`` as ``"a - 0.5 b"`` (4 significant digits)."""
    out = []
    for name, value in terms.items():
        size = "" if np.isclose(abs(value), 1.0, rtol=1e-4, atol=0) else f"{abs(value):.4g} "
        out.append(f"{'-' if value < 0 else '+'} {size}{name}")
    text = " ".join(out)
    return text[2:] if text.startswith("+ ") else "-" + text[1:]


def project_on_planes(model: KinematicModel, values: NDArray, q: NDArray, normals: NDArray,
                      offsets: NDArray, targets: NDArray,
                      iterations: int = 40) -> tuple[NDArray, NDArray]:
    """Joint positions near ``q`` ``(m, n)`` whose tool point lies at signed distance
    ``targets`` ``(m,)`` [m] from its plane ``normals . p = offsets`` (``(m, 3)``, ``(m,)``),
    within the joint limits: minimum-norm Newton steps on the joints not blocked by a limit,
    batched. Returns ``(q, gap)``: the poses and their remaining distance error ``(m,)`` [m]
    (the caller decides what an unreachable plane means)."""
    q = np.array(q, dtype=float)
    limits = model.robot_nominal.limits
    lower, upper = np.asarray(limits.lower, float), np.asarray(limits.upper, float)
    for _ in range(iterations):
        pose, jq = model.joint_jacobian(values, q)
        gap = np.einsum("mi,mi->m", normals, pose[:, :3, 3]) - offsets - targets
        if np.abs(gap).max() < 1e-13 * model.reach:
            break
        row = np.einsum("mi,mij->mj", normals, jq[:, :3])
        step = -row * (gap / np.maximum(np.einsum("mj,mj->m", row, row), 1e-300))[:, None]
        blocked = ((q <= lower) & (step < 0)) | ((q >= upper) & (step > 0))
        row = np.where(blocked, 0.0, row)
        step = -row * (gap / np.maximum(np.einsum("mj,mj->m", row, row), 1e-300))[:, None]
        q = np.clip(q + step, lower, upper)
    pose = model.pose(values, q)
    gap = np.einsum("mi,mi->m", normals, pose[:, :3, 3]) - offsets - targets
    return q, gap


class KinematicModel:
    """Named kinematic parameters of ``robot`` and the tool pose they give (module docstring).

    ``parameters``: ``"full"`` (every link parameter, with Hayati's beta where needed) or
    ``"offsets"`` (the joint offsets only); ``base`` / ``tool``: whether the base frame
    (measurement frame -> robot base, nominal identity) and the tool frame (nominal
    ``robot.tool``) are parameters (6 each).

    The base frame is **not** folded into the corrected robot: it is where the instrument
    stands, not part of the arm, and the robot's gravity is given in the robot's base frame;
    ``base_transform(values)`` returns it separately.

    Attributes: ``names``, ``units`` and ``nominal`` ``(P,)`` of the parameters (in chain
    order: base, joint 1 ... joint n, tool), ``is_angle`` ``(P,)``, ``parameters`` (each a
    ``Parameter``), ``reach`` (the characteristic length [m]: the sum of the joint and tool
    offsets' lengths) and ``robot_nominal``.
    """

    def __init__(self, robot: Robot, *, parameters: Literal["full", "offsets"] = "full",
                 base: bool = True, tool: bool = True) -> None:
        if not isinstance(robot, Robot):
            raise TypeError(f"`robot` must be a dynid Robot, got {type(robot).__name__}")
        if parameters not in ("full", "offsets"):
            raise ValueError(f"`parameters` must be 'full' or 'offsets', got {parameters!r}")
        self.robot_nominal = robot
        self.mode = parameters
        self.with_base = bool(base)
        self.with_tool = bool(tool)
        self._params: list[Parameter] = []
        self._elements: list = []
        self._owners: list = []  # per element: "base", "tool", (joint, 0 pre | 1 post)
        self._owner: object = "base"
        self._joint_kinds = tuple(j.kind for j in robot.joints)
        self._axes = np.array([j.axis for j in robot.joints])
        use_table = robot.convention in ("mdh", "dh") and robot.table is not None \
            and len(robot.table) == robot.n_joints
        self._table_kind = robot.convention if use_table else None
        self._frame(self.with_base, "base", np.eye(4))
        for j, joint in enumerate(robot.joints):
            if use_table:
                self._row(j, robot.table[j])
            else:
                self._urdf_joint(j, joint)
        self._frame(self.with_tool, "tool", robot.tool)
        self.names = tuple(p.name for p in self._params)
        self.units = tuple(p.unit for p in self._params)
        self.nominal = np.array([p.nominal for p in self._params])
        self.nominal.setflags(write=False)
        self.is_angle = np.array([p.is_angle for p in self._params])
        self.reach = self._reach(robot)
        self._identifiable: dict = {}

    # --- building ------------------------------------------------------------------------
    @property
    def parameters(self) -> tuple[Parameter, ...]:
        return tuple(self._params)

    @property
    def n_parameters(self) -> int:
        return len(self._params)

    @property
    def n_joints(self) -> int:
        return self.robot_nominal.n_joints

    def _add(self, rotation: bool, u, group: str, role: str, nominal: float,
             free: bool) -> None:
        u = _AXES[u] if isinstance(u, (int, np.integer)) else np.asarray(u, dtype=float)
        if free:
            index = len(self._params)
            self._params.append(Parameter(f"{group} {role}", "rad" if rotation else "m",
                                          float(nominal), group, role))
            self._elements.append(_Factor(rotation, u, index, 0.0))
        else:
            self._elements.append(_Factor(rotation, u, None, float(nominal)))
        self._owners.append(self._owner)

    def _motion(self, j: int) -> None:
        self._elements.append(_Motion(j))
        self._owners.append((j, 0))
        self._owner = (j, 1)

    def _fixed_frame(self, free: bool, group: str, matrix: NDArray) -> None:
        """``matrix`` as translations, its constant rotation and three error rotations
        (parameters when ``free``; a single constant otherwise)."""
        if not free:
            if not np.array_equal(matrix, np.eye(4)):
                self._elements.append(_Constant(np.array(matrix, dtype=float)))
                self._owners.append(self._owner)
            return
        for factor in _frame_factors(matrix):
            if factor is None:
                rotation = np.eye(4)
                rotation[:3, :3] = matrix[:3, :3]
                if not np.array_equal(rotation, np.eye(4)):
                    self._elements.append(_Constant(rotation))
                    self._owners.append(self._owner)
                continue
            self._add(*factor[:2], group, factor[2], factor[3], True)

    def _frame(self, free: bool, group: str, matrix: NDArray) -> None:
        self._owner = group
        self._fixed_frame(free, group, matrix)

    def _row(self, j: int, row) -> None:
        group = f"joint {j + 1}"
        full = self.mode == "full"
        self._owner = (j, 0)
        if isinstance(row, (RevoluteMDH, PrismaticMDH)):
            beta = abs(np.sin(row.alpha)) < PARALLEL_SIN
            self._add(True, 0, group, "alpha", row.alpha, full)
            if beta and full:
                self._add(True, 1, group, "beta", 0.0, True)
            self._add(False, 0, group, "a", row.a, full)
            if isinstance(row, RevoluteMDH):
                self._add(True, 2, group, "offset", row.offset, True)
                self._add(False, 2, group, "d", row.d, full)
            else:
                self._add(True, 2, group, "theta", row.theta, full)
                self._add(False, 2, group, "offset", row.offset, True)
            self._motion(j)
            return
        beta = abs(np.sin(row.alpha)) < PARALLEL_SIN and full
        if isinstance(row, RevoluteDH):
            self._add(True, 2, group, "offset", row.offset, True)
            self._motion(j)
            self._add(False, 2, group, "d", row.d, full and not beta)
        else:
            self._add(True, 2, group, "theta", row.theta, full)
            self._add(False, 2, group, "offset", row.offset, True)
            self._motion(j)
        self._add(False, 0, group, "a", row.a, full)
        self._add(True, 0, group, "alpha", row.alpha, full)
        if beta:
            self._add(True, 1, group, "beta", 0.0, True)

    def _urdf_joint(self, j: int, joint: Joint) -> None:
        group = f"joint {j + 1}"
        self._owner = (j, 0)
        self._fixed_frame(self.mode == "full", group, np.asarray(joint.pre, dtype=float))
        self._add(joint.kind == "revolute", joint.axis, group, "offset", 0.0, True)
        self._motion(j)
        if not np.allclose(joint.post, np.eye(4), atol=0.0, rtol=0.0):
            self._elements.append(_Constant(np.array(joint.post)))
            self._owners.append((j, 1))

    @staticmethod
    def _reach(robot: Robot) -> float:
        total = np.linalg.norm(robot.tool[:3, 3])
        for joint in robot.joints:
            total += np.linalg.norm(joint.pre[:3, 3]) + np.linalg.norm(joint.post[:3, 3])
        return float(max(total, 1e-3))

    # --- evaluation ----------------------------------------------------------------------
    def check_values(self, values: ArrayLike | None, name: str = "values") -> NDArray:
        """``values`` ``(P,)`` as a float array (None: a copy of ``nominal``)."""
        if values is None:
            return np.array(self.nominal)
        out = as_float_array(name, values)
        if out.shape != (self.n_parameters,):
            raise ValueError(f"`{name}` must be ({self.n_parameters},) kinematic parameters, "
                             f"got shape {out.shape}")
        return out

    def check_q(self, q: ArrayLike, name: str = "q") -> NDArray:
        out = as_float_array(name, q)
        if out.ndim == 1:
            out = out[None]
        if out.ndim != 2 or out.shape[1] != self.n_joints:
            raise ValueError(f"`{name}` must be (m, {self.n_joints}) joint positions [rad or m],"
                             f" got shape {np.shape(q)}")
        return out

    def _run(self, values: NDArray, q: NDArray, jacobian: bool, joints: bool = False):
        m = q.shape[0]
        pose = np.broadcast_to(np.eye(4), (m, 4, 4)).copy()
        frames = []  # (index, rotation, axis in measurement frame (m, 3), origin (m, 3))
        for element in self._elements:
            if isinstance(element, _Motion):
                j = element.joint
                revolute = self._joint_kinds[j] == "revolute"
                if joints:
                    frames.append((-1 - j, revolute, pose[:, :3, :3] @ self._axes[j],
                                   pose[:, :3, 3].copy()))
                pose = pose @ _factor_matrix(revolute, self._axes[j], q[:, j])
            elif isinstance(element, _Constant):
                pose = pose @ element.matrix
            else:
                k = element.parameter
                value = element.value if k is None else values[k]
                if jacobian and k is not None:
                    frames.append((k, element.rotation, pose[:, :3, :3] @ element.u,
                                   pose[:, :3, 3].copy()))
                pose = pose @ _factor_matrix(element.rotation, element.u, value)
        if not (jacobian or joints):
            return pose, None, None
        tip = pose[:, :3, 3]
        jac = np.zeros((m, 6, self.n_parameters))
        jq = np.zeros((m, 6, self.n_joints))
        for k, rotation, w, origin in frames:
            target = jac if k >= 0 else jq
            column = k if k >= 0 else -1 - k
            if rotation:
                target[:, :3, column] = np.cross(w, tip - origin)
                target[:, 3:, column] = w
            else:
                target[:, :3, column] = w
        return pose, jac, jq

    def pose(self, values: ArrayLike | None, q: ArrayLike) -> NDArray:
        """Tool poses ``(m, 4, 4)`` in the measurement frame at joint positions ``q`` ``(m, n)``
        for parameter ``values`` ``(P,)`` (None: nominal)."""
        return self._run(self.check_values(values), self.check_q(q), False)[0]

    def jacobian(self, values: ArrayLike | None, q: ArrayLike) -> tuple[NDArray, NDArray]:
        """``(poses (m, 4, 4), J (m, 6, P))``: J's rows are the tool point's displacement [m]
        and the tool frame's rotation [rad] (measurement frame) per unit of each parameter."""
        pose, jac, _ = self._run(self.check_values(values), self.check_q(q), True)
        return pose, jac

    def joint_jacobian(self, values: ArrayLike | None, q: ArrayLike) -> tuple[NDArray, NDArray]:
        """``(poses (m, 4, 4), Jq (m, 6, n))``: the geometric Jacobian w.r.t. the joints."""
        pose, _, jq = self._run(self.check_values(values), self.check_q(q), False, True)
        return pose, jq

    def base_transform(self, values: ArrayLike | None = None) -> NDArray:
        """The base frame ``(4, 4)``: the robot base in the measurement frame."""
        values = self.check_values(values)
        out = np.eye(4)
        for element, owner in zip(self._elements, self._owners, strict=True):
            if owner != "base":
                break
            if isinstance(element, _Constant):
                out = out @ element.matrix
                continue
            value = element.value if element.parameter is None else values[element.parameter]
            out = out @ _factor_matrix(element.rotation, element.u, value)
        return out

    # --- the corrected robot -------------------------------------------------------------
    def robot(self, values: ArrayLike | None) -> Robot:
        """The corrected robot (the base frame excluded: ``base_transform``). Joints rebuilt,
        tool updated; inertials, limits, friction and names carried over. An MDH/DH robot
        whose corrected values are still a table (every Hayati beta 0) keeps its convention
        with the rows updated (it round-trips through the robot file); otherwise it becomes a
        URDF-convention robot (exportable by ``dynid.export``)."""
        values = self.check_values(values)
        nominal = self.robot_nominal
        parts = {"tool": np.eye(4), "base": np.eye(4)}
        for j in range(self.n_joints):
            parts[(j, 0)] = np.eye(4)
            parts[(j, 1)] = np.eye(4)
        for element, owner in zip(self._elements, self._owners, strict=True):
            if isinstance(element, _Motion):
                continue
            matrix = element.matrix if isinstance(element, _Constant) else _factor_matrix(
                element.rotation, element.u,
                element.value if element.parameter is None else values[element.parameter])
            parts[owner] = parts[owner] @ matrix
        tool = parts["tool"]
        if self._table_kind is not None:
            betas = [values[k] for k, p in enumerate(self._params) if p.role == "beta"]
            if all(b == 0.0 for b in betas):
                table = tuple(self._row_of(values, j, row)
                              for j, row in enumerate(nominal.table))
                joints = tuple(row.joint(old.name) for row, old in zip(
                    table, nominal.joints, strict=True))
                return dataclasses.replace(nominal, joints=joints, tool=tool, table=table)
        joints = tuple(Joint(old.name, old.kind, axis=old.axis, pre=parts[(j, 0)],
                             post=parts[(j, 1)]) for j, old in enumerate(nominal.joints))
        return dataclasses.replace(nominal, joints=joints, tool=tool, convention="urdf",
                                   table=None)

    def _row_of(self, values: NDArray, j: int, row):
        """Joint ``j``'s table row with its estimated fields (a parameter's role is the row's
        field name; Hayati's beta is no field: the table holds only while it is 0)."""
        group = f"joint {j + 1}"
        return dataclasses.replace(row, **{p.role: float(values[k])
                                           for k, p in enumerate(self._params)
                                           if p.group == group and p.role != "beta"})

    # --- identifiability -----------------------------------------------------------------
    def random_poses(self, count: int, *, seed: int | None = 0) -> NDArray:
        """``count`` uniform random joint positions within the limits ``(count, n)``
        (an unlimited revolute joint: [-pi, pi]; an unlimited prismatic one: [-0.5, 0.5] m)."""
        robot = self.robot_nominal
        span = np.where(np.array(self._joint_kinds) == "revolute", np.pi, 0.5)
        lower = np.where(np.isfinite(robot.limits.lower), robot.limits.lower, -span)
        upper = np.where(np.isfinite(robot.limits.upper), robot.limits.upper, span)
        return np.random.default_rng(seed).uniform(lower, upper, (count, self.n_joints))

    def scaled_rows(self, jac: NDArray, kind: str) -> NDArray:
        """The Jacobian ``(m, 6, P)`` made unitless for rank and design decisions: position
        rows over the reach L, length columns times L (an angle of 1 rad moves the tool by
        about L); the rows that ``kind`` measures, stacked ``(m * rows, P)``."""
        scale = np.where(self.is_angle, 1.0, self.reach)
        out = jac * scale
        out[:, :3] /= self.reach
        if kind == "pose":
            return out.reshape(-1, self.n_parameters)
        return out[:, :3].reshape(-1, self.n_parameters)

    @property
    def scale_free(self) -> bool:
        """Whether plane contacts leave the robot's scale free with every parameter estimated:
        no prismatic joint (read in m) and no constant nonzero length in the chain. Then scaling
        every length (and every plane's offset) keeps the contacts on their planes."""
        for element in self._elements:
            if isinstance(element, _Motion):
                if self._joint_kinds[element.joint] == "prismatic":
                    return False
            elif isinstance(element, _Constant):
                if np.any(element.matrix[:3, 3] != 0.0):
                    return False
            elif not element.rotation and element.parameter is None and element.value != 0.0:
                return False
        return True

    def _plane_contacts(self, values: NDArray | None, samples: int,
                        seed: int) -> tuple[NDArray, NDArray, NDArray]:
        """Contacts on three planes (normals x, y, z through the median tool point) placed as
        the twin places them: ``(q, labels, offsets)``, unreachable ones dropped."""
        values = self.check_values(values)
        q = self.random_poses(samples, seed=seed)
        labels = np.arange(samples) % 3
        offsets = np.median(self.pose(values, q)[:, :3, 3], axis=0)
        q, gap = project_on_planes(self, values, q, _AXES[labels], offsets[labels],
                                   np.zeros(samples))
        keep = np.abs(gap) < 1e-9 * self.reach
        return q[keep], labels[keep], offsets

    def _plane_rows(self, values: ArrayLike | None, samples: int,
                    seed: int) -> tuple[NDArray, tuple[str, ...], NDArray]:
        """The unitless plane-contact Jacobian ``(m, 9 + P)`` (three planes' normal angles
        and offsets, then the model's parameters) at contacts on their planes, its column
        names, and the column scales (length columns times the reach)."""
        q, labels, _ = self._plane_contacts(values, samples, seed)
        m = q.shape[0]
        scale = np.where(self.is_angle, 1.0, self.reach)
        pose, jac = self.jacobian(values, q)
        point = pose[:, :3, 3] / self.reach
        kin = np.einsum("mi,mip->mp", _AXES[labels], jac[:, :3] * scale) / self.reach
        extra = np.zeros((m, 9))
        extra[np.arange(m), 3 * labels] = np.einsum("mi,mi->m", _AXES[(labels + 1) % 3], point)
        extra[np.arange(m), 3 * labels + 1] = np.einsum(
            "mi,mi->m", _AXES[(labels + 2) % 3], point)
        extra[np.arange(m), 3 * labels + 2] = -1.0
        names = tuple(f"plane {k // 3 + 1} {('n1', 'n2', 'd')[k % 3]}" for k in range(9)) \
            + self.names
        return np.hstack([extra, kin]), names, np.concatenate(
            [np.tile([1.0, 1.0, self.reach], 3), scale])

    def plane_determined(self, estimated: ArrayLike, values: ArrayLike | None = None, *,
                         samples: int | None = None, seed: int = 0) -> bool:
        """Whether plane contacts (three unknown planes) determine the parameters at indices
        ``estimated``: full column rank (``IDENTIFIABILITY_RTOL``) of the contact Jacobian at
        contacts on their planes (where the robot's scale shows as a null direction)."""
        samples = samples if samples is not None else max(60, 3 * self.n_parameters)
        rows, _, _ = self._plane_rows(values, samples, seed)
        columns = np.concatenate([np.arange(9), 9 + np.asarray(estimated, dtype=int)])
        singular = np.linalg.svd(rows[:, columns], compute_uv=False)
        return bool(singular[-1] > IDENTIFIABILITY_RTOL * singular[0])

    def _scale_lever(self, rows: NDArray, values: ArrayLike | None, samples: int,
                     seed: int) -> str | None:
        """The largest joint or tool length whose nominal value fixes the scale of plane data
        ``rows`` (``_plane_rows``): holding it removes one direction that plane contacts
        cannot see but positions can (the robot's size). A length regrouped with another
        (``joint 1 d`` with ``base z``) would not: the other absorbs it."""
        current = self.check_values(values)
        singular, vt = np.linalg.svd(rows, full_matrices=True)[1:]
        rank = int((singular > IDENTIFIABILITY_RTOL * singular[0]).sum())
        null = vt[rank:].T  # (9 + P, k): what plane contacts cannot see
        _, jac = self.jacobian(values, self.random_poses(samples, seed=seed + 1))
        seen = self.scaled_rows(jac, "position")  # what positions see

        def visible(basis: NDArray) -> int:
            if basis.shape[1] == 0:
                return 0
            moved = seen @ basis[9:]
            sv = np.linalg.svd(moved, compute_uv=False)
            return int((sv > 1e-6 * max(1.0, np.linalg.norm(seen, 2))).sum())

        before = visible(null)
        levers = sorted((k for k, p in enumerate(self._params)
                         if not p.is_angle and p.group != "base" and current[k] != 0.0),
                        key=lambda k: -abs(current[k]))
        for k in levers:
            row = null[9 + k]
            if not np.any(np.abs(row) > 1e-9):
                continue
            # the null directions that leave parameter k at nominal
            keep = np.linalg.svd(row[None, :], full_matrices=True)[2][1:].T
            if visible(null @ keep) < before:
                return self.names[k]
        return None

    def identifiable(self, kind: Kind = "position", *, samples: int | None = None,
                     seed: int = 0, values: ArrayLike | None = None) -> Identifiability:
        """The identifiable kinematic parameters for one measurement ``kind`` (module
        docstring), by the rank machinery of the dynamic base parameters (SVD rank with
        ``IDENTIFIABILITY_RTOL`` on the unitless Jacobian (``scaled_rows``) at ``samples``
        random poses within the limits, then rref in the model's parameter order: base first,
        then the joints, tool last); the regrouping coefficients are converted back to physical
        units. For ``"plane"``: contacts on three unknown planes (normals x, y, z), placed on
        their planes as the twin places them, whose parameters are estimated with the
        kinematics; when the chain cannot fix its scale (``scale_free``), the largest joint or
        tool length (the largest lever) is held at nominal (``scale_held``)."""
        if kind not in ("position", "pose", "plane"):
            raise ValueError(f"`kind` must be 'position', 'pose' or 'plane', got {kind!r}")
        key = (kind, samples, seed)
        if values is None and key in self._identifiable:
            return self._identifiable[key]
        samples = samples if samples is not None else max(60, 3 * self.n_parameters)
        scale = np.where(self.is_angle, 1.0, self.reach)
        held = None
        if kind == "plane":
            rows, names, column_scale = self._plane_rows(values, samples, seed)
            if self.scale_free:
                held = self._scale_lever(rows, values, samples, seed)
            if held is not None:
                drop = 9 + self.names.index(held)
                rows = np.delete(rows, drop, axis=1)
                names = names[:drop] + names[drop + 1:]
                column_scale = np.delete(column_scale, drop)
        else:
            _, jac = self.jacobian(values, self.random_poses(samples, seed=seed))
            rows = self.scaled_rows(jac, kind)
            names = self.names
            column_scale = scale
        base = base_parameters(rows, names=names, method="rref", rtol=IDENTIFIABILITY_RTOL)
        g = np.where(np.abs(base.regrouping) < REGROUP_ATOL, 0.0, base.regrouping)
        # pi_b (unitless) = G (pi / s): the physical base parameter s_i pi_b,i = sum_k
        # G_ik s_i / s_k pi_k
        physical = g * column_scale[base.independent][:, None] / column_scale[None, :]
        used = (g != 0).any(axis=0)
        independent = tuple(names[k] for k in base.independent
                            if not names[k].startswith("plane "))
        unidentifiable = tuple(n for k, n in enumerate(names)
                               if not used[k] and not n.startswith("plane "))
        coefficients = {}
        for i, k in enumerate(base.independent):
            terms = {names[c]: float(physical[i, c]) for c in np.flatnonzero(physical[i])}
            if names[k] in independent and len(terms) > 1:
                coefficients[names[k]] = terms
        regrouped = {name: _expression(terms) for name, terms in coefficients.items()}
        out = Identifiability(kind, independent, unidentifiable, regrouped, base,
                              coefficients, held)
        if values is None:
            self._identifiable[key] = out
        return out
