"""IRLS (Huber, Tukey), TLS and errors-in-variables ML against known truth and independent
closed forms; from logs of any length through ``identify`` like in memory; bad input."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import assert_close

from dynid.excitation.optimize import random_fourier
from dynid.friction.models import ViscousCoulomb
from dynid.identification.estimate import Problem
from dynid.identification.linear.estimators import OLS
from dynid.identification.linear.idim import identify
from dynid.identification.linear.robust import IRLS, METHODS, ML, TLS, robust_weights
from dynid.robot import load_robot
from dynid.simulate.twin import SensorModel, simulate_open_loop


def _spiked(rng, y, fraction=0.05, low=20.0, high=60.0):
    """``y`` with ``fraction`` of its entries hit by spikes of ``low``-``high`` (either sign)."""
    out = y.copy()
    mask = rng.random(y.shape) < fraction
    out[mask] += rng.choice([-1.0, 1.0], mask.sum()) * rng.uniform(low, high, mask.sum())
    return out, mask


def _blocks(rng, n_samples=3000, n=3, p=6, sigma=0.1):
    w = rng.standard_normal((n_samples, n, p)) * np.logspace(0, 1, p)
    truth = rng.standard_normal(p)
    return w, truth, w @ truth + sigma * rng.standard_normal((n_samples, n))


@pytest.mark.parametrize("loss", ["huber", "tukey"])
def test_irls_is_ols_on_gaussian_noise(rng, loss):
    w, truth, y = _blocks(rng)
    ols, irls = OLS().fit(w, y), IRLS(loss=loss).fit(w, y)
    assert irls.converged_
    # both within noise of the truth, and of each other (95 % efficiency: a fraction of std)
    assert np.all(np.abs(irls.coef_ - truth) < 5 * ols.std_)
    assert np.all(np.abs(irls.coef_ - ols.coef_) < 0.5 * ols.std_)
    assert_close(irls.scale_, np.full(3, 0.1), rtol=0.1)
    assert irls.mean_weight_.min() > 0.9


def test_irls_beats_ols_with_five_percent_spikes(rng):
    w, truth, clean = _blocks(rng)
    y, _ = _spiked(rng, clean)
    ols = np.linalg.norm(OLS().fit(w, y).coef_ - truth)
    for loss in ("huber", "tukey"):
        fit = IRLS(loss=loss).fit(w, y)
        error = np.linalg.norm(fit.coef_ - truth)
        assert error < 0.1 * ols, (loss, error, ols)
        assert error < 3 * np.linalg.norm(OLS().fit(w, clean).coef_ - truth) + 1e-3


def test_tukey_rejects_what_huber_only_down_weights(rng):
    w, _, clean = _blocks(rng)
    y, mask = _spiked(rng, clean)
    spikes = mask.ravel()
    huber, tukey = IRLS(loss="huber").fit(w, y), IRLS(loss="tukey").fit(w, y)
    assert np.all(tukey.weights_[spikes] == 0)
    assert_close(tukey.rejected_, mask.sum(axis=0), rtol=0, atol=0)
    assert np.all(huber.weights_[spikes] > 0) and np.all(huber.weights_[spikes] < 0.1)
    assert np.all(huber.rejected_ == 0)
    # the weights are the losses' psi(u) / u, worked by hand: Huber min(1, c / |u|), Tukey
    # (1 - (u / c)^2)^2 inside c and 0 beyond
    u = np.array([0.0, 1.0, 2.0, -3.0, 5.0])
    assert_close(robust_weights(u, "huber", 1.345), [1.0, 1.0, 0.6725, 0.4483333, 0.269],
                 rtol=1e-6)
    assert_close(robust_weights(u, "tukey", 4.685), [1.0, 0.9109563, 0.6687334, 0.3480560, 0.0],
                 rtol=1e-6, atol=0)


def test_tls_is_the_svd_of_the_stacked_data(rng):
    w, _, y = _blocks(rng, n_samples=500)
    flat, target = w.reshape(-1, w.shape[-1]), y.ravel()
    _, _, vt = np.linalg.svd(np.column_stack([flat, target]), full_matrices=False)
    expected = -vt[-1, :-1] / vt[-1, -1]
    assert_close(TLS().fit(w, y).coef_, expected, rtol=1e-9)
    assert_close(TLS().fit(flat, target).coef_, expected, rtol=1e-9)


def _errors_in_variables(rng, sigma, m=20000, p=4):
    truth = np.array([1.0, -2.0, 0.5, 1.5])[:p]
    clean = rng.standard_normal((m, p))
    w = clean + sigma[:p] * rng.standard_normal((m, p))
    y = clean @ truth + sigma[p] * rng.standard_normal(m)
    return w, y, truth


def test_tls_is_less_biased_than_ols_when_the_regressor_is_noisy(rng):
    # one noise level on every entry of [W tau]: OLS shrinks by 1 / (1 + 0.4^2), TLS does not
    w, y, truth = _errors_in_variables(rng, np.full(5, 0.4))
    ols, tls = OLS().fit(w, y), TLS().fit(w, y)
    ols_bias, tls_bias = np.linalg.norm(ols.coef_ - truth), np.linalg.norm(tls.coef_ - truth)
    assert_close(ols.coef_, truth / (1 + 0.4**2), rtol=0.05)  # the attenuation, as expected
    assert tls_bias < 0.1 * ols_bias
    assert np.all(np.abs(tls.coef_ - truth) < 5 * tls.std_)


def test_ml_is_tls_on_columns_scaled_by_their_noise(rng):
    """ML with noise s_k on column k and t on the torque = TLS on [W / s, tau / t], rescaled
    (the scaled problem has one noise level: Gleser 1981)."""
    sigma = np.array([0.1, 0.5, 0.2, 0.3, 0.4])
    w, y, truth = _errors_in_variables(rng, sigma)
    ml = ML(regressor_noise=sigma[:4], torque_noise=sigma[4]).fit(w, y)
    scaled = TLS().fit(w / sigma[:4], y / sigma[4]).coef_
    assert_close(ml.coef_, sigma[4] * scaled / sigma[:4], rtol=1e-8)
    # and unlike OLS and plain TLS, it is unbiased here
    for other in (OLS().fit(w, y), TLS().fit(w, y)):
        assert np.linalg.norm(ml.coef_ - truth) < 0.3 * np.linalg.norm(other.coef_ - truth)
    assert np.all(np.abs(ml.coef_ - truth) < 5 * ml.std_)
    # a full covariance gives the same as its diagonal
    full = ML(regressor_noise=np.diag(sigma[:4] ** 2), torque_noise=sigma[4]).fit(w, y)
    assert_close(full.coef_, ml.coef_, rtol=1e-10)


@pytest.fixture(scope="module")
def arm3_log():
    truth = load_robot("arm3")
    log = simulate_open_loop(truth, random_fourier(truth, seed=3), duration=22.5, rate=200.0,
                             sensor=SensorModel(torque_noise_std=0.02), seed=1)
    return truth, log  # 4501 samples: more than one chunk of the fold (4096)


def test_identify_with_irls_on_a_long_log_is_the_fit_in_memory(arm3_log):
    truth, log = arm3_log
    rng = np.random.default_rng(7)
    spiked, _ = _spiked(rng, np.asarray(log.tau), low=2.0, high=5.0)
    data = dataclasses.replace(log, tau=spiked)
    for loss in ("huber", "tukey"):
        model = identify(truth, data, estimator=IRLS(loss=loss))
        regressor = model.base_regressor(data.q, data.dq, data.ddq)
        memory = IRLS(loss=loss).fit(regressor, spiked)
        assert_close(model.coefficients, memory.coef_, rtol=1e-7, atol=1e-9)
        assert model.report["method"] == f"irls-{loss}"
        assert model.report["converged"] and len(model.report["scale"]) == 3
        assert_close(model.std, memory.std_, rtol=1e-6, atol=1e-12)
    # and the spikes hurt OLS, not IRLS: closer to the clean log's OLS fit
    clean = identify(truth, log).coefficients
    ols = identify(truth, data).coefficients
    robust = identify(truth, data, estimator=IRLS(loss="tukey")).coefficients
    assert np.linalg.norm(robust - clean) < 0.2 * np.linalg.norm(ols - clean)


def test_identify_with_tls_and_ml_from_the_folded_factor(arm3_log):
    truth, log = arm3_log
    model = identify(truth, log, estimator=TLS())
    regressor = model.base_regressor(log.q, log.dq, log.ddq)
    assert_close(model.coefficients, TLS().fit(regressor, log.tau).coef_, rtol=1e-7,
                 atol=1e-10)
    p = model.coefficients.size
    ml = identify(truth, log, estimator=ML(regressor_noise=np.full(p, 1e-3), torque_noise=1e-3))
    assert_close(ml.coefficients, model.coefficients, rtol=1e-7, atol=1e-10)


def test_methods_follow_the_contract(arm3_log):
    truth, log = arm3_log
    names = {method.name: method for method in METHODS}
    assert set(names) == {"irls-huber", "irls-tukey", "tls", "ml"}
    assert all(m.family == "linear" and not m.consistent for m in METHODS)
    estimate = names["irls-tukey"].fit(Problem(truth, (log,)))
    assert estimate.converged and estimate.iterations >= 1 and estimate.seconds > 0
    with pytest.raises(ValueError, match="regressor_noise"):
        names["ml"].fit(Problem(truth, (log,)))


def test_bad_inputs_name_the_argument(rng):
    w, _, y = _blocks(rng, n_samples=50)
    with pytest.raises(ValueError, match="`loss`"):
        IRLS(loss="cauchy").fit(w, y)
    with pytest.raises(ValueError, match="`tuning`"):
        IRLS(tuning=-1.0).fit(w, y)
    with pytest.raises(ValueError, match="`max_iter`"):
        IRLS(max_iter=0).fit(w, y)
    with pytest.raises(ValueError, match="`tol`"):
        IRLS(tol=2.0).fit(w, y)
    bad = y.copy()
    bad[3, 1] = np.nan
    for estimator in (IRLS(), TLS(), ML(regressor_noise=np.ones(6), torque_noise=1.0)):
        with pytest.raises(ValueError, match="`torque`"):
            estimator.fit(w, bad)
    with pytest.raises(ValueError, match="`regressor_noise`"):
        ML(regressor_noise=np.ones(4), torque_noise=1.0).fit(w, y)
    with pytest.raises(ValueError, match="`regressor_noise`"):
        ML(regressor_noise=-np.ones(6), torque_noise=1.0).fit(w, y)
    with pytest.raises(ValueError, match="`torque_noise`"):
        ML(regressor_noise=np.ones(6), torque_noise=0.0).fit(w, y)
    with pytest.raises(ValueError, match="`refold`"):
        from dynid.identification._stream import from_arrays

        IRLS().fit_factors(from_arrays(w, y))


def test_identify_with_irls_on_two_logs_with_their_own_offsets(arm3_log):
    truth, log = arm3_log
    other = simulate_open_loop(truth, random_fourier(truth, seed=4), duration=5.0, rate=200.0,
                               sensor=SensorModel(torque_noise_std=0.02), seed=2)
    shifted = dataclasses.replace(other, tau=np.asarray(other.tau) + np.array([0.3, -0.2, 0.1]))
    friction = ViscousCoulomb(np.zeros(3), np.zeros(3), np.zeros(3))  # with an offset term
    model = identify(truth, [log, shifted], friction=friction, estimator=IRLS(loss="huber"))
    ols = identify(truth, [log, shifted], friction=friction)
    assert model.report["converged"] and len(model.report["log_offsets"]) == 2
    # the second log's offsets exceed the first's by the shift, as OLS finds them
    for fit in (model, ols):
        first, second = fit.report["log_offsets"]
        shift = np.subtract(second["offsets"], first["offsets"])
        assert np.all(np.abs(shift - [0.3, -0.2, 0.1]) < 0.02), shift
