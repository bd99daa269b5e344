"""Joints of a serial chain, and the two Denavit–Hartenberg table conventions as distinct types.

Every joint, whatever it was built from, is stored in one canonical form::

    parent_T_child(q) = pre @ motion(q) @ post

- ``pre``  (4, 4): the joint frame in the parent link's frame at q = 0;
- ``motion(q)``: a rotation by q about ``axis`` (revolute) or a translation by q along it
  (prismatic), ``axis`` a unit vector in the joint frame;
- ``post`` (4, 4): the child link's frame in the joint frame (identity for MDH and URDF, where
  the link frame sits on its joint; ``Tz(d) Tx(a) Rx(alpha)`` for standard DH, whose frame i
  sits on joint i+1).

Link inertial parameters are expressed in the child link frame.

Conventions (SI units, radians):

- **MDH** (Craig, Khalil–Kleinfinger): frame i on joint i,
  ``i-1_T_i = Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i) Tz(d_i)``; a row holds
  ``a_{i-1}, alpha_{i-1}, d_i, theta_i``.
- **DH** (standard): frame i on joint i+1, ``i-1_T_i = Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i)``.

A revolute row's joint variable is ``theta = q + offset``; a prismatic row's is ``d = q + offset``.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field, fields
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from dynid._validation import as_float_array

__all__ = [
    "Joint",
    "PrismaticDH",
    "PrismaticMDH",
    "RevoluteDH",
    "RevoluteMDH",
    "rot_x",
    "rot_z",
    "translation",
]

JointKind = Literal["revolute", "prismatic"]


def rot_x(angle: float) -> NDArray:
    """Homogeneous rotation about x."""
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1.0]])


def rot_z(angle: float) -> NDArray:
    """Homogeneous rotation about z."""
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])


def translation(x: float = 0.0, y: float = 0.0, z: float = 0.0) -> NDArray:
    """Homogeneous translation."""
    out = np.eye(4)
    out[:3, 3] = (x, y, z)
    return out


def check_transform(name: str, matrix: NDArray) -> NDArray:
    """A read-only copy of a rigid homogeneous transform (ValueError naming `name` if not)."""
    matrix = np.array(as_float_array(name, matrix))
    if matrix.shape != (4, 4):
        raise ValueError(f"`{name}` must be a (4, 4) homogeneous transform, got {matrix.shape}")
    rotation = matrix[:3, :3]
    if not np.allclose(rotation @ rotation.T, np.eye(3), atol=1e-9) or np.linalg.det(rotation) < 0:
        raise ValueError(f"`{name}` rotation block must be a proper rotation (orthonormal, det +1)")
    if not np.array_equal(matrix[3], [0.0, 0.0, 0.0, 1.0]):
        raise ValueError(f"`{name}` last row must be [0, 0, 0, 1], got {matrix[3]}")
    matrix.setflags(write=False)
    return matrix


def skew(v: NDArray) -> NDArray:
    """``[v]x``: the matrix with ``skew(v) @ w == cross(v, w)``."""
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


@dataclass(frozen=True, eq=False)
class Joint:
    """One joint in canonical form ``pre @ motion(q) @ post`` (see module docstring)."""

    name: str
    kind: JointKind
    axis: NDArray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    pre: NDArray = field(default_factory=lambda: np.eye(4))
    post: NDArray = field(default_factory=lambda: np.eye(4))

    def __post_init__(self) -> None:
        if self.kind not in ("revolute", "prismatic"):
            raise ValueError(
                f"joint `{self.name}`: `kind` must be 'revolute' or 'prismatic', got {self.kind!r}"
            )
        axis = np.array(self.axis, dtype=np.float64)
        norm = np.linalg.norm(axis) if axis.shape == (3,) else 0.0
        if axis.shape != (3,) or not np.isfinite(axis).all() or norm < 1e-12:
            raise ValueError(f"joint `{self.name}`: `axis` must be a nonzero 3-vector, got {axis}")
        axis = axis / norm
        axis.setflags(write=False)
        object.__setattr__(self, "axis", axis)
        object.__setattr__(self, "pre", check_transform(f"{self.name}.pre", self.pre))
        object.__setattr__(self, "post", check_transform(f"{self.name}.post", self.post))

    def motion(self, q: float) -> NDArray:
        """The joint's own motion, a (4, 4) transform in the joint frame."""
        out = np.eye(4)
        if self.kind == "prismatic":
            out[:3, 3] = q * self.axis
            return out
        k = skew(self.axis)
        out[:3, :3] = np.eye(3) + np.sin(q) * k + (1 - np.cos(q)) * k @ k
        return out

    def transform(self, q: float) -> NDArray:
        """``parent_T_child(q)`` for one scalar q (reference implementation, not batched)."""
        return self.pre @ self.motion(q) @ self.post


class _Row:
    """Shared by the four table-row types: every field a finite number."""

    def __post_init__(self) -> None:
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(
                    f"{type(self).__name__}: `{f.name}` must be a real number, got {value!r}"
                )
            if not np.isfinite(value):
                raise ValueError(f"{type(self).__name__}: `{f.name}` must be finite, got {value!r}")

    def fixed(self) -> NDArray:
        """The row's transform with q = 0 (e.g. a tool frame)."""
        return self.joint("fixed").transform(0.0)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class RevoluteMDH(_Row):
    """Revolute joint, modified DH: ``Rx(alpha) Tx(a) Rz(q + offset) Tz(d)``."""

    a: float
    alpha: float
    d: float
    offset: float = 0.0

    def joint(self, name: str) -> Joint:
        pre = rot_x(self.alpha) @ translation(x=self.a) @ rot_z(self.offset) @ translation(z=self.d)
        return Joint(name, "revolute", pre=pre)


@dataclass(frozen=True)
class PrismaticMDH(_Row):
    """Prismatic joint, modified DH: ``Rx(alpha) Tx(a) Rz(theta) Tz(q + offset)``."""

    a: float
    alpha: float
    theta: float
    offset: float = 0.0

    def joint(self, name: str) -> Joint:
        pre = rot_x(self.alpha) @ translation(x=self.a) @ rot_z(self.theta) @ translation(
            z=self.offset)
        return Joint(name, "prismatic", pre=pre)


@dataclass(frozen=True)
class RevoluteDH(_Row):
    """Revolute joint, standard DH: ``Rz(q + offset) Tz(d) Tx(a) Rx(alpha)``."""

    d: float
    a: float
    alpha: float
    offset: float = 0.0

    def joint(self, name: str) -> Joint:
        post = translation(z=self.d) @ translation(x=self.a) @ rot_x(self.alpha)
        return Joint(name, "revolute", pre=rot_z(self.offset), post=post)


@dataclass(frozen=True)
class PrismaticDH(_Row):
    """Prismatic joint, standard DH: ``Rz(theta) Tz(q + offset) Tx(a) Rx(alpha)``."""

    theta: float
    a: float
    alpha: float
    offset: float = 0.0

    def joint(self, name: str) -> Joint:
        pre = rot_z(self.theta) @ translation(z=self.offset)
        post = translation(x=self.a) @ rot_x(self.alpha)
        return Joint(name, "prismatic", pre=pre, post=post)
