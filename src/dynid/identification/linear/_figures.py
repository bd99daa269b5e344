"""What the robust and regularised estimators share with OLS's figures: the singular values,
rank and condition number of the (compressed) regressor, and the relative error of an
estimate on the unweighted rows."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from dynid.identification._stream import Factors
from dynid.identification.linear.estimators import relative_std_percent


def check_factors(factors: Factors) -> tuple[int, int]:
    """``(m, p)`` of ``factors``; ValueError for too few rows or all-zero torques."""
    m, p = factors.n_rows, factors.n_columns
    if m <= p:
        raise ValueError(f"`regressor` needs more rows than coefficients: {m} rows for {p} "
                         "coefficients (record more samples)")
    if factors.target_squares() == 0:
        raise ValueError("`torque` is all zeros: nothing to identify")
    return m, p


def regressor_figures(estimator, r: NDArray, m: int) -> None:
    """``singular_``, ``rank_``, ``condition_number_`` (inf when rank deficient) and
    ``factor_`` of the regressor whose triangular factor is ``r`` ``(p, p)``, ``m`` rows;
    ``dropped_`` empty (these estimators drop nothing), ``n_samples_`` = m."""
    singular = np.linalg.svd(r, compute_uv=False)
    tolerance = max(m, r.shape[0]) * np.finfo(float).eps * singular[0]
    rank = int((singular > tolerance).sum())
    estimator.singular_ = singular
    estimator.rank_ = rank
    estimator.condition_number_ = (float(singular[0] / singular[-1]) if rank == r.shape[0]
                                   else np.inf)
    estimator.factor_ = r
    estimator.dropped_ = np.zeros(0, dtype=int)
    estimator.n_samples_ = m


def coefficient_figures(estimator, coef: NDArray, covariance: NDArray, sigma2: float,
                        factors: Factors) -> None:
    """``coef_``, ``covariance_``, ``std_``, ``relative_std_percent_``, ``sigma2_`` and the
    relative error ``100 |tau - W coef| / |tau|`` on the unweighted rows of ``factors``."""
    estimator.coef_ = coef
    estimator.covariance_ = covariance
    estimator.sigma2_ = float(sigma2)
    estimator.std_ = np.sqrt(np.maximum(np.diag(covariance), 0.0))
    estimator.relative_std_percent_ = relative_std_percent(coef, estimator.std_)
    residual = sum(factors.residual_squares(coef).values())
    estimator.relative_error_percent_ = float(100.0 * np.sqrt(residual
                                                              / factors.target_squares()))


def compressed(factors: Factors) -> tuple[NDArray, NDArray, float]:
    """``(R, z, rho)`` of the stacked factor ``[[R, z], [0, rho]]`` of ``[W tau]``:
    ``|W x - tau|^2 = |R x - z|^2 + rho^2``."""
    stacked = factors.stacked()
    return stacked[:-1, :-1], stacked[:-1, -1], float(abs(stacked[-1, -1]))
