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

import warnings
from collections.abc import Sequence

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
    "PHYSICAL_RTOL",
    "PINOCCHIO_PARAMETER_NAMES",
    "ROUNDING_RTOL",
    "RoundedInertiaWarning",
    "check_links_physical",
    "check_physical",
    "from_com",
    "from_log_cholesky",
    "from_pinocchio_order",
    "from_pseudo_inertia",
    "inertia_matrix",
    "inertia_vector",
    "nearest_physical",
    "physical_margin",
    "pseudo_inertia",
    "to_com",
    "to_log_cholesky",
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


# --- pseudo-inertia and log-Cholesky (Wensing et al. 2017; Rucker & Wensing 2022) ----------


def pseudo_inertia(parameters: ArrayLike) -> NDArray:
    """``(*, 10)`` -> ``(*, 4, 4)`` pseudo-inertia ``J = [[S, h], [h^T, m]]``, ``S = tr(I)/2 E - I``
    (the second moment of the mass distribution). ``J >= 0`` is exactly physical consistency
    (mass >= 0, I_com >= 0 and the triangle inequality), and it is linear in the 10-vector."""
    pi = _check_last("parameters", parameters, N_LINK_PARAMETERS)
    inertia = inertia_matrix(pi[..., INERTIA])
    trace = np.trace(inertia, axis1=-2, axis2=-1)
    out = np.zeros((*pi.shape[:-1], 4, 4))
    out[..., :3, :3] = 0.5 * trace[..., None, None] * np.eye(3) - inertia
    out[..., :3, 3] = pi[..., FIRST_MOMENT]
    out[..., 3, :3] = pi[..., FIRST_MOMENT]
    out[..., 3, 3] = pi[..., MASS]
    return out


def physical_margin(parameters: ArrayLike) -> NDArray:
    """``(*,)``: the lowest eigenvalue of each pseudo-inertia over its largest entry; a physical
    body has a margin >= ``-PHYSICAL_RTOL`` (zero for a body flat in a plane, on a line, a
    point or massless)."""
    j = pseudo_inertia(parameters)
    scale = np.maximum(np.abs(j).max(axis=(-2, -1)), np.finfo(float).tiny)
    return np.linalg.eigvalsh(j)[..., 0] / scale


# a file's digits round the entries of a physical body; below this relative margin it is not one
PHYSICAL_RTOL = 1e-9


def nearest_physical(parameters: ArrayLike) -> NDArray:
    """``(*, 10)`` -> ``(*, 10)``: each link that is no physical body (``physical_margin`` below
    ``-PHYSICAL_RTOL``) moved to the nearest one with the same mass and CoM; the others as given.

    Nearest in the second moment of mass about the CoM, ``S = tr(I_com)/2 E - I_com`` (with
    m > 0 a body is physical exactly when ``S >= 0``): its negative eigenvalues raised to zero,
    its principal axes kept. A triangle inequality ``I_1 + I_2 >= I_3`` of the principal moments
    missed by ``2 s`` becomes an equality (a flat body) with ``I_1`` and ``I_2`` each ``s``
    larger. (MuJoCo's compiler option ``balanceinertia`` sets all three moments to their mean.)
    Raises ValueError for such a link without positive mass: it has no CoM to keep.
    """
    pi = _check_last("parameters", parameters, N_LINK_PARAMETERS)
    out = pi.copy()
    wrong = physical_margin(pi) < -PHYSICAL_RTOL
    if wrong.any():
        mass, com, inertia = to_com(pi[wrong])
        trace = np.trace(inertia, axis1=-2, axis2=-1)
        values, axes = np.linalg.eigh(0.5 * trace[..., None, None] * np.eye(3) - inertia)
        second = (axes * np.maximum(values, 0.0)[..., None, :]) @ np.swapaxes(axes, -1, -2)
        corrected = np.trace(second, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) - second
        out[wrong] = from_com(mass, com, corrected)
    return out


def check_physical(parameters: ArrayLike, where: str) -> None:
    """ValueError naming ``where`` unless the 10-vector is a physical body (mass >= 0, the
    inertia about the CoM positive semi-definite with the triangle inequality)."""
    margin = float(physical_margin(parameters))
    if margin < -PHYSICAL_RTOL:
        raise ValueError(
            f"`{where}` is not a physical body: its pseudo-inertia has a negative eigenvalue "
            f"({margin:.3g} of its largest entry; the inertia about the CoM must be positive "
            "semi-definite and satisfy the triangle inequality Ixx + Iyy >= Izz, ...)")


# a published table's rounding: Kinova's Gen3 links 1 and 5 miss by -0.4 % and -1 %; a margin
# below -ROUNDING_RTOL is no rounding but a wrong body (a swapped entry, a unit error)
ROUNDING_RTOL = 0.02

# what a link that is no physical body affects (said in the warning and the error)
AFFECTS = ("simulating the robot as the truth (`dynid simulate`, the demo's twin) and the prior "
           "of the constrained fits (`identify --method cls1/cls2/cls3`, `--prior-weight`)")


class RoundedInertiaWarning(UserWarning):
    """Link inertias miss physical consistency by a rounding margin and are kept as published
    (filter it with ``warnings.filterwarnings("ignore", category=RoundedInertiaWarning)``)."""


def check_links_physical(parameters: ArrayLike, names: Sequence[str], *, where: str,
                         escape: str) -> None:
    """Physical consistency of every link of ``parameters`` ``(n, 10)``, a rounding tolerance
    allowed.

    A link whose margin (``physical_margin``) lies in ``[-ROUNDING_RTOL, -PHYSICAL_RTOL)`` is
    published values rounded: one ``RoundedInertiaWarning`` names all such links. A margin
    below ``-ROUNDING_RTOL`` raises ValueError naming the link (``names[k]``: how the user
    finds it in ``where``, the file) and ``escape``: the key or option that accepts the
    values as published.
    """
    margins = np.atleast_1d(physical_margin(parameters))
    gross = [k for k, m in enumerate(margins) if not m >= -ROUNDING_RTOL]
    if gross:
        k = gross[0]
        raise ValueError(
            f"{where}: `{names[k]}` is not a physical body: its pseudo-inertia has a negative "
            f"eigenvalue ({100 * margins[k]:.3g} % of its largest entry, beyond the "
            f"{100 * ROUNDING_RTOL:g} % a published table's rounding explains; the inertia "
            "about the CoM must be positive semi-definite and satisfy the triangle inequality "
            f"Ixx + Iyy >= Izz, ...). Check the values; to use them as published, {escape} "
            f"(it affects {AFFECTS})")
    rounded = [k for k, m in enumerate(margins) if m < -PHYSICAL_RTOL]
    if rounded:
        links = ", ".join(f"`{names[k]}` ({100 * margins[k]:.2g} %)" for k in rounded)
        verb = "misses" if len(rounded) == 1 else "miss"
        warnings.warn(
            f"{where}: {links} {verb} physical consistency by rounding (lowest pseudo-inertia "
            f"eigenvalue over the largest entry, within -{100 * ROUNDING_RTOL:g} %); loaded as "
            f"published. This affects {AFFECTS}; to load them without this warning, {escape}",
            RoundedInertiaWarning, stacklevel=3)


def from_pseudo_inertia(matrix: ArrayLike) -> NDArray:
    """The inverse of ``pseudo_inertia``: ``(*, 4, 4)`` -> ``(*, 10)``."""
    j = as_float_array("matrix", matrix)
    if j.shape[-2:] != (4, 4):
        raise ValueError(f"`matrix` must have shape (*, 4, 4), got {j.shape}")
    sigma = 0.5 * (j[..., :3, :3] + np.swapaxes(j[..., :3, :3], -1, -2))
    inertia = np.trace(sigma, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) - sigma
    out = np.empty((*j.shape[:-2], N_LINK_PARAMETERS))
    out[..., MASS] = j[..., 3, 3]
    out[..., FIRST_MOMENT] = 0.5 * (j[..., :3, 3] + j[..., 3, :3])
    out[..., INERTIA] = inertia_vector(inertia)
    return out


def _log_cholesky_factor(theta: NDArray) -> NDArray:
    alpha, d1, d2, d3, s12, s23, s13, t1, t2, t3 = np.moveaxis(theta, -1, 0)
    u = np.zeros((*theta.shape[:-1], 4, 4))
    u[..., 0, 0], u[..., 1, 1], u[..., 2, 2] = np.exp(d1), np.exp(d2), np.exp(d3)
    u[..., 0, 1], u[..., 1, 2], u[..., 0, 2] = s12, s23, s13
    u[..., 0, 3], u[..., 1, 3], u[..., 2, 3] = t1, t2, t3
    u[..., 3, 3] = 1.0
    return np.exp(alpha)[..., None, None] * u


def from_log_cholesky(theta: ArrayLike) -> NDArray:
    """Log-Cholesky parameters ``(*, 10)`` (alpha, d1, d2, d3, s12, s23, s13, t1, t2, t3) ->
    link 10-vectors: ``J = U U^T`` with U upper triangular, ``U = e^alpha [[e^d1, s12, s13, t1],
    [0, e^d2, s23, t2], [0, 0, e^d3, t3], [0, 0, 0, 1]]`` (Rucker & Wensing 2022). Every real
    theta gives a physically consistent body (J > 0); the map is one to one onto them."""
    theta = _check_last("theta", theta, N_LINK_PARAMETERS)
    u = _log_cholesky_factor(theta)
    return from_pseudo_inertia(u @ np.swapaxes(u, -1, -2))


def to_log_cholesky(parameters: ArrayLike) -> NDArray:
    """Link 10-vectors with ``J > 0`` -> log-Cholesky parameters (ValueError otherwise)."""
    j = pseudo_inertia(parameters)
    flip = np.eye(4)[::-1]
    try:  # J = U U^T with U upper triangular: the Cholesky factor of the flipped matrix
        lower = np.linalg.cholesky(flip @ j @ flip)
    except np.linalg.LinAlgError:
        raise ValueError("`parameters` must be strictly physically consistent (J > 0) for "
                         "log-Cholesky coordinates") from None
    u = flip @ lower @ flip
    scale = u[..., 3, 3]
    v = u / scale[..., None, None]
    return np.stack([np.log(scale), np.log(v[..., 0, 0]), np.log(v[..., 1, 1]),
                     np.log(v[..., 2, 2]), v[..., 0, 1], v[..., 1, 2], v[..., 0, 2],
                     v[..., 0, 3], v[..., 1, 3], v[..., 2, 3]], axis=-1)
