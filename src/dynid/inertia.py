"""Inertial parameters of one rigid link: the one layout dynid uses, and conversions.

The link-frame 10-vector (the *standard parameters* of one link) is, in this order::

    pi = [m, m c_x, m c_y, m c_z, I_xx, I_xy, I_xz, I_yy, I_yz, I_zz]

- ``m`` mass [kg];
- ``m c`` the first moment of mass [kg m], ``c`` the centre of mass in the link frame [m];
- ``I`` the inertia tensor **about the link-frame origin**, axes of the link frame [kg m^2]:
  ``I_origin = I_com + m (c.c E - c c^T)`` (Steiner), with ``I_com`` about the centre of mass.

The dynamics are linear in this vector (tau = Y pi). Every other order is derived from the names
below by a computed permutation, never retyped: pinocchio orders its ``toDynamicParameters()``
as ``[m, mc_x, mc_y, mc_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]``; the papers list inertia entries
as ``xx, xy, xz, yy, yz, zz`` (what ``INERTIA_ENTRIES`` is).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_float_array

__all__ = [
    "FIRST_MOMENT",
    "INERTIA",
    "INERTIA_ENTRIES",
    "MASS",
    "N_LINK_PARAMETERS",
    "PARAMETER_NAMES",
    "PINOCCHIO_PARAMETER_NAMES",
    "from_com",
    "from_pinocchio_order",
    "inertia_matrix",
    "inertia_vector",
    "to_com",
    "to_pinocchio_order",
    "transform_parameters",
]

INERTIA_ENTRIES = ("xx", "xy", "xz", "yy", "yz", "zz")
PARAMETER_NAMES = ("m", "mx", "my", "mz", *(f"I{e}" for e in INERTIA_ENTRIES))
PINOCCHIO_PARAMETER_NAMES = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
N_LINK_PARAMETERS = len(PARAMETER_NAMES)
# Where each group sits in the 10-vector: index with these, never with literal numbers.
MASS = PARAMETER_NAMES.index("m")
FIRST_MOMENT = slice(PARAMETER_NAMES.index("mx"), PARAMETER_NAMES.index("mz") + 1)
INERTIA = slice(PARAMETER_NAMES.index("Ixx"), PARAMETER_NAMES.index("Izz") + 1)

# Position of each pinocchio entry in our vector, and the inverse.
_TO_PINOCCHIO = np.array([PARAMETER_NAMES.index(name) for name in PINOCCHIO_PARAMETER_NAMES])
_FROM_PINOCCHIO = np.argsort(_TO_PINOCCHIO)
# (row, column) of each entry of INERTIA_ENTRIES in the 3x3 tensor.
_AXIS = {"x": 0, "y": 1, "z": 2}
_INERTIA_INDEX = tuple((_AXIS[e[0]], _AXIS[e[1]]) for e in INERTIA_ENTRIES)


def _check_last(name: str, value: ArrayLike, size: int) -> NDArray:
    array = as_float_array(name, value)
    if array.ndim == 0 or array.shape[-1] != size:
        raise ValueError(f"`{name}` must have shape (*, {size}), got {array.shape}")
    return array


def inertia_matrix(entries: ArrayLike) -> NDArray:
    """``(*, 6)`` entries ``xx, xy, xz, yy, yz, zz`` -> ``(*, 3, 3)`` symmetric tensors."""
    six = _check_last("entries", entries, 6)
    tensor = np.empty((*six.shape[:-1], 3, 3))
    for k, (row, col) in enumerate(_INERTIA_INDEX):
        tensor[..., row, col] = six[..., k]
        tensor[..., col, row] = six[..., k]
    return tensor


def inertia_vector(tensor: ArrayLike) -> NDArray:
    """``(*, 3, 3)`` tensors -> ``(*, 6)`` entries ``xx, xy, xz, yy, yz, zz`` (symmetrised)."""
    matrix = as_float_array("tensor", tensor)
    if matrix.shape[-2:] != (3, 3):
        raise ValueError(f"`tensor` must have shape (*, 3, 3), got {matrix.shape}")
    symmetric = 0.5 * (matrix + np.swapaxes(matrix, -1, -2))
    return np.stack([symmetric[..., r, c] for r, c in _INERTIA_INDEX], axis=-1)


def _steiner(mass: NDArray, com: NDArray) -> NDArray:
    """``m (c.c E - c c^T)``: what moving the reference point from the CoM adds, ``(*, 3, 3)``."""
    outer = com[..., :, None] * com[..., None, :]
    dot = np.einsum("...i,...i->...", com, com)
    return mass[..., None, None] * (dot[..., None, None] * np.eye(3) - outer)


def from_com(mass: ArrayLike, com: ArrayLike, inertia_com: ArrayLike) -> NDArray:
    """(m, c, I_com) -> link-frame 10-vector.

    mass: ``(*,)`` [kg]; com: ``(*, 3)`` [m]; inertia_com: ``(*, 6)`` entries
    ``xx, xy, xz, yy, yz, zz`` or ``(*, 3, 3)``, about the centre of mass [kg m^2].
    Returns ``(*, 10)`` in ``PARAMETER_NAMES`` order.
    """
    m = as_float_array("mass", mass)
    c = _check_last("com", com, 3)
    inertia = as_float_array("inertia_com", inertia_com)
    if inertia.shape[-2:] != (3, 3):
        inertia = inertia_matrix(inertia)
    if not (m.shape == c.shape[:-1] == inertia.shape[:-2]):
        raise ValueError(
            f"batch shapes must agree: `mass` {m.shape}, `com` {c.shape[:-1]}, "
            f"`inertia_com` {inertia.shape[:-2]}"
        )
    origin = inertia + _steiner(m, c)
    out = np.empty((*m.shape, N_LINK_PARAMETERS))
    out[..., MASS] = m
    out[..., FIRST_MOMENT] = m[..., None] * c
    out[..., INERTIA] = inertia_vector(origin)
    return out


def to_com(parameters: ArrayLike) -> tuple[NDArray, NDArray, NDArray]:
    """Link-frame 10-vector ``(*, 10)`` -> (mass ``(*,)``, com ``(*, 3)``, I_com ``(*, 3, 3)``).

    Raises ValueError where a mass is zero or negative (the CoM is undefined there).
    """
    pi = _check_last("parameters", parameters, N_LINK_PARAMETERS)
    m = pi[..., MASS]
    if (m <= 0).any():
        raise ValueError(f"`parameters` must have mass > 0 to define a centre of mass, got {m}")
    c = pi[..., FIRST_MOMENT] / m[..., None]
    inertia_com = inertia_matrix(pi[..., INERTIA]) - _steiner(m, c)
    return m, c, inertia_com


def to_pinocchio_order(parameters: ArrayLike) -> NDArray:
    """``(*, 10)`` in our order -> pinocchio's ``toDynamicParameters()`` order."""
    return _check_last("parameters", parameters, N_LINK_PARAMETERS)[..., _TO_PINOCCHIO]


def from_pinocchio_order(parameters: ArrayLike) -> NDArray:
    """``(*, 10)`` in pinocchio's order -> our order."""
    return _check_last("parameters", parameters, N_LINK_PARAMETERS)[..., _FROM_PINOCCHIO]


def transform_parameters(parameters: ArrayLike, rotation: ArrayLike, translation: ArrayLike):
    """Express link parameters given in frame B in another frame A of the same body.

    ``rotation`` (3, 3) and ``translation`` (3,) place B in A: ``x_A = R x_B + p``.
    Linear in the parameters (mass may be zero); returns ``(*, 10)``.
    """
    pi = _check_last("parameters", parameters, N_LINK_PARAMETERS)
    rot = as_float_array("rotation", rotation)
    p = as_float_array("translation", translation)
    if rot.shape != (3, 3) or p.shape != (3,):
        raise ValueError(
            f"`rotation` must be (3, 3) and `translation` (3,), got {rot.shape} and {p.shape}"
        )
    m = pi[..., MASS]
    h_b = pi[..., FIRST_MOMENT]
    h_a = h_b @ rot.T + m[..., None] * p
    # I_A = R I_B R^T + m (p.p E - p p^T) + (p.(R h) E - p (R h)^T) + (p.(R h) E - (R h) p^T)
    rotated = rot @ inertia_matrix(pi[..., INERTIA]) @ rot.T
    rh = h_b @ rot.T
    cross_term = (
        2 * np.einsum("i,...i->...", p, rh)[..., None, None] * np.eye(3)
        - p[:, None] * rh[..., None, :]
        - rh[..., :, None] * p[None, :]
    )
    point = m[..., None, None] * (p @ p * np.eye(3) - np.outer(p, p))
    inertia_a = rotated + point + cross_term
    out = np.empty_like(pi)
    out[..., MASS] = m
    out[..., FIRST_MOMENT] = h_a
    out[..., INERTIA] = inertia_vector(inertia_a)
    return out
