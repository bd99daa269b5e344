"""Base parameters: which combinations of the standard parameters the data can determine.

For a stacked regressor ``W`` (m, p) with ``tau = W pi``, the columns split into ``r``
independent ones ``L`` (the *representatives*) and the rest, ``K = L B``. Then
``W pi = L (pi_L + B pi_K) = L pi_b`` (Szabó 2021, eq. 10-14):

- the base parameters are ``pi_b = G pi`` with the regrouping matrix ``G`` (r, p),
  ``G[:, L] = I`` and ``G[:, K] = B``;
- the base regressor is ``W[:, L]``;
- a parameter is *unidentifiable* if its column is zero, identifiable *alone* if it is a
  representative and nothing regroups into it, else identifiable *in combination*.

Two ways to choose the representatives, which give the same rank and the same row space of G:

- ``"rref"`` (default): the leading columns of the reduced row echelon form (Gauss–Jordan with
  partial pivoting), i.e. the first independent columns in a processing order. Links are taken
  base to tip, so earlier links' parameters are kept and later ones regroup into them. Within a
  link, MDH (and URDF) chains use dynid's layout order — the regroupings then read like Gaz
  Table III (Khalil's rules) — and standard-DH chains use Szabó's order (eq. 3: Ixx, Iyy, Izz,
  Ixy, Ixz, Iyz, m, m sx, m sy, m sz), which reads like Szabó Table 2;
- ``"qr"``: column-pivoted QR, the best-conditioned choice.

``W`` is first compressed to its triangular factor ``R`` (same row space, so the same rref).

One rank decision serves both methods: the numerical rank ``r`` is the number of singular values
of ``R`` above ``rtol * sigma_max`` (numpy's ``matrix_rank`` rule, relative to the data's
scale). Columns are not scaled to unit norm first: that would lift a column that rounding made
nonzero (1e-5 of the largest) to full weight. ``base_parameters`` defaults to numpy's ``rtol =
max(m, p) eps`` (for any matrix: only round-off counts as zero); ``robot_base_parameters``
defaults to ``STRUCTURAL_RTOL = 1e-4``, because kinematic tables are often written with rounded
angles (``1.5708`` for pi/2). An angle error ``e`` tilts an axis (against gravity, say) and
gives a structurally zero combination a singular value of up to about ``5 e sigma_max``: at most
2.7e-5 for twists in {0, +-pi/2, pi} rounded to 4 or 5 decimals (``e <= 7.3e-6``), over 270
random DH/MDH tables (3.9e-5 over 150 of them with ``robot_base_parameters``' per-link weights,
below: a small link's residue is then weighed as its link). For ``e = 5e-5`` (any angle rounded
to 4 decimals) the exact count holds in 96% of 150 such tables; in the rest these values crowd
the tolerance, and rref raises a ValueError rather than pick among them. Genuine structure stays
well above the tolerance: >= 2.5e-2 for the built-in robots and example-robot-data's arms
(exact, with friction, static), 7e-4 for a 100-joint chain, about ``0.15 L`` for ``L`` the
shortest nonzero link length in metres (so lengths under ~1 mm count as zero). Twists within a
few degrees of a multiple of pi/2 can give genuine directions weaker than that (seen in 2% of
random chains); pass a smaller ``rtol`` to keep them.

The decision must not depend on units or on the size of gravity (issue 22: arm3 at
1000 m/s^2 lost its friction columns; gravity 1e8 left 4 of 15; issue 31: at 1e-6 m/s^2 arm3's
arctan friction columns folded into each other, 21 of 24), yet a rounding-level column must
stay small. ``robot_base_parameters`` therefore weighs whole physical groups, never single
columns by their own norms: (1) the structural regressor is that of a gravity of the robot's
direction and 9.81 m/s^2 (zero stays zero). For a gravity ``g = s^2 9.81 u`` the torque at
``(q, s dq, s^2 ddq)`` is ``s^2`` times that of ``9.81 u`` at ``(q, dq, ddq)``: a row scaling
and a change of the generic states, so the same structure, and the one computation serves
every non-zero size (a structure known exactly scaled by ``s`` would still be evaluated at
velocities ``s dq``: at 1e-9 m/s^2, velocities of 1e-5 rad/s, where ``arctan(k dq)`` is
``k dq`` to round-off); (2) each link's ten columns are weighed together, by the largest of
them, to the largest link's (``group_scale``): a 100-joint chain's distal lever arms make its
columns 1e4 times its proximal ones, which would put genuine structure under the tolerance;
(3) the rotor-inertia and friction columns (exact functions of the motion, never rounding) are
each weighed to the largest rigid-body column, so their units do not decide the rank. Inside a
link the geometry's own column sizes stay, and with them the rounded-angle guarantees above
(``tests/test_base_parameter_rank.py``).

Both methods then take exactly ``r`` representatives: ``"rref"`` on the rank-r row space
``Sigma_r V_r^T`` (r, p) of ``R = U Sigma V^T``, whose columns have the dependencies of the
numerically rank-r regressor (a column whose part left after eliminating the earlier leading
ones is within the tolerance is dependent); ``"qr"`` as the first ``r`` pivots of ``R``'s
column-pivoted QR. ``B`` is solved by least squares on the representatives, and a term whose
share of its column (in these weighted scales) is at most ``rtol^2`` is dropped
(``clean_tolerance``): the residue of a table the decision took for exact, such as
``cos(1.5708)^2 = 1.349e-11 Iyy4`` from a URDF's rounded right angle, which no reader should
see in a regrouping (issue 32; ``tests/test_regroupings.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_float_array, frozen_copy
from dynid.dynamics import (
    friction_regressor,
    parameter_names,
    regressor,
    rotor_names,
    rotor_regressor,
)
from dynid.dynamics.static_regressor import static_regressor
from dynid.friction.models import FrictionModel, NoFriction, ViscousCoulomb
from dynid.model._compress import BLOCK_ROWS, triangular_factor
from dynid.robot import STANDARD_GRAVITY, Robot
from dynid.robot.inertia import N_LINK_PARAMETERS, PARAMETER_NAMES

__all__ = [
    "LINK_ORDER",
    "METHODS",
    "STRUCTURAL_RTOL",
    "AmbiguousRankError",
    "BaseParameters",
    "base_parameters",
    "check_regrouping",
    "clean_tolerance",
    "column_groups",
    "default_friction",
    "group_scale",
    "joint1_gravity_is_zero",
    "model_columns",
    "model_names",
    "processing_order",
    "regrouping_for",
    "robot_base_parameters",
    "structural_factor",
    "structural_gravity",
    "structural_regressor",
    "structural_samples",
]

Method = Literal["rref", "qr"]
# Default relative rank tolerance of robot_base_parameters: between the singular values that
# rounded angles give (<= ~5 x the angle error; <= 2.7e-5 at 4-5 decimals) and those of genuine
# structure (>= 3e-2 for the built-in robots), relative to the largest (module docstring).
STRUCTURAL_RTOL = 1e-4
METHODS: tuple[str, ...] = ("rref", "qr")
# Order in which rref visits one link's parameters, per kinematic convention.
LINK_ORDER = {
    "mdh": PARAMETER_NAMES,
    "urdf": PARAMETER_NAMES,
    "dh": ("Ixx", "Iyy", "Izz", "Ixy", "Ixz", "Iyz", "m", "mx", "my", "mz"),  # Szabó eq. 3
}


# The structural decision runs its QR and SVDs on one BLAS thread. On the 2-core workplace
# machine, beside one busy process per core (load 4-11), OpenBLAS's two threads made the QR of
# a 100-joint chain's 6000 x 1300 regressor 5-12 s and its SVD 9-18 s, against 1.5-2.0 s and
# 2.6-2.8 s on one thread: each call waits for both threads to be scheduled. Idle, two
# threads can gain at most 2x on two cores (not measured: no idle machine at the time).
_BLAS_THREADS = 1


class AmbiguousRankError(ValueError):
    """The rank tolerance falls inside a spread of singular values, not at a gap: no set of
    representatives reaches the numerical rank. ``reason`` says what was found, the message
    adds what to change (``remedy``)."""

    def __init__(self, reason: str, remedy: str = "pass another `rtol`") -> None:
        super().__init__(f"{reason}; {remedy}")
        self.reason = reason


@dataclass(frozen=True)
class BaseParameters:
    """Regrouping of p standard parameters into r base parameters (see module docstring)."""

    independent: NDArray  # (r,) representative columns, ascending; base parameter k <-> column k
    regrouping: NDArray  # (r, p) G with pi_b = G pi
    names: tuple[str, ...]  # (p,) standard parameter names
    tolerance: float  # absolute singular-value threshold of the rank decision (on the factor
    # R times the decision's column weights, ``column_scale``, when it had any)
    method: str = "rref"
    rtol: float | None = None  # the relative threshold behind ``tolerance`` (None: not known)

    def __post_init__(self) -> None:
        independent = np.array(self.independent, dtype=int)
        independent.setflags(write=False)
        object.__setattr__(self, "independent", independent)
        object.__setattr__(self, "regrouping", frozen_copy(self.regrouping))
        object.__setattr__(self, "names", tuple(self.names))
        if self.regrouping.shape != (independent.size, len(self.names)):
            raise ValueError(
                f"`regrouping` must have shape ({independent.size}, {len(self.names)}), "
                f"got {self.regrouping.shape}"
            )

    @property
    def rank(self) -> int:
        return self.independent.size

    @property
    def n_parameters(self) -> int:
        return len(self.names)

    @property
    def base_names(self) -> list[str]:
        """Each base parameter named after its representative standard parameter."""
        return [self.names[k] for k in self.independent]

    def classification(self) -> dict[str, str]:
        """``{name: 'alone' | 'combination' | 'unidentifiable'}`` for every standard parameter."""
        g = self.regrouping
        used = (g != 0).sum(axis=0)  # how many base parameters each standard one enters
        out = {}
        for k, name in enumerate(self.names):
            if used[k] == 0:
                out[name] = "unidentifiable"
            elif k in self.independent:
                row = int(np.searchsorted(self.independent, k))
                alone = (g[row] != 0).sum() == 1
                out[name] = "alone" if alone else "combination"
            else:
                out[name] = "combination"
        return out

    def base(self, parameters: ArrayLike) -> NDArray:
        """``pi_b = G pi`` for standard parameters ``(*, p)`` -> ``(*, r)``."""
        pi = as_float_array("parameters", parameters)
        if pi.shape[-1:] != (self.n_parameters,):
            raise ValueError(
                f"`parameters` must have shape (*, {self.n_parameters}), got {pi.shape}"
            )
        return pi @ self.regrouping.T

    def reduce(self, full_regressor: ArrayLike) -> NDArray:
        """The base regressor: columns ``independent`` of ``(..., p)`` -> ``(..., r)``."""
        w = np.asarray(full_regressor)
        if w.shape[-1:] != (self.n_parameters,):
            raise ValueError(
                f"`full_regressor` must have shape (..., {self.n_parameters}), got {w.shape}"
            )
        return w[..., self.independent]

    def expressions(self, *, digits: int = 4) -> list[str]:
        """Each base parameter as text, e.g. ``Ixx2 - Iyy2 + Iyy3 + 0.09986 m3 + 0.632 mz3``."""
        out = []
        for row in self.regrouping:
            terms = []
            for k in np.flatnonzero(row):
                value = row[k]
                size = "" if np.isclose(abs(value), 1.0, rtol=10.0 ** -digits, atol=0) else (
                    f"{abs(value):.{digits}g} ")
                sign = "-" if value < 0 else "+"
                terms.append(f"{sign} {size}{self.names[k]}")
            text = " ".join(terms)
            out.append(text[2:] if text.startswith("+ ") else "-" + text[1:])
        return out


def _rank_space(r_factor: NDArray, rtol: float) -> tuple[NDArray, float]:
    """The numerically rank-r row space of ``R``: ``Sigma_r V_r^T`` (r, p) from the SVD
    ``R = U Sigma V^T``, with r the count of singular values above ``rtol * sigma_max`` (that
    threshold is returned too). Its columns have exactly the dependencies of the rank-r
    approximation of the regressor, in the regressor's own units."""
    _, singular, vt = np.linalg.svd(r_factor)
    tolerance = rtol * singular[0]
    rank = int((singular > tolerance).sum())
    return singular[:rank, None] * vt[:rank], float(tolerance)


def _rref_leading(row_space: NDArray, tolerance: float, order: NDArray) -> NDArray:
    """Leading columns of rref(row_space[:, order]) by Gaussian elimination with partial
    pivoting, as indices of the columns (ascending): a column leads when its part left after
    eliminating the earlier leading ones exceeds ``tolerance``. ``row_space`` (r, p) has rank r,
    so there must be r of them. Which columns lead depends only on the rows below each pivot
    and the columns after it: those alone are updated (Gauss–Jordan's updates above the pivot
    and of the columns already decided cost 4 times more, 2 s of a 100-joint chain's)."""
    a = np.array(row_space[:, order])
    n_rows, n_cols = a.shape
    row, leading = 0, []
    for col in range(n_cols):
        if row == n_rows:
            break
        pivot = row + int(np.argmax(np.abs(a[row:, col])))
        if abs(a[pivot, col]) <= tolerance:
            continue  # a dependent column: no pivot here
        a[[row, pivot], col:] = a[[pivot, row], col:]
        below = a[row + 1:, col] / a[row, col]
        a[row + 1:, col + 1:] -= np.outer(below, a[row, col + 1:])
        leading.append(order[col])
        row += 1
    if row < n_rows:
        weakest = np.linalg.norm(row_space[-1])  # sigma_r: the rows are sigma_k v_k^T
        raise AmbiguousRankError(
            f"rref found only {row} leading columns for numerical rank {n_rows}: singular "
            f"values crowd the tolerance {tolerance:.3g} (sigma_{n_rows} = {weakest:.3g}), so "
            "the rank is ambiguous"
        )
    return np.sort(np.array(leading, dtype=int))


def _qr_leading(r_factor: NDArray, rank: int) -> NDArray:
    """Representatives by column-pivoted QR (greedy largest remaining column norm): its first
    ``rank`` pivots."""
    pivoted, pivots = scipy.linalg.qr(r_factor, mode="r", pivoting=True)
    diagonal = np.abs(np.diag(pivoted))
    if diagonal[rank - 1] <= r_factor.shape[1] * np.finfo(float).eps * diagonal[0]:
        raise AmbiguousRankError(
            f"column-pivoted QR found fewer than {rank} independent columns for numerical rank "
            f"{rank}"
        )
    return np.sort(pivots[:rank])


def regrouping_for(stacked: NDArray, independent: NDArray,
                   groups: NDArray | None = None, *, clean: float = 0.0) -> NDArray:
    """``G`` (r, p) for given representative columns: ``B`` solves ``W_L B = W_K``.

    ``groups`` ``(p,)`` (integers; ``column_groups``: rigid body 0, rotor inertias 1,
    friction 2): each dependent column is a least-squares combination of the representatives
    of its own and earlier groups only — exact on an exact table (rref keeps the rigid body
    first, so a rigid-body column never depends on a friction one), and on a table with
    rounded angles a rigid-body column is not propped up by friction columns by 1e-6 (a
    friction row keeps its own term). Without: least squares on all representatives.

    A term is round-off, and set to zero, when its share of a dependent column is below the
    least-squares error ``10 p eps cond(W_L)``, or its share ``|B_ij| |W_i|`` is below
    ``10 p eps`` of the largest column (the round-off of the whole regressor: a friction row
    must not carry ``2e-17 m2`` because the column of ``m2`` is itself 1e-6 of the largest);
    so are all terms of a column whose norm is below that share of the largest column (an
    unidentifiable parameter). Real terms as small as a sub-millimetre offset squared (1e-8 of
    a column) pass this round-off rule.

    ``clean``: a term whose share of its column is at most ``clean`` is dropped too
    (``clean_tolerance``: the square of the rank decision's ``rtol``, which takes lengths
    under ~1 mm for zero). A table whose angles were written rounded (a URDF's
    ``rpy="1.5708"``) is, to the rank decision, its exact form; its regroupings would still
    carry the residues of the rounding, ``cos(1.5708)^2 = 1.349e-11 Iyy4`` — terms that are
    round-off to every reader.
    """
    w = np.asarray(stacked, dtype=float)
    p = w.shape[1]
    column_norms = np.linalg.norm(w, axis=0)
    dependent = np.setdiff1d(np.arange(p), independent)
    regrouping = np.zeros((independent.size, p))
    regrouping[:, independent] = np.eye(independent.size)
    if dependent.size:
        basis, targets = w[:, independent], w[:, dependent]
        beta = (np.linalg.lstsq(basis, targets, rcond=None)[0] if groups is None
                else _grouped_solve(basis, targets, groups[independent], groups[dependent]))
        singular = np.linalg.svd(basis, compute_uv=False)
        noise = 10 * p * np.finfo(float).eps * singular[0] / singular[-1]
        share = np.abs(beta) * column_norms[independent][:, None]
        beta[share <= noise * column_norms[dependent]] = 0.0
        # a share at the round-off of the whole regressor: the lstsq residue of an exact 0
        # (e.g. 2e-17 m2 in a friction row, from a column itself 1e-6 of the largest)
        beta[share <= 10 * p * np.finfo(float).eps * column_norms.max()] = 0.0
        beta[:, column_norms[dependent] <= noise * column_norms.max()] = 0.0  # a zero column
        if clean > 0:
            beta = _without_residues(beta, share / np.where(
                column_norms[dependent] > 0, column_norms[dependent], 1.0), clean)
        regrouping[:, dependent] = beta
    return regrouping


def clean_tolerance(rtol: float | None) -> float:
    """The share of a dependent column below which ``regrouping_for`` drops a term,
    for a rank decision at ``rtol``: ``rtol^2``. The decision takes a table within ``rtol``
    (angles within ~1e-5 rad, lengths under ~1 mm: module docstring) for its exact form; the
    residues that leaves in a regrouping's coefficients are products of two such deviations
    (a rounded right angle's cosine squared, a tilt times a sub-millimetre offset), at most
    ``rtol^2`` of a column, while genuine terms are at least a length of ~1 cm squared (the
    Jaco2's 9.6e-5 m4, a share of 5e-5). Terms of first order in a deviation (``3.673e-06
    mz4`` from ``sin`` of the same rounded angle) stay: they are the table as written. 0 when
    ``rtol`` is None (not known)."""
    return 0.0 if rtol is None else float(rtol) ** 2


def _without_residues(beta: NDArray, shares: NDArray, clean: float) -> NDArray:
    """``beta`` (r, k) without its terms whose ``shares`` (of their column, ``|B_ij| |W_i| /
    |W_j|``: in the parameters' scales) are at most ``clean``."""
    out = np.array(beta)
    out[np.abs(shares) <= clean] = 0.0
    return out


def _grouped_solve(basis: NDArray, targets: NDArray, basis_groups: NDArray,
                   target_groups: NDArray) -> NDArray:
    """Least squares of each target on the basis columns of its group and earlier ones: one
    QR of the basis sorted by group, then a triangular solve on its leading block."""
    ranked = np.argsort(basis_groups, kind="stable")
    q, t = np.linalg.qr(basis[:, ranked])
    projected = q.T @ targets
    prefix = np.searchsorted(basis_groups[ranked], target_groups, side="right")
    beta = np.zeros((basis.shape[1], targets.shape[1]))
    for k in np.unique(prefix):
        columns = np.flatnonzero(prefix == k)
        if k:
            beta[ranked[:k, None], columns] = scipy.linalg.solve_triangular(
                t[:k, :k], projected[:k, columns])
    return beta


def column_groups(robot: Robot, n_columns: int, *, rotor_inertia: bool = False) -> NDArray:
    """``(p,)`` the physical group of each column of ``model_columns``: 0 rigid body (10 n),
    1 rotor inertias (n, when identified), 2 friction."""
    rigid = N_LINK_PARAMETERS * robot.n_joints
    rotor = robot.n_joints if rotor_inertia else 0
    index = np.arange(n_columns)
    return np.where(index < rigid, 0, np.where(index < rigid + rotor, 1, 2))


def base_parameters(stacked: ArrayLike, *, names: Sequence[str] | None = None,
                    method: Method = "rref", rtol: float | None = None,
                    order: Sequence[int] | None = None,
                    column_scale: ArrayLike | None = None) -> BaseParameters:
    """Base parameters of a stacked regressor ``(m, p)`` (or ``(N, rows, p)``, stacked here).

    ``method``: ``"rref"`` (representatives in processing ``order``, default column order,
    like the papers) or ``"qr"``; both take exactly the numerical rank ``r`` of them.
    ``rtol``: relative rank tolerance: ``r`` counts the singular values of the triangular
    factor ``R`` above ``rtol * sigma_max`` (reported as ``tolerance``). Default
    ``max(m, p) * eps``, numpy's ``matrix_rank`` rule; ``robot_base_parameters`` passes
    ``STRUCTURAL_RTOL`` (1e-4), which also absorbs angles written rounded (module docstring).
    ValueError if the representatives cannot reach ``r`` (a tolerance inside a spread of
    singular values, not at a gap). ``column_scale`` ``(p,)`` (positive): the rank and the
    representatives are decided on ``stacked * column_scale`` (``robot_base_parameters``
    weighs each physical group of columns so), the regrouping returned is ``stacked``'s own.
    """
    if method not in METHODS:
        raise ValueError(f"`method` must be one of {METHODS}, got {method!r}")
    w = as_float_array("stacked", stacked)
    if w.ndim == 3:
        w = w.reshape(-1, w.shape[-1])
    if w.ndim != 2 or w.shape[0] < w.shape[1]:
        raise ValueError(
            f"`stacked` must be (m, p) with at least as many rows as parameters, got {w.shape}"
        )
    m, p = w.shape
    names = tuple(names) if names is not None else tuple(f"p{k + 1}" for k in range(p))
    if len(names) != p:
        raise ValueError(f"`names` must have {p} entries, got {len(names)}")
    if rtol is None:
        rtol = max(m, p) * np.finfo(np.float64).eps
    if not (0 < rtol < 1):
        raise ValueError(f"`rtol` must be in (0, 1), got {rtol}")
    if method == "rref":
        order = np.arange(p) if order is None else np.asarray(order, dtype=int)
        if sorted(order.tolist()) != list(range(p)):
            raise ValueError(f"`order` must be a permutation of range({p})")
    return _from_factor(triangular_factor(w), names=names, method=method, rtol=rtol,
                        order=order, column_scale=column_scale)


def _from_factor(r_factor: NDArray, *, names: tuple[str, ...], method: Method, rtol: float,
                 order: NDArray | None, column_scale: ArrayLike | None,
                 groups: NDArray | None = None) -> BaseParameters:
    """``base_parameters`` on the triangular factor ``R`` of the stacked regressor."""
    p = r_factor.shape[1]
    scale = np.ones(p) if column_scale is None else as_float_array("column_scale",
                                                                   column_scale)
    if scale.shape != (p,) or not (np.isfinite(scale).all() and (scale > 0).all()):
        raise ValueError(f"`column_scale` must be {p} positive finite numbers, got "
                         f"{scale.shape} values")
    scaled = r_factor * scale
    if not np.abs(scaled).max() > 0:
        raise ValueError("`stacked` is all zeros: no parameter is identifiable")
    row_space, tolerance = _rank_space(scaled, rtol)
    if method == "rref":
        independent = _rref_leading(row_space, tolerance, order)
    else:
        independent = _qr_leading(scaled, row_space.shape[0])
    # G of the scaled columns, back to the stacked ones: W_L (D_L G' D^-1) = W
    regrouping = (regrouping_for(scaled, independent, groups, clean=clean_tolerance(rtol))
                  * scale[independent, None]) / scale
    return BaseParameters(independent=independent, regrouping=regrouping, names=names,
                          tolerance=float(tolerance), method=method, rtol=float(rtol))


def _random_poses(robot: Robot, rng: np.random.Generator, n_samples: int) -> NDArray:
    lower = np.where(np.isfinite(robot.limits.lower), robot.limits.lower, -np.pi)
    upper = np.where(np.isfinite(robot.limits.upper), robot.limits.upper, np.pi)
    return rng.uniform(lower, upper, size=(n_samples, robot.n_joints))


def model_columns(robot: Robot, q: NDArray, dq: NDArray, ddq: NDArray, *,
                  friction: FrictionModel | None = None, rotor_inertia: bool = False,
                  gravity: ArrayLike | None = None) -> NDArray:
    """The identification model's full regressor ``(N, n, p)``: the rigid-body columns
    (10 n), the rotor-inertia columns (n, with ``rotor_inertia``), then the friction model's
    (linear) columns — the one column layout of every linear model (``model_names``); the rotor
    and friction columns are the motors', through ``robot.transmission``.
    ``gravity`` ``(3,)``: in place of the robot's."""
    parts = [regressor(robot, q, dq, ddq, gravity=gravity)]
    if rotor_inertia:
        parts.append(rotor_regressor(ddq, robot.transmission))
    if friction is not None:
        if not friction.linear:
            raise ValueError(f"`friction` must be linear in its parameters, got {friction.name!r}")
        parts.append(friction_regressor(friction, dq, robot.transmission))
    return np.concatenate(parts, axis=-1) if len(parts) > 1 else parts[0]


def model_names(robot: Robot, *, friction: FrictionModel | None = None,
                rotor_inertia: bool = False) -> tuple[str, ...]:
    """Names of ``model_columns``: ``m1..Izz_n``, ``Ia1..Ian``, the friction coefficients."""
    names = parameter_names(robot) + (rotor_names(robot) if rotor_inertia else [])
    return tuple(names + (friction.coefficient_names() if friction is not None else []))


def structural_regressor(robot: Robot, *, friction: FrictionModel | None = None,
                         kind: Literal["torque", "static"] = "torque",
                         drop_joint1_gravity: bool = False, n_samples: int | None = None,
                         seed: int = 0, rotor_inertia: bool = False) -> NDArray:
    """Stacked regressor at random states, for identifiability.

    ``kind="torque"``: the joint-torque regressor ``(n N, p)`` of ``model_columns``; positions
    uniform within the limits (+-pi where unbounded), velocities and accelerations standard
    normal. ``kind="static"``: the ``[M(q) lower triangle; g(q)]`` regressor at random poses.
    Both for a gravity of the robot's direction and 9.81 m/s^2 (``structural_gravity``), on
    which inertial and gravity torques compare as on Earth: the structure of any non-zero size
    of gravity (module docstring), computed alike for all of them. Generic states: only the
    structure can cause rank loss. Default ``n_samples``:
    ``structural_samples``.
    """
    return np.concatenate(list(_structural_blocks(
        robot, friction=friction, kind=kind, drop_joint1_gravity=drop_joint1_gravity,
        n_samples=n_samples, seed=seed, rotor_inertia=rotor_inertia)))


def structural_factor(robot: Robot, **options) -> NDArray:
    """The triangular factor ``R`` (p, p) of ``structural_regressor(robot, **options)``, built
    block by block: memory of one block of states, never the whole stacked regressor."""
    from threadpoolctl import threadpool_limits

    factor = None
    with threadpool_limits(limits=_BLAS_THREADS, user_api="blas"):
        for block in _structural_blocks(robot, **options):
            factor = triangular_factor(block if factor is None else np.vstack([factor, block]))
    return factor


# The structural rank decision costs about n_samples n p^2 (~6e3 n^3 flops beyond 66 joints)
# and one (p, p) SVD: seconds at 100 joints; a robot has at most dynid.robot.MAX_JOINTS (128).
# m/s^2: the size of the structural regressor's gravity (the standard one's)
_EARTH = float(np.linalg.norm(STANDARD_GRAVITY))


def structural_samples(n_joints: int) -> int:
    """Default number of random states of the structural regressor: ``max(200, 40 n)`` up to
    10 joints (unchanged from before), then ``max(60, 4000 // n)``: at least 4000 rows up to
    66 joints and 60 n beyond, i.e. at least 4 rows per column (p <= 15 n with rotor and
    friction columns) — generic states need p rows for the structural rank — where 40 n states
    would give 40 n^2 rows, and an n^4 QR."""
    if n_joints <= 10:
        return max(200, 40 * n_joints)
    return max(60, 4000 // n_joints)


def structural_gravity(robot: Robot) -> NDArray:
    """``(3,)`` the gravity of the structural regressor: ``robot.gravity``'s direction at
    9.81 m/s^2, zero when it is zero. Any size the robot accepts, down to subnormal ones (the
    direction is taken after dividing by the largest component, which does not underflow)."""
    gravity = np.asarray(robot.gravity, dtype=float)
    largest = np.abs(gravity).max()
    if not largest > 0:
        return np.zeros(3)
    direction = gravity / largest
    return _EARTH * direction / np.linalg.norm(direction)


def _structural_blocks(robot: Robot, *, friction: FrictionModel | None = None,
                       kind: Literal["torque", "static"] = "torque",
                       drop_joint1_gravity: bool = False, n_samples: int | None = None,
                       seed: int = 0, rotor_inertia: bool = False):
    """The rows of ``structural_regressor`` in blocks of at most ~``BLOCK_ROWS`` rows."""
    n = robot.n_joints
    if kind not in ("torque", "static"):
        raise ValueError(f"`kind` must be 'torque' or 'static', got {kind!r}")
    if kind == "static" and (friction is not None or rotor_inertia):
        raise ValueError("`friction` and `rotor_inertia` have no columns in the static "
                         "regressor (no motion)")
    n_samples = n_samples or structural_samples(n)
    rng = np.random.default_rng(seed)
    q = _random_poses(robot, rng, n_samples)
    gravity = structural_gravity(robot)
    if kind == "static":
        per = max(1, BLOCK_ROWS // (n * (n + 3) // 2))
        for start in range(0, n_samples, per):
            y = static_regressor(robot, q[start:start + per], gravity=gravity,
                                 drop_joint1_gravity=drop_joint1_gravity)
            yield y.reshape(-1, y.shape[-1])
        return
    dq, ddq = rng.standard_normal((2, n_samples, n))
    per = max(1, BLOCK_ROWS // n)
    for start in range(0, n_samples, per):
        block = slice(start, start + per)
        y = model_columns(robot, q[block], dq[block], ddq[block], friction=friction,
                          rotor_inertia=rotor_inertia, gravity=gravity)
        yield y.reshape(-1, y.shape[-1])


def group_scale(robot: Robot, r_factor: NDArray) -> NDArray:
    """``(p,)`` column weights for the rank decision. Each link's ten rigid-body columns are
    weighed together, by the largest of them, to the largest link's: inside a link their
    relative sizes are the geometry's (a rounding-level column stays small beside its link's
    own-axis inertia, a column no joint motion leaves at zero), and across links the lever
    arms do not decide (a 100-joint chain's distal columns are 1e4 times its proximal ones).
    Each rotor-inertia and friction column is weighed to the largest rigid-body column's norm
    (exact functions of the joint motion, never rounding: their units must not decide)."""
    norms = np.linalg.norm(r_factor, axis=0)
    n = robot.n_joints
    rigid = N_LINK_PARAMETERS * n
    scale = np.ones(norms.size)
    links = norms[:rigid].reshape(n, N_LINK_PARAMETERS).max(axis=1)
    top = links.max(initial=0.0)
    if not top > 0:
        return scale
    moving = links > 0
    scale[:rigid] = np.repeat(np.where(moving, top / np.where(moving, links, 1.0), 1.0),
                              N_LINK_PARAMETERS)
    lift = (np.arange(norms.size) >= rigid) & (norms > 0)
    scale[lift] = top / norms[lift]
    return scale


def robot_base_parameters(robot: Robot, *, friction: FrictionModel | None = None,
                          kind: Literal["torque", "static"] = "torque",
                          drop_joint1_gravity: bool = False, method: Method = "rref",
                          rtol: float | None = None, seed: int = 0,
                          rotor_inertia: bool = False,
                          factor: NDArray | None = None) -> BaseParameters:
    """Base parameters of ``robot``'s torque regressor (with the rotor-inertia and
    ``friction`` columns if asked, ``model_columns``) or of its static ``[M; g]`` regressor
    (``kind="static"``).

    ``factor``: ``structural_factor`` of these options, when already computed. Its leading
    ``10 n`` rows and columns are the rigid body's own factor (the states do not depend on
    the extra columns), so one factor with friction columns serves the rigid-body decision
    too (``dynid base`` makes both).

    ``rtol`` defaults to ``STRUCTURAL_RTOL`` (1e-4): a table with its angles rounded to 4-5
    decimals gets the exact table's count; directions weaker than 1e-4 of the largest (lengths
    under ~1 mm, some twists a few degrees off a multiple of pi/2) count as zero (module
    docstring). Pass ``rtol`` to override. The decision does not depend on the size of the
    gravity (``structural_gravity``: its direction, at 9.81 m/s^2) nor on the units of the
    friction and rotor columns (``group_scale``)."""
    from threadpoolctl import threadpool_limits

    names = model_names(robot, friction=friction, rotor_inertia=rotor_inertia)
    rtol = STRUCTURAL_RTOL if rtol is None else rtol
    if not (0 < rtol < 1):
        raise ValueError(f"`rtol` must be in (0, 1), got {rtol}")
    if method not in METHODS:
        raise ValueError(f"`method` must be one of {METHODS}, got {method!r}")
    p = len(names)
    if factor is not None and np.shape(factor) != (p, p):
        raise ValueError(f"`factor` must be the ({p}, {p}) structural factor of these "
                         f"columns, got shape {np.shape(factor)}")
    with threadpool_limits(limits=_BLAS_THREADS, user_api="blas"):
        r_factor = factor if factor is not None else structural_factor(
            robot, friction=friction, kind=kind, drop_joint1_gravity=drop_joint1_gravity,
            seed=seed, rotor_inertia=rotor_inertia)
        try:
            return _from_factor(r_factor, names=names, method=method, rtol=rtol,
                                order=processing_order(robot, p),
                                column_scale=group_scale(robot, r_factor),
                                groups=column_groups(robot, p, rotor_inertia=rotor_inertia)
                                if method == "rref" else None)
        except AmbiguousRankError as error:
            raise AmbiguousRankError(
                f"the base parameters of {robot.name!r}: {error.reason} (its geometry has "
                f"directions near {rtol:g} of the largest: twists a little off a multiple of "
                "pi/2, lengths near 1 mm)",
                f"pass another `rtol` (`--rtol` of `dynid base` and `dynid robot show`), e.g. "
                f"{rtol / 10:g} to keep such directions or {rtol * 10:g} to drop them") from None


def check_regrouping(robot: Robot, base: BaseParameters, *,
                     friction: FrictionModel | None = None, rotor_inertia: bool = False,
                     what: str = "`base`") -> None:
    """ValueError unless ``base``'s rows regroup ``robot``'s torque regressor as the rank
    decision that chose them would (whatever regressor it was taken on: torque, static
    ``[M; g]``, the data's). Two tests on the structural factor ``R`` weighed by
    ``group_scale`` ``D`` (the decision's weights), relative to its largest singular value:

    - the representatives span the regressor: ``G_ref``, the regrouping ``regrouping_for``
      computes on them, misses at most ``sqrt(p) rtol`` (each dependent column may keep up to
      the rank tolerance ``rtol sigma_1`` after eliminating its representatives; rtol =
      ``base.rtol``, ``STRUCTURAL_RTOL`` when not recorded). A deleted or renamed row leaves a
      genuine direction out (>= sigma_k, >= 3e-2 for real structure) and fails here;
    - the terms are those: ``|R_L (G - G_ref) D|_2 <= max(10 sigma_{k+1}, 1e-8,
      sqrt(p) rtol^2)``, with ``sigma_{k+1}`` the largest singular value the decision at
      ``rtol`` calls zero (the rounded-angle residue: two regressors may disagree by that
      much, no more) and ``rtol^2`` the residues ``regrouping_for`` drops from each column
      (``clean_tolerance``: a file written before it dropped them holds them). An edited
      term fails here.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=_BLAS_THREADS, user_api="blas"):
        r_factor = structural_factor(robot, friction=friction, rotor_inertia=rotor_inertia)
        scale = group_scale(robot, r_factor)
        scaled = r_factor * scale
        singular = np.linalg.svd(scaled, compute_uv=False)
    top, p = singular[0], singular.size
    rtol = STRUCTURAL_RTOL if base.rtol is None else base.rtol
    rank = int((singular > rtol * top).sum())
    weakest = singular[rank] if rank < p else 0.0
    groups = column_groups(robot, p, rotor_inertia=rotor_inertia) \
        if base.method == "rref" else None
    # of the scaled columns, as the decision cleans them; a file written before the cleaning
    # may still hold the residues it drops: up to clean_tolerance of each column
    reference = regrouping_for(scaled, base.independent, groups, clean=clean_tolerance(rtol))
    scaled_terms = base.regrouping / scale[base.independent, None] * scale
    missed = np.linalg.norm(scaled[:, base.independent] @ reference - scaled, 2) / top
    if not missed <= max(np.sqrt(p) * rtol, 1e-8):
        raise ValueError(f"{what} are not a regrouping of this robot's parameters (a row "
                         f"deleted or renamed?): their parameters miss {missed:.2g} of the "
                         f"regressor (the rank decision at rtol {rtol:.2g} allows "
                         f"{np.sqrt(p) * rtol:.2g})")
    differ = np.linalg.norm(scaled[:, base.independent] @ (scaled_terms - reference), 2) / top
    allowed = max(10 * weakest / top, 1e-8, np.sqrt(p) * clean_tolerance(rtol))
    if not differ <= allowed:
        raise ValueError(f"{what} are not a regrouping of this robot's parameters (a term "
                         f"changed?): their terms miss {differ:.2g} of the regressor (the "
                         f"rank decision at rtol {rtol:.2g} allows {allowed:.2g})")


def processing_order(robot: Robot, n_columns: int) -> NDArray:
    """The rref visiting order of a robot's regressor columns: links base to tip, each in its
    convention's ``LINK_ORDER``; rotor-inertia and friction (or other extra) columns last, so
    a rotor inertia that moves like its link's ``ZZ`` (joint 1 about a vertical axis) is
    regrouped into it."""
    within = [PARAMETER_NAMES.index(name) for name in LINK_ORDER[robot.convention]]
    links = [N_LINK_PARAMETERS * j + k for j in range(robot.n_joints) for k in within]
    return np.array(links + list(range(len(links), n_columns)))


def joint1_gravity_is_zero(robot: Robot) -> bool:
    """True when joint 1 is revolute about the gravity direction (a level base): g1 == 0."""
    joint = robot.joints[0]
    axis = joint.pre[:3, :3] @ joint.axis
    g = robot.gravity
    return bool(joint.kind == "revolute" and np.linalg.norm(np.cross(axis, g)) <= 1e-12 * max(
        np.linalg.norm(g), 1.0))


def default_friction(robot: Robot) -> FrictionModel:
    """The robot file's friction model when it is linear, else viscous + Coulomb + offset; for
    a URDF robot, which states no friction model, viscous + Coulomb + offset too (every geared
    arm has friction, and a torque sensor an offset)."""
    if robot.convention == "urdf" and isinstance(robot.friction, NoFriction):
        return ViscousCoulomb.zeros(robot.n_joints)
    if robot.friction.linear:
        return robot.friction
    return ViscousCoulomb.zeros(robot.n_joints)
