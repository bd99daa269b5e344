"""Base parameters: which combinations of the standard parameters the data can determine.

For a stacked regressor ``W`` (m, p) with ``tau = W pi``, a column-pivoted QR ``W P = Q R``
splits the columns into ``r`` independent ones (``L``) and the rest (``K = L B``, with
``B = R11^-1 R12`` by a triangular solve). Then ``W pi = L (pi_L + B pi_K) = L pi_b``:

- the base parameters are ``pi_b = G pi`` with the regrouping matrix ``G`` (r, p);
- the base regressor is ``W[:, independent]``;
- a parameter is *unidentifiable* if its column is zero, identifiable *alone* if it is
  independent and nothing regroups into it, else identifiable *in combination*.

The rank decision uses a tolerance relative to the largest pivot (never an absolute one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_float_array
from dynid.dynamics import parameter_names, regressor
from dynid.friction import FrictionModel
from dynid.robot import Robot

__all__ = ["BaseParameters", "base_parameters", "robot_base_parameters", "structural_regressor"]


@dataclass(frozen=True)
class BaseParameters:
    """The result of ``base_parameters``: regrouping of p standard into r base parameters."""

    independent: NDArray  # (r,) column indices kept, ascending; base parameter k <-> column k
    regrouping: NDArray  # (r, p) G with pi_b = G pi
    names: tuple[str, ...]  # (p,) standard parameter names
    tolerance: float  # absolute pivot threshold used (relative tolerance x largest pivot)

    @property
    def rank(self) -> int:
        return self.independent.size

    @property
    def n_parameters(self) -> int:
        return len(self.names)

    @property
    def base_names(self) -> list[str]:
        """Each base parameter named after the standard parameter it is anchored on."""
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


def base_parameters(stacked: ArrayLike, *, names: Sequence[str] | None = None,
                    rtol: float | None = None) -> BaseParameters:
    """Base parameters of a stacked regressor ``(m, p)`` (or ``(N, n, p)``, stacked here).

    ``rtol``: pivots below ``rtol * |R[0, 0]|`` count as zero; default ``max(m, p) * eps``
    (numpy's ``matrix_rank`` rule).
    """
    w = as_float_array("stacked", stacked)
    if w.ndim == 3:
        w = w.reshape(-1, w.shape[-1])
    if w.ndim != 2 or w.shape[0] < w.shape[1]:
        raise ValueError(f"`stacked` must be (m, p) with m >= p rows, got shape {w.shape}")
    m, p = w.shape
    names = tuple(names) if names is not None else tuple(f"p{k + 1}" for k in range(p))
    if len(names) != p:
        raise ValueError(f"`names` must have {p} entries, got {len(names)}")
    if rtol is None:
        rtol = max(m, p) * np.finfo(np.float64).eps
    if not (0 < rtol < 1):
        raise ValueError(f"`rtol` must be in (0, 1), got {rtol}")
    r_factor, pivots = scipy.linalg.qr(w, mode="r", pivoting=True)
    diagonal = np.abs(np.diag(r_factor))
    if diagonal[0] == 0:
        raise ValueError("`stacked` is all zeros: no parameter is identifiable")
    tolerance = rtol * diagonal[0]
    rank = int((diagonal > tolerance).sum())
    # entries at round-off level are exact zeros of the structure: clear them, with the same
    # relative tolerance as the rank decision, so that the regrouping shows only real terms
    coupling = np.where(np.abs(r_factor[:rank, rank:p]) > tolerance, r_factor[:rank, rank:p], 0)
    beta = scipy.linalg.solve_triangular(r_factor[:rank, :rank], coupling)
    beta[np.abs(beta) <= rtol * max(1.0, np.abs(beta).max(initial=0.0))] = 0.0
    regrouping = np.zeros((rank, p))
    regrouping[:, pivots[:rank]] = np.eye(rank)
    regrouping[:, pivots[rank:]] = beta
    order = np.argsort(pivots[:rank])
    return BaseParameters(
        independent=np.sort(pivots[:rank]), regrouping=regrouping[order], names=names,
        tolerance=float(tolerance),
    )


def structural_regressor(robot: Robot, *, friction: FrictionModel | None = None,
                         n_samples: int | None = None, seed: int = 0) -> NDArray:
    """Stacked regressor ``(n N, 10 n [+ friction])`` at random states, for identifiability.

    Positions are uniform within the position limits (+-pi where unbounded), velocities and
    accelerations standard normal: generic states, so only the structure can cause rank loss.
    """
    n = robot.n_joints
    n_samples = n_samples or max(200, 4 * n * 10)
    rng = np.random.default_rng(seed)
    lower = np.where(np.isfinite(robot.limits.lower), robot.limits.lower, -np.pi)
    upper = np.where(np.isfinite(robot.limits.upper), robot.limits.upper, np.pi)
    q = rng.uniform(lower, upper, size=(n_samples, n))
    dq, ddq = rng.standard_normal((2, n_samples, n))
    y = regressor(robot, q, dq, ddq)
    if friction is not None:
        if not friction.linear:
            raise ValueError(f"`friction` must be linear in its parameters, got {friction.name!r}")
        y = np.concatenate([y, friction.regressor(dq)], axis=-1)
    return y.reshape(n_samples * n, -1)


def robot_base_parameters(robot: Robot, *, friction: FrictionModel | None = None,
                          rtol: float | None = None, seed: int = 0) -> BaseParameters:
    """Base parameters of ``robot``'s torque regressor (with ``friction`` columns if given)."""
    names = parameter_names(robot)
    if friction is not None:
        names = names + friction.coefficient_names()
    return base_parameters(structural_regressor(robot, friction=friction, seed=seed),
                           names=names, rtol=rtol)
