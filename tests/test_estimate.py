"""OLS on synthetic data with known truth; its covariance against the closed form."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close

from dynid.estimate import OLS, RankDeficiencyWarning


def test_ols_recovers_known_parameters_within_their_error_bars(rng):
    w = rng.standard_normal((5000, 8)) * np.logspace(0, 3, 8)
    truth = rng.standard_normal(8)
    sigma = 0.05
    y = w @ truth + sigma * rng.standard_normal(5000)
    fit = OLS().fit(w, y)
    assert fit.rank_ == 8
    assert np.all(np.abs(fit.coef_ - truth) < 5 * fit.std_)
    assert abs(np.sqrt(fit.sigma2_) - sigma) < 0.1 * sigma
    assert_close(fit.covariance_, fit.sigma2_ * np.linalg.inv(w.T @ w), rtol=1e-8, atol=0)
    assert_close(fit.condition_number_, np.linalg.cond(w), rtol=1e-10)
    assert_close(fit.relative_std_percent_, 100 * fit.std_ / np.abs(fit.coef_))
    expected_error = 100 * np.linalg.norm(y - w @ fit.coef_) / np.linalg.norm(y)
    assert_close(fit.relative_error_percent_, expected_error)
    assert_close(fit.predict(w), w @ fit.coef_)


def test_ols_accepts_per_sample_blocks(rng):
    w = rng.standard_normal((30, 3, 4))
    y = w @ np.arange(1.0, 5.0)
    fit = OLS().fit(w, y)
    assert_close(fit.coef_, np.arange(1.0, 5.0), rtol=1e-12)


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
