"""The robot: a serial chain of joints, its links' inertial parameters, limits and friction."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_float_array, as_vector, frozen_copy
from dynid.friction.models import FrictionModel, NoFriction
from dynid.robot._joint import (
    Joint,
    PrismaticDH,
    PrismaticMDH,
    RevoluteDH,
    RevoluteMDH,
    check_transform,
)
from dynid.robot._transmission import Transmission
from dynid.robot.bounds import ParameterBounds
from dynid.robot.inertia import MASS

__all__ = ["MAX_GRAVITY", "MAX_JOINTS", "MAX_LENGTH", "MAX_MASS", "STANDARD_GRAVITY",
           "JointLimits", "Robot", "Source"]

STANDARD_GRAVITY = (0.0, 0.0, -9.81)  # m/s^2 in the base frame, unless a robot says otherwise

# What a robot may hold. Beyond these the dynamics overflow or keep no precision (a mass of
# 1e308 kg makes m g infinite; a joint 1e200 m away squares to inf) and no manipulator comes
# near them: a link of at most MAX_MASS kg, lengths (joint offsets, tool, centre of mass) of at
# most MAX_LENGTH m, inertia about the link origin at most MAX_MASS MAX_LENGTH^2.
MAX_MASS = 1e6  # kg
MAX_LENGTH = 1e3  # m
MAX_GRAVITY = 1e9  # m/s^2: past any unit slip (mm/s^2: 9810), and m g L <= 1e18: no overflow
# joints of one chain: robot show, the base parameters and the excitation are bounded in time
# and memory up to here (a 100-joint chain shows in seconds; each joint more costs O(n^3))
MAX_JOINTS = 128

Convention = Literal["mdh", "dh", "urdf"]
MDHRow = RevoluteMDH | PrismaticMDH
DHRow = RevoluteDH | PrismaticDH


def check_drive_gains(nominal: ArrayLike | None, span: ArrayLike | None, n: int, *,
                      names: tuple[str, str] = ("drive_gains.nominal", "drive_gains.range")
                      ) -> tuple[NDArray | None, NDArray | None]:
    """Stated drive gains, validated: ``nominal`` ``(n,)`` finite and nonzero; ``span``
    ``(n, 2)`` rows ``[lo, hi]`` finite, nonzero, ``lo <= hi`` and of one sign (a gain cannot
    cross zero), holding the nominal value where both are given. Frozen copies (or None);
    ValueError naming the argument (``names``: of ``nominal`` and ``span``) otherwise."""
    where, where_range = names
    gains = None
    if nominal is not None:
        gains = as_vector(where, nominal, n)
        if (gains == 0).any():
            j = int(np.argmax(gains == 0))
            raise ValueError(f"`{where}` must be nonzero [N m/A]; joint {j + 1}: 0")
        gains = frozen_copy(gains)
    out = None
    if span is not None:
        values = as_float_array(where_range, span)
        if values.shape != (n, 2):
            raise ValueError(f"`{where_range}` must be {n} pairs [lo, hi] (one per joint), got "
                             f"shape {values.shape}")
        for j, (lo, hi) in enumerate(values):
            if lo > hi:
                raise ValueError(f"`{where_range}`: joint {j + 1} has lo {lo:g} > hi {hi:g}")
            if lo * hi <= 0:
                raise ValueError(f"`{where_range}`: joint {j + 1} spans [{lo:g}, {hi:g}], which "
                                 "holds 0; a gain range is of one sign, zero excluded")
            if gains is not None and not lo <= gains[j] <= hi:
                raise ValueError(f"`{where}`: joint {j + 1}'s gain {gains[j]:g} lies "
                                 f"outside its range [{lo:g}, {hi:g}] (`{where_range}`)")
        out = frozen_copy(values)
    return gains, out


@dataclass(frozen=True)
class JointLimits:
    """Per-joint limits in SI units (rad or m, /s, /s^2, N m or N).

    ``inf`` means "not specified" (a URDF gives no acceleration limit; a continuous joint has no
    position limit); NaN is never allowed.
    """

    lower: NDArray
    upper: NDArray
    velocity: NDArray
    acceleration: NDArray
    torque: NDArray

    def __post_init__(self) -> None:
        n = np.atleast_1d(np.asarray(self.lower)).size
        for f in dataclasses.fields(self):
            value = as_vector(f"limits.{f.name}", getattr(self, f.name), n, allow_inf=True)
            object.__setattr__(self, f.name, frozen_copy(value))
        if (self.lower >= self.upper).any():
            j = int(np.argmax(self.lower >= self.upper))
            raise ValueError(
                f"`limits.lower` must be below `limits.upper`; joint {j + 1}: "
                f"{self.lower[j]} >= {self.upper[j]}"
            )
        for name in ("velocity", "acceleration", "torque"):
            if (getattr(self, name) <= 0).any():
                raise ValueError(f"`limits.{name}` must be > 0, got {getattr(self, name)}")

    @classmethod
    def unbounded(cls, n: int) -> JointLimits:
        inf = np.full(n, np.inf)
        return cls(-inf, inf, inf, inf, inf)

    @property
    def n_joints(self) -> int:
        return self.lower.size


@dataclass(frozen=True)
class Source:
    """Where a robot's numbers come from. A URDF robot's ``url`` is its file; a xacro's also
    records how it was read: its ``xacro_args`` and the ROS ``packages`` folders given by name
    (each a mapping, kept as sorted ``(name, value)`` pairs), so that it is read again alike."""

    citation: str = ""
    url: str = ""
    notes: str = ""  # one note a line (a URDF's: what was read, locked, derived)
    xacro_args: tuple[tuple[str, str], ...] = ()
    packages: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        for name in ("xacro_args", "packages"):
            value = getattr(self, name)
            pairs = value.items() if isinstance(value, Mapping) else value
            object.__setattr__(self, name, tuple(sorted((str(k), str(v)) for k, v in pairs)))


@dataclass(frozen=True, eq=False)
class Robot:
    """A fixed-base serial manipulator.

    - ``joints``: the chain, base to tip, each in canonical form (see ``dynid.robot.Joint``);
    - ``parameters`` ``(n, 10)``: each link's standard parameters in its own link frame, layout
      ``dynid.robot.inertia.PARAMETER_NAMES`` (inertia about the link-frame origin);
    - ``gravity`` ``(3,)``: gravitational acceleration in the base frame [m/s^2];
    - ``tool`` ``(4, 4)``: a fixed frame on the last link (flange or tool centre point);
    - ``convention`` and ``table``: how the kinematics were given (MDH/DH rows, or URDF);
    - ``rotor_inertia`` ``(n,)``: each drive's rotor (and gear) inertia reflected to its joint,
      ``I_a = k_r^2 I_m`` [kg m^2] (kg on a prismatic joint), the armature term ``I_a ddq`` on
      joint j alone (Khalil & Dombre's ``Ia_j``); zeros unless given;
    - ``drive_gains`` ``(n,)`` and ``drive_gain_range`` ``(n, 2)``: what the maker states of each
      drive's gain ``K_j`` (joint torque per motor current, ``tau_j = K_j i_j`` [N m/A, N/A
      on a prismatic joint]): a nominal value and a ``[lo, hi]`` range (same sign, nonzero),
      each None unless given. Identification from currents keeps ``K`` in the range;
    - ``transmission``: how the motors drive the joints (``dynid.robot.Transmission``:
      ``theta = G q``, reductions with sign and a coupling matrix); default direct drive. With
      a coupling, ``rotor_inertia`` and ``friction`` are the motors' (each in its joint's
      units) and act through it: ``C^T diag(I_a) C ddq`` and ``C^T f(C dq)``.

    Build one with ``Robot.from_mdh``, ``Robot.from_dh``, ``load_urdf`` or ``load_robot``.
    Instances are immutable; ``with_parameters`` returns a copy with other inertial values.
    """

    name: str
    joints: tuple[Joint, ...]
    parameters: NDArray
    limits: JointLimits
    gravity: NDArray = field(default_factory=lambda: np.array(STANDARD_GRAVITY))
    tool: NDArray = field(default_factory=lambda: np.eye(4))
    friction: FrictionModel | None = None
    convention: Convention = "urdf"
    table: tuple[MDHRow | DHRow, ...] | None = None
    link_names: tuple[str, ...] = ()
    source: Source = field(default_factory=Source)
    description: str = ""
    bounds: ParameterBounds | None = None  # search region of the link parameters, if known
    rotor_inertia: NDArray | None = None
    drive_gains: NDArray | None = None  # nominal torque per current [N m/A], if known
    drive_gain_range: NDArray | None = None  # (n, 2) [lo, hi] per joint [N m/A], if known
    transmission: Transmission | None = None  # how the motors drive the joints; None: direct

    def __post_init__(self) -> None:
        joints = tuple(self.joints)
        if not joints or not all(isinstance(j, Joint) for j in joints):
            raise TypeError("`joints` must be a non-empty sequence of dynid.robot.Joint")
        n = len(joints)
        if n > MAX_JOINTS:
            raise ValueError(f"`joints`: {self.name!r} has {n} joints, more than dynid's "
                             f"MAX_JOINTS = {MAX_JOINTS} for one chain (the base parameters "
                             "grow as n^3 in memory); split the chain, or lock joints "
                             "(a URDF's --tip)")
        object.__setattr__(self, "joints", joints)
        params = as_float_array("parameters", self.parameters)
        if params.shape != (n, 10):
            raise ValueError(
                f"`parameters` must have shape ({n}, 10) for {n} joints, got {params.shape}"
            )
        if (params[:, MASS] < 0).any():
            k = int(np.argmax(params[:, MASS] < 0))
            raise ValueError(f"`parameters`: link {k + 1} has negative mass {params[k, MASS]}")
        self._check_magnitudes(joints, params)
        object.__setattr__(self, "parameters", frozen_copy(params))
        if not isinstance(self.limits, JointLimits) or self.limits.n_joints != n:
            raise ValueError(f"`limits` must be JointLimits for {n} joints")
        object.__setattr__(self, "gravity", frozen_copy(as_vector("gravity", self.gravity, 3)))
        if np.linalg.norm(self.gravity) > MAX_GRAVITY:
            raise ValueError(f"`gravity` must be at most {MAX_GRAVITY:g} m/s^2 in magnitude "
                             f"(dynid.robot.MAX_GRAVITY), got {self.gravity.tolist()}")
        object.__setattr__(self, "tool", check_transform("tool", self.tool))
        if np.abs(self.tool[:3, 3]).max() > MAX_LENGTH:
            raise ValueError(f"`tool` lies {np.abs(self.tool[:3, 3]).max():.3g} m from the last "
                             f"link, beyond dynid.robot.MAX_LENGTH = {MAX_LENGTH:g} m")
        friction = self.friction if self.friction is not None else NoFriction(n)
        if not isinstance(friction, FrictionModel):
            raise TypeError(
                f"`friction` must be a dynid.friction model, got {type(friction).__name__}"
            )
        if friction.n_joints != n:
            raise ValueError(f"`friction` must have {n} joints, got {friction.n_joints}")
        object.__setattr__(self, "friction", friction)
        if self.convention not in ("mdh", "dh", "urdf"):
            raise ValueError(f"`convention` must be 'mdh', 'dh' or 'urdf', got {self.convention!r}")
        if self.bounds is not None and (not isinstance(self.bounds, ParameterBounds)
                                        or self.bounds.n_links != n):
            raise ValueError(f"`bounds` must be ParameterBounds for {n} links")
        names = tuple(self.link_names) or tuple(f"link{k + 1}" for k in range(n))
        if len(names) != n:
            raise ValueError(f"`link_names` must have {n} names, got {len(names)}")
        object.__setattr__(self, "link_names", names)
        rotor = np.zeros(n) if self.rotor_inertia is None else as_vector(
            "rotor_inertia", self.rotor_inertia, n)
        if (rotor < 0).any():
            j = int(np.argmax(rotor < 0))
            raise ValueError(f"`rotor_inertia` must be >= 0 (a reflected inertia); joint "
                             f"{j + 1}: {rotor[j]}")
        object.__setattr__(self, "rotor_inertia", frozen_copy(rotor))
        gains, span = check_drive_gains(self.drive_gains, self.drive_gain_range, n)
        object.__setattr__(self, "drive_gains", gains)
        object.__setattr__(self, "drive_gain_range", span)
        transmission = Transmission.identity(n) if self.transmission is None \
            else self.transmission
        if not isinstance(transmission, Transmission) or transmission.n_motors != n:
            raise ValueError(f"`transmission` must be a dynid.robot.Transmission of {n} motors, "
                             f"got {transmission!r:.80}")
        object.__setattr__(self, "transmission", transmission)

    def with_drive_gains(self, nominal: ArrayLike | None = None,
                         gain_range: ArrayLike | None = None) -> Robot:
        """The same robot with other stated drive gains (``nominal`` ``(n,)``, ``gain_range``
        ``(n, 2)``; None: not known)."""
        return dataclasses.replace(self, drive_gains=nominal, drive_gain_range=gain_range)

    def _check_magnitudes(self, joints: tuple[Joint, ...], params: NDArray) -> None:
        """ValueError naming the first value beyond ``MAX_MASS``/``MAX_LENGTH``/
        ``MAX_GRAVITY`` (see them): dynamics that would overflow are refused, not computed."""
        names = tuple(self.link_names) if len(self.link_names) == len(joints) else ()
        limits = {"mass": (MASS, MAX_MASS, "kg"),
                  "first moment (m c)": (slice(1, 4), MAX_MASS * MAX_LENGTH, "kg m"),
                  "inertia": (slice(4, 10), MAX_MASS * MAX_LENGTH**2, "kg m^2")}
        for what, (columns, bound, unit) in limits.items():
            values = np.abs(params[:, columns]).reshape(len(joints), -1).max(axis=1)
            if (values > bound).any():
                k = int(np.argmax(values > bound))
                label = f"link {k + 1}" + (f" ({names[k]!r})" if names else "")
                raise ValueError(
                    f"`parameters`: {label} has {what} {values[k]:.3g} {unit}, beyond "
                    f"{bound:g} {unit} (dynid.robot.MAX_MASS {MAX_MASS:g} kg, MAX_LENGTH "
                    f"{MAX_LENGTH:g} m): its dynamics would overflow; check the value and "
                    "its unit")
        for k, joint in enumerate(joints):
            for part in ("pre", "post"):
                length = float(np.abs(getattr(joint, part)[:3, 3]).max())
                if length > MAX_LENGTH:
                    raise ValueError(
                        f"`joints`: joint {k + 1} ({joint.name!r}) lies {length:.3g} m from "
                        f"the frame before it, beyond dynid.robot.MAX_LENGTH = {MAX_LENGTH:g} "
                        "m: its dynamics would overflow; check the offset and its unit")

    # --- construction from tables -------------------------------------------------------------
    @classmethod
    def from_mdh(cls, name: str, rows: Sequence[MDHRow], parameters: ArrayLike, *,
                 tool: MDHRow | NDArray | None = None, joint_names: Sequence[str] = (),
                 **kwargs) -> Robot:
        """A chain from modified-DH rows (``RevoluteMDH`` / ``PrismaticMDH``).

        ``tool``: a fixed frame on the last link, as a (4, 4) transform or a ``RevoluteMDH``
        row read at q = 0. Other keywords are Robot fields (``limits``, ``gravity``, ...).
        """
        return cls._from_rows(name, rows, parameters, (RevoluteMDH, PrismaticMDH), "mdh",
                              tool, joint_names, **kwargs)

    @classmethod
    def from_dh(cls, name: str, rows: Sequence[DHRow], parameters: ArrayLike, *,
                tool: DHRow | NDArray | None = None, joint_names: Sequence[str] = (),
                **kwargs) -> Robot:
        """A chain from standard-DH rows (``RevoluteDH`` / ``PrismaticDH``); see ``from_mdh``."""
        return cls._from_rows(name, rows, parameters, (RevoluteDH, PrismaticDH), "dh",
                              tool, joint_names, **kwargs)

    @classmethod
    def _from_rows(cls, name, rows, parameters, types, convention, tool, joint_names,
                   **kwargs) -> Robot:
        rows = tuple(rows)
        for k, row in enumerate(rows):
            if not isinstance(row, types):
                expected = " or ".join(t.__name__ for t in types)
                raise TypeError(f"`rows[{k}]` must be {expected}, got {type(row).__name__}")
        names = tuple(joint_names) or tuple(f"joint{k + 1}" for k in range(len(rows)))
        if len(names) != len(rows):
            raise ValueError(f"`joint_names` must have {len(rows)} names, got {len(names)}")
        joints = tuple(row.joint(name) for row, name in zip(rows, names, strict=True))
        if tool is None:
            tool_matrix = np.eye(4)
        elif isinstance(tool, np.ndarray):
            tool_matrix = tool
        elif isinstance(tool, (RevoluteMDH, RevoluteDH)) and isinstance(tool, types):
            tool_matrix = tool.fixed()
        else:
            raise TypeError(f"`tool` must be a (4, 4) array or a revolute {convention} row")
        kwargs.setdefault("limits", JointLimits.unbounded(len(rows)))
        return cls(name=name, joints=joints, parameters=parameters, tool=tool_matrix,
                   convention=convention, table=rows, **kwargs)

    # --- views ----------------------------------------------------------------------------------
    @property
    def n_joints(self) -> int:
        return len(self.joints)

    @property
    def joint_names(self) -> tuple[str, ...]:
        return tuple(j.name for j in self.joints)

    def joint_indices(self, joints, what: str = "joints") -> list[int]:
        """0-based indices of ``joints``: joint names or 1-based joint numbers (as a user
        counts them), each once (ValueError naming ``what`` otherwise)."""
        out = []
        for key in joints:
            if isinstance(key, str) and key in self.joint_names:
                index = self.joint_names.index(key)
            elif isinstance(key, (int, np.integer)) and not isinstance(key, bool) \
                    and 1 <= key <= self.n_joints:
                index = int(key) - 1
            else:
                raise ValueError(f"`{what}`: {key!r:.40} is no joint of {self.name!r} (a joint "
                                 f"name, or a number 1..{self.n_joints})")
            if index in out:
                raise ValueError(f"`{what}` names joint {index + 1} twice")
            out.append(index)
        return out

    @property
    def total_mass(self) -> float:
        return float(self.parameters[:, MASS].sum())

    def with_parameters(self, parameters: ArrayLike) -> Robot:
        """The same robot with other link parameters ``(n, 10)`` (or a flat ``(10 n,)``)."""
        params = as_float_array("parameters", parameters)
        if params.shape == (10 * self.n_joints,):
            params = params.reshape(self.n_joints, 10)
        return dataclasses.replace(self, parameters=params)

    def with_friction(self, friction: FrictionModel) -> Robot:
        return dataclasses.replace(self, friction=friction)

    def with_transmission(self, transmission: Transmission | None) -> Robot:
        """The same robot with another transmission (None: direct drive)."""
        return dataclasses.replace(self, transmission=transmission)

    def with_rotor_inertia(self, rotor_inertia: ArrayLike) -> Robot:
        """The same robot with other reflected rotor inertias ``(n,)`` [kg m^2]."""
        return dataclasses.replace(self, rotor_inertia=rotor_inertia)

    def __repr__(self) -> str:
        kinds = "".join("R" if j.kind == "revolute" else "P" for j in self.joints)
        return (f"Robot({self.name!r}, {self.n_joints} joints {kinds}, {self.convention}, "
                f"mass {self.total_mass:.3f} kg, friction {self.friction.name})")
