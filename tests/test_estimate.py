"""OLS and WLS on synthetic data with known truth; closed forms; dropping; bad input."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close

from dynid.identification.linear.estimators import (
    OLS,
    WLS,
    IllConditionedWarning,
    RankDeficiencyWarning,
)


def test_ols_recovers_known_parameters_within_their_error_bars(rng):
    w = rng.standard_normal((5000, 8)) * np.logspace(0, 3, 8)
    truth = rng.standard_normal(8)
    sigma = 0.05
    y = w @ truth + sigma * rng.standard_normal(5000)
    fit = OLS().fit(w, y)
    assert fit.rank_ == 8
    assert np.all(np.abs(fit.coef_ - truth) < 5 * fit.std_)
    assert abs(np.sqrt(fit.sigma2_) - sigma) < 0.1 * sigma
    assert_close(fit.coef_, np.linalg.lstsq(w, y, rcond=None)[0], rtol=1e-10)
    assert_close(fit.covariance_, fit.sigma2_ * np.linalg.inv(w.T @ w), rtol=1e-8, atol=0)
    assert_close(fit.condition_number_, np.linalg.cond(w), rtol=1e-10)
    assert_close(fit.relative_std_percent_, 100 * fit.std_ / np.abs(fit.coef_))
    expected_error = 100 * np.linalg.norm(y - w @ fit.coef_) / np.linalg.norm(y)
    assert_close(fit.relative_error_percent_, expected_error)
    assert_close(fit.residuals_, y - w @ fit.coef_)
    assert_close(fit.predict(w), w @ fit.coef_)


def test_ols_accepts_per_sample_blocks(rng):
    w = rng.standard_normal((30, 3, 4))
    y = w @ np.arange(1.0, 5.0)
    fit = OLS().fit(w, y)
    assert_close(fit.coef_, np.arange(1.0, 5.0), rtol=1e-12)


def test_wls_is_the_closed_form(rng):
    """(W^T P W)^-1 W^T P tau with P = diag(1 / sigma_j^2) (Szabó 2021 eq. 19)."""
    n_samples, n, p = 400, 3, 5
    w = rng.standard_normal((n_samples, n, p))
    sigma = np.array([0.5, 0.3, 0.7])
    y = w @ rng.standard_normal(p) + sigma * rng.standard_normal((n_samples, n))
    fit = WLS(noise_std=sigma).fit(w, y)
    flat = w.reshape(-1, p)
    weights = np.tile(1 / sigma**2, n_samples)
    expected = np.linalg.solve(flat.T @ (weights[:, None] * flat), flat.T @ (weights * y.ravel()))
    assert_close(fit.coef_, expected, rtol=1e-10)
    assert_close(fit.noise_std_, sigma)


def test_wls_beats_ols_when_joint_noise_differs(rng):
    n_samples, n, p = 2000, 3, 6
    truth = rng.standard_normal(p)
    sigma = np.array([0.02, 0.5, 2.0])
    errors = {"ols": [], "wls": []}
    for _ in range(30):
        w = rng.standard_normal((n_samples, n, p))
        y = w @ truth + sigma * rng.standard_normal((n_samples, n))
        errors["ols"].append(np.linalg.norm(OLS().fit(w, y).coef_ - truth))
        wls = WLS().fit(w, y)  # noise levels estimated from OLS residuals
        errors["wls"].append(np.linalg.norm(wls.coef_ - truth))
        # OLS residuals of the quiet joint also carry the OLS estimation error of the others
        assert_close(wls.noise_std_[1:], sigma[1:], rtol=0.1)
        assert wls.noise_std_[0] < 0.1
    assert np.mean(errors["wls"]) < 0.5 * np.mean(errors["ols"])


def test_drop_above_threshold_refits_without_the_noisy_coefficients(rng):
    w = rng.standard_normal((500, 4))
    y = w @ np.array([1.0, 2.0, 3.0, 0.0]) + 0.1 * rng.standard_normal(500)
    full = OLS().fit(w, y)
    assert full.relative_std_percent_[3] > 30
    fit = OLS(drop_above_percent=30).fit(w, y)
    assert list(fit.dropped_) == [3]
    assert fit.coef_[3] == 0.0 and fit.std_[3] == 0.0
    assert_close(fit.coef_[:3], np.linalg.lstsq(w[:, :3], y, rcond=None)[0], rtol=1e-10)


def test_rank_deficiency_warns(rng):
    w = rng.standard_normal((20, 3))
    w = np.column_stack([w, w[:, 0]])
    with pytest.warns(RankDeficiencyWarning, match="rank deficient"):
        fit = OLS().fit(w, rng.standard_normal(20))
    assert fit.rank_ == 3
    assert fit.condition_number_ == np.inf


def test_bad_inputs(rng):
    with pytest.raises(ValueError, match="`torque` must hold one value per regressor row"):
        OLS().fit(np.ones((10, 2)), np.ones(9))
    with pytest.raises(ValueError, match="more rows than coefficients"):
        OLS().fit(np.ones((2, 2)), np.ones(2))
    with pytest.raises(ValueError, match="`torque` contains NaN"):
        OLS().fit(np.ones((10, 2)), np.full(10, np.nan))
    with pytest.raises(RuntimeError, match="not fitted"):
        OLS().predict(np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"`regressor` must be \(N, n, p\)"):
        WLS().fit(np.ones((10, 2)), np.ones(10))
    with pytest.raises(ValueError, match=r"`noise_std` must have shape \(3,\)"):
        WLS(noise_std=[1.0, 2.0]).fit(rng.standard_normal((10, 3, 2)), np.ones((10, 3)))
    with pytest.raises(ValueError, match="`drop_above_percent` must be > 0"):
        OLS(drop_above_percent=-1).fit(rng.standard_normal((10, 2)), np.ones(10))


def test_dropping_everything_is_an_error(rng):
    w = rng.standard_normal((50, 3))
    with pytest.raises(ValueError, match="would drop every coefficient"):
        OLS(drop_above_percent=1e-12).fit(w, w @ np.ones(3) + rng.standard_normal(50))


@pytest.mark.parametrize("gap", [1e-16, 1.3e-12])
def test_nearly_dependent_columns_are_reported(rng, gap):
    """Never a silent estimate: rank deficient (inf std) or ill-conditioned (a warning)."""
    a, b, c = rng.standard_normal((3, 200))
    w = np.column_stack([a, b, a + gap * c])
    with pytest.warns((RankDeficiencyWarning, IllConditionedWarning)):
        fit = OLS().fit(w, w @ np.array([1.0, 2.0, 3.0]))
    if fit.rank_ < 3:
        assert np.isinf(fit.std_).any()


def test_ill_conditioning_warns(rng):
    a, b = rng.standard_normal((2, 500))
    w = np.column_stack([a, b, a + 1e-8 * rng.standard_normal(500)])
    with pytest.warns(IllConditionedWarning, match="ill-conditioned"):
        OLS().fit(w, w @ np.ones(3) + 0.01 * rng.standard_normal(500))


def test_torque_shapes_and_values_are_checked(rng):
    w = rng.standard_normal((500, 2))
    with pytest.raises(ValueError, match="one value per regressor row"):
        OLS().fit(w, rng.standard_normal((2, 250)))
    with pytest.raises(ValueError, match="all zeros"):
        OLS().fit(w, np.zeros(500))


def test_iv_with_the_regressor_as_instruments_is_ols(rng):
    from dynid.identification.linear.estimators import IV

    w = rng.standard_normal((300, 4))
    y = w @ np.arange(1.0, 5.0) + 0.1 * rng.standard_normal(300)
    iv, ols = IV().fit(w, y, instruments=w), OLS().fit(w, y)
    assert_close(iv.coef_, ols.coef_, rtol=1e-10)
    assert_close(iv.covariance_, ols.covariance_, rtol=1e-8)
    with pytest.raises(ValueError, match="`instruments` must have the regressor's shape"):
        IV().fit(w, y, instruments=w[:, :3])
