"""Linear estimators of base parameters, with the scikit-learn estimator contract.

``OLS().fit(W, tau)`` and ``WLS().fit(W, tau)`` take a regressor ``(N, n, p)`` (one block of n
joint rows per sample; a flat ``(m, p)`` works for OLS) and torques ``(N, n)``. What is learned
ends in ``_``:

- ``coef_`` the estimate (zero where a coefficient was dropped);
- ``covariance_ = sigma2_ (W^T W)^-1`` on the (weighted) problem, with
  ``sigma2_ = |tau - W coef_|^2 / (m - rank)``; ``std_`` (inf for a coefficient a
  rank-deficient W does not determine), ``relative_std_percent_`` (``100 std / |coef|``, inf
  for a zero or dropped coefficient);
- ``rank_``, ``singular_`` (singular values of W — of the weighted W for WLS),
  ``condition_number_`` (their ratio; inf when W is rank deficient: reduce to base parameters
  first); an ``IllConditionedWarning`` when W, its columns scaled, is ill-conditioned;
- ``residuals_`` (m,) = ``tau - W coef_`` (unweighted; ``fit`` only), ``relative_error_percent_``
  = ``100 |tau - W coef_| / |tau|``;
- ``dropped_``: indices of coefficients removed by ``drop_above_percent`` (Gaz §VI drops those
  above 30 %: fit, drop every coefficient above the threshold, fit again without them — from
  the compressed problem, no second pass over the data);
- ``factor_``: the triangular factor R of the (weighted) regressor, ``W^T W = R^T R``: the
  whole least-squares problem in (p, p) numbers, for later constrained solves.

The solve goes through triangular factors of ``[W tau]`` (``dynid.identification._stream``):
exact least squares without forming ``W^T W``, at the memory of one chunk of rows.
``fit_factors(factors)`` fits factors folded elsewhere (a log streamed chunk by chunk, or a
fleet's logs reduced on a cluster): ``fit(W, tau)`` folds its arrays and calls it.
WLS rescales each joint's rows by ``1 / sigma_j`` (Szabó 2021, eq. 18-19: the closed form
``(W^T S^-1 W)^-1 W^T S^-1 tau``), ``sigma_j`` given or estimated from OLS residuals — per
joint, or per joint and log when ``fit`` is given the samples' ``groups`` (logs from
different runs or sensors have their own noise).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_float_array, as_vector
from dynid.identification._stream import Factors, Moments, from_arrays
from dynid.model.linear_model import relative_std_percent

__all__ = [
    "ESTIMATORS",
    "ILL_CONDITIONED",
    "IV",
    "OLS",
    "WLS",
    "IllConditionedWarning",
    "RankDeficiencyError",
    "RankDeficiencyWarning",
]


class RankDeficiencyWarning(RuntimeWarning):
    """The regressor does not determine every coefficient (reduce to base parameters)."""


class RankDeficiencyError(ValueError):
    """The regressor does not determine every coefficient, and the estimator has no answer
    then (errors in variables: TLS, ML); raised after its regressor figures (``rank_``) are
    set, so that a caller can name the coefficients left out."""


class IllConditionedWarning(RuntimeWarning):
    """The regressor determines some coefficients only through noise-sized differences."""


# Condition number (columns scaled to unit norm) above which an estimate carries less than about
# a millionth of the data's precision: warned about, not refused.
ILL_CONDITIONED = 1e6


def _blocks(regressor: ArrayLike, torque: ArrayLike, *, need_blocks: bool):
    """``W`` as (m, p), ``y`` as (m,), and the joint count n (None for a flat W)."""
    w = as_float_array("regressor", regressor)
    y = as_float_array("torque", torque)
    if w.ndim == 3:
        n = w.shape[1]
        expected = w.shape[:2]
        if y.shape != expected:
            raise ValueError(
                f"`torque` must have shape {expected} like the regressor, got {y.shape}"
            )
        w = w.reshape(-1, w.shape[-1])
    elif w.ndim == 2 and not need_blocks:
        n = None
        if y.shape != (w.shape[0],):
            raise ValueError(
                f"`torque` must hold one value per regressor row ({w.shape[0]}), got {y.shape}"
            )
    else:
        shape = "(N, n, p)" if need_blocks else "(m, p) or (N, n, p)"
        raise ValueError(f"`regressor` must be {shape}, got shape {w.shape}")
    m, p = w.shape
    if m <= p:
        raise ValueError(
            f"`regressor` needs more rows than coefficients: {m} rows for {p} coefficients "
            "(record more samples)"
        )
    return w, y.reshape(-1), n


class _LinearEstimator:
    """Weighted least squares through the triangular factor, with optional dropping."""

    #: its std is the estimate's covariance (``LinearModel.std_kind``), covering on its twin
    std_kind = "covariance"

    def __init__(self, *, drop_above_percent: float | None = None) -> None:
        self.drop_above_percent = drop_above_percent

    def _check_params(self) -> None:
        if self.drop_above_percent is not None and not self.drop_above_percent > 0:
            raise ValueError(
                f"`drop_above_percent` must be > 0 (percent), got {self.drop_above_percent}"
            )

    def _solve(self, factors: Factors, scale=None) -> None:
        """Fit the compressed problem: every group of ``factors``, each group's rows times
        ``scale(key)`` (None: unweighted)."""
        target_squares = factors.target_squares()
        if target_squares == 0:
            raise ValueError("`torque` is all zeros: nothing to identify")
        m, p = factors.n_rows, factors.n_columns
        if m <= p:
            raise ValueError(
                f"`regressor` needs more rows than coefficients: {m} rows for {p} coefficients "
                "(record more samples)"
            )
        # [W y] compressed once; every later solve (all columns, or the kept ones) reads it
        augmented = factors.stacked(scale=scale)
        every = np.arange(p)
        self._solve_columns(augmented, m, every)
        self.dropped_ = np.zeros(0, dtype=int)
        # dropping is for noisy coefficients of a determined problem, not a rank-deficient one
        if self.drop_above_percent is not None and self.rank_ == p:
            high = np.flatnonzero(self.relative_std_percent_ > self.drop_above_percent)
            if high.size == p:
                raise ValueError(
                    f"`drop_above_percent` = {self.drop_above_percent} would drop every "
                    "coefficient (none is determined that well)"
                )
            if high.size:
                self._solve_columns(augmented, m, np.setdiff1d(every, high))
                self.dropped_ = high
        residual_squares = sum(factors.residual_squares(self.coef_).values())
        self.relative_error_percent_ = float(100.0 * np.sqrt(residual_squares
                                                             / target_squares))
        self.n_samples_ = m
        if not np.isfinite(self.condition_number_):
            return  # rank deficient: warned about already
        equilibrated = np.linalg.cond(self.factor_ / np.linalg.norm(self.factor_, axis=0))
        if max(equilibrated, self.condition_number_) > ILL_CONDITIONED:
            warnings.warn(
                f"the regressor is ill-conditioned (condition number "
                f"{self.condition_number_:.3g}, {equilibrated:.3g} with its columns scaled; "
                f"above {ILL_CONDITIONED:.0e}): some coefficients are dominated by noise; "
                "excite every joint more (`dynid excite`), identify from several logs, or "
                "regularise towards a prior (a constrained method, --prior-weight)",
                IllConditionedWarning, stacklevel=4,
            )

    def _solve_columns(self, augmented: NDArray, m: int, keep: NDArray) -> None:
        """Least squares on the columns ``keep`` of the compressed ``[W y]``."""
        p = augmented.shape[1] - 1
        k = keep.size
        factor = np.linalg.qr(augmented[:, [*keep, p]], mode="r")
        r, z, rho = factor[:k, :k], factor[:k, k], factor[k, k]
        u, singular, vt = np.linalg.svd(r)
        rank = int((singular > max(m, k) * np.finfo(float).eps * singular[0]).sum())
        if rank < k:
            warnings.warn(
                f"regressor is rank deficient ({rank} < {k} columns): reduce it to base "
                "parameters first; the estimate is the minimum-norm solution",
                RankDeficiencyWarning, stacklevel=4,
            )
        inverse = np.where(np.arange(k) < rank, 1.0 / np.where(singular > 0, singular, 1.0), 0.0)
        if rank == k:
            solution = scipy.linalg.solve_triangular(r, z)
            weighted_rss = rho**2  # |diag(scale) (y - W x)|^2 from the augmented factor
        else:
            solution = vt.T @ (inverse * (u.T @ z))
            # the minimum-norm solution leaves the undetermined part of z in the residual
            weighted_rss = rho**2 + float(np.sum((u.T @ z)[rank:] ** 2))
        sigma2 = float(weighted_rss) / (m - rank)
        covariance = sigma2 * (vt.T * inverse**2) @ vt
        std = np.sqrt(np.diag(covariance))
        if rank < k:  # a coefficient with a component in the null space is not determined
            undetermined = np.abs(vt[rank:]).max(axis=0) > np.sqrt(np.finfo(float).eps)
            std[undetermined] = np.inf
        coef = np.zeros(p)
        coef[keep] = solution
        full_covariance = np.zeros((p, p))
        full_covariance[np.ix_(keep, keep)] = covariance
        full_std = np.zeros(p)
        full_std[keep] = std
        self.coef_ = coef
        self.covariance_ = full_covariance
        self.sigma2_ = sigma2
        self.std_ = full_std
        self.relative_std_percent_ = relative_std_percent(coef, full_std)
        self.singular_ = singular
        self.rank_ = rank
        self.condition_number_ = float(singular[0] / singular[-1]) if rank == k else np.inf
        self.factor_ = r  # R of the (weighted) regressor's kept columns: W^T W = R^T R

    def predict(self, regressor: ArrayLike) -> NDArray:
        """``W coef_`` with W ``(..., p)`` -> ``(...)``."""
        if not hasattr(self, "coef_"):
            raise RuntimeError(f"{type(self).__name__} is not fitted: call fit() first")
        w = as_float_array("regressor", regressor)
        if w.shape[-1:] != self.coef_.shape:
            raise ValueError(f"`regressor` must have {self.coef_.size} columns, got {w.shape}")
        return w @ self.coef_


class OLS(_LinearEstimator):
    """Ordinary least squares, ``coef_ = pinv(W) tau``."""

    name = "ols"

    def fit(self, regressor: ArrayLike, torque: ArrayLike) -> OLS:
        self._check_params()
        w, y, n = _blocks(regressor, torque, need_blocks=False)
        self._solve(from_arrays(w if n is None else w.reshape(-1, n, w.shape[1]),
                                y if n is None else y.reshape(-1, n)))
        self.residuals_ = y - w @ self.coef_
        return self

    def fit_factors(self, factors: Factors) -> OLS:
        """Fit compressed rows (see the module)."""
        self._check_params()
        self._solve(factors)
        return self


class WLS(_LinearEstimator):
    """Weighted least squares with per-joint noise levels (Szabó 2021, eq. 18-19).

    ``noise_std`` (n,) [N m]: the torque noise standard deviation of each joint; if None, it is
    estimated from the residuals of an OLS fit, ``sigma_j^2 = |r_j|^2 / (N - p / n)``.
    ``fit(..., groups=labels)`` (one integer label per sample, e.g. the log it comes from)
    estimates one level per group and joint instead, ``noise_std_`` ``(G, n)`` in the labels'
    sorted order (each group's share of the ``p / n`` degrees of freedom by its samples).
    """

    name = "wls"

    def __init__(self, *, noise_std: ArrayLike | None = None,
                 drop_above_percent: float | None = None) -> None:
        super().__init__(drop_above_percent=drop_above_percent)
        self.noise_std = noise_std

    def fit(self, regressor: ArrayLike, torque: ArrayLike, *,
            groups: ArrayLike | None = None) -> WLS:
        self._check_params()
        w, y, n = _blocks(regressor, torque, need_blocks=True)
        n_samples = w.shape[0] // n
        if groups is not None:
            raw = np.asarray(groups)
            if raw.shape != (n_samples,) or not np.issubdtype(raw.dtype, np.integer):
                raise ValueError(f"`groups` must be {n_samples} integer labels (one per "
                                 f"sample), got {raw.dtype} {raw.shape}")
        self.fit_factors(from_arrays(w.reshape(n_samples, n, -1), y.reshape(n_samples, n),
                                     groups), by_group=groups is not None)
        self.residuals_ = y - w @ self.coef_
        return self

    def fit_factors(self, factors: Factors, *, by_group: bool = True) -> WLS:
        """Fit compressed rows whose groups are keyed ``(label, ..., joint)``: one noise level
        per label and joint (``by_group``), or per joint only; the labels' sorted order is
        ``noise_std_``'s."""
        self._check_params()
        keys = factors.keys()
        n = 1 + max(key[-1] for key in keys)
        labels = sorted({key[0] for key in keys}) if by_group else [0]
        if by_group and self.noise_std is not None:
            raise ValueError("`groups` estimate one noise level per group: leave "
                             "`noise_std` unset")

        def level(key) -> tuple[int, int]:
            return (labels.index(key[0]) if by_group else 0), key[-1]

        if self.noise_std is None:
            ols = OLS().fit_factors(factors)
            squares = np.zeros((len(labels), n))
            counts = np.zeros((len(labels), n))
            for key, value in factors.residual_squares(ols.coef_).items():
                squares[level(key)] += value
                counts[level(key)] += factors.rows[key]
            # each group's share of the p / n degrees of freedom per joint, by its rows
            dof = counts * (1 - factors.n_columns / n / counts.sum(axis=0, keepdims=True))
            if (dof <= 0).any():
                raise ValueError("WLS: a group has too few samples to estimate its noise")
            sigma = np.sqrt(squares / dof)
            if (sigma <= 0).any():
                raise ValueError("WLS: a joint's OLS residuals are all zero; give `noise_std`")
        else:
            sigma = as_vector("noise_std", self.noise_std, n)[None, :]
            if (sigma <= 0).any():
                raise ValueError(f"`noise_std` must be > 0 for every joint, got {sigma[0]}")
        self.noise_std_ = sigma if by_group else sigma[0]
        self._solve(factors, lambda key: 1.0 / sigma[level(key)])
        return self


class IV(_LinearEstimator):
    """Instrumental variables: ``coef_ = (Z^T W)^-1 Z^T tau`` for instruments ``Z`` shaped like
    W, correlated with it but not with its noise (Janot et al. 2014, IDIM-IV: Z is the
    regressor of the model simulated along the same trajectory).

    The figures of the result (covariance, relative std) follow the usual IV formulas:
    ``sigma2 (Z^T W)^-1 (Z^T Z) (W^T Z)^-1`` with ``sigma2`` from the residuals.
    """

    name = "iv"

    def fit(self, regressor: ArrayLike, torque: ArrayLike, *, instruments: ArrayLike) -> IV:
        self._check_params()
        w, y, _ = _blocks(regressor, torque, need_blocks=False)
        z = as_float_array("instruments", instruments).reshape(-1, w.shape[1])
        if z.shape != w.shape:
            raise ValueError(f"`instruments` must have the regressor's shape {w.shape}, "
                             f"got {z.shape}")
        moments = Moments(w.shape[1])
        moments.add(z, w, y)
        self.fit_moments(moments, from_arrays(w, y))
        self.residuals_ = y - w @ self.coef_
        return self

    def fit_moments(self, moments: Moments, factors: Factors) -> IV:
        """Fit from the instruments' moments and the factors of ``[W tau]`` (for the
        residual), both folded elsewhere (a log streamed chunk by chunk)."""
        self._check_params()
        target_squares = factors.target_squares()
        if target_squares == 0:
            raise ValueError("`torque` is all zeros: nothing to identify")
        m, p = moments.rows, moments.zw.shape[0]
        if m <= p:
            raise ValueError(f"`regressor` needs more rows than coefficients: {m} rows for {p} "
                             "coefficients (record more samples)")
        singular = np.linalg.svd(moments.zw, compute_uv=False)
        if singular[-1] <= max(m, p) * np.finfo(float).eps * singular[0]:
            raise ValueError("the instruments do not determine every coefficient (Z^T W is "
                             "singular): simulate the model along a richer trajectory")
        coef = np.linalg.solve(moments.zw, moments.zy)
        residual_squares = sum(factors.residual_squares(coef).values())
        sigma2 = residual_squares / (m - p)
        inverse = np.linalg.inv(moments.zw)
        covariance = sigma2 * inverse @ moments.zz @ inverse.T
        self.coef_ = coef
        self.covariance_ = covariance
        self.sigma2_ = sigma2
        self.std_ = np.sqrt(np.diag(covariance))
        self.relative_std_percent_ = relative_std_percent(coef, self.std_)
        self.singular_ = singular
        self.rank_ = p
        self.condition_number_ = float(singular[0] / singular[-1])
        self.relative_error_percent_ = float(100.0 * np.sqrt(residual_squares
                                                             / target_squares))
        self.n_samples_ = m
        self.dropped_ = np.zeros(0, dtype=int)
        return self


ESTIMATORS = {estimator.name: estimator for estimator in (OLS, WLS)}
