"""Ridge and elastic net against their closed forms and an independent convex solver (cvxpy);
from logs through ``identify`` like in memory; bad input."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from conftest import assert_close

from dynid.excitation.optimize import random_fourier
from dynid.identification.estimate import Problem
from dynid.identification.linear.estimators import OLS
from dynid.identification.linear.idim import identify
from dynid.identification.linear.regularised import METHODS, ElasticNet, Ridge
from dynid.robot import load_robot
from dynid.simulate.twin import SensorModel, simulate_open_loop


def _data(rng, n_samples=200, n=3, p=8):
    w = rng.standard_normal((n_samples, n, p)) * np.logspace(0, 1, p)
    truth = rng.standard_normal(p) * (rng.random(p) < 0.5)  # about half of them zero
    return w, truth, w @ truth + 0.5 * rng.standard_normal((n_samples, n))


def _cvxpy(w, y, alpha, l1_ratio):
    x = cp.Variable(w.shape[1])
    objective = (0.5 * cp.sum_squares(w @ x - y) + alpha * l1_ratio * cp.norm1(x)
                 + 0.5 * alpha * (1 - l1_ratio) * cp.sum_squares(x))
    cp.Problem(cp.Minimize(objective)).solve(solver=cp.CLARABEL, tol_gap_abs=1e-12,
                                            tol_gap_rel=1e-12, tol_feas=1e-12)
    return x.value


@pytest.mark.parametrize("alpha", [0.0, 3.0, 1e4])
def test_ridge_is_the_closed_form(rng, alpha):
    w, _, y = _data(rng)
    flat, target = w.reshape(-1, w.shape[-1]), y.ravel()
    expected = np.linalg.solve(flat.T @ flat + alpha * np.eye(flat.shape[1]), flat.T @ target)
    for fit in (Ridge(alpha=alpha).fit(w, y), Ridge(alpha=alpha).fit(flat, target)):
        assert_close(fit.coef_, expected, rtol=1e-9, atol=1e-12)
        assert_close(fit.residuals_, target - flat @ expected, rtol=1e-8, atol=1e-10)
    if alpha == 0:
        assert_close(Ridge(alpha=0.0).fit(w, y).std_, OLS().fit(w, y).std_, rtol=1e-8)
    else:  # shrinks
        assert np.linalg.norm(Ridge(alpha=alpha).fit(w, y).coef_) < \
            np.linalg.norm(OLS().fit(w, y).coef_)


@pytest.mark.parametrize("alpha", [1.0, 30.0, 300.0])
def test_elastic_net_at_its_ends_is_the_lasso_and_ridge(rng, alpha):
    w, _, y = _data(rng)
    flat, target = w.reshape(-1, w.shape[-1]), y.ravel()
    lasso = ElasticNet(alpha=alpha, l1_ratio=1.0).fit(w, y)
    assert lasso.converged_
    assert_close(lasso.coef_, _cvxpy(flat, target, alpha, 1.0), rtol=1e-6, atol=1e-7)
    assert_close(ElasticNet(alpha=alpha, l1_ratio=0.0).fit(w, y).coef_,
                 Ridge(alpha=alpha).fit(w, y).coef_, rtol=1e-10, atol=1e-14)
    middle = ElasticNet(alpha=alpha, l1_ratio=0.3).fit(w, y)
    assert_close(middle.coef_, _cvxpy(flat, target, alpha, 0.3), rtol=1e-6, atol=1e-7)


def test_the_lasso_sets_coefficients_to_zero_and_reports_them(rng):
    w, _, y = _data(rng)
    flat, target = w.reshape(-1, w.shape[-1]), y.ravel()
    alpha = 0.3 * np.abs(flat.T @ target).max()  # above it, every coefficient is zero
    fit = ElasticNet(alpha=alpha, l1_ratio=1.0).fit(w, y)
    zero = fit.coef_ == 0
    assert zero.any() and not zero.all()
    assert np.all(fit.std_[zero] == 0) and np.all(np.isinf(fit.relative_std_percent_[zero]))
    assert_close(np.sort(fit.active_), np.flatnonzero(~zero), rtol=0, atol=0)
    # the optimality conditions hold: |W_j^T r| <= alpha where zero, = alpha sign(x) elsewhere
    gradient = flat.T @ (target - flat @ fit.coef_)
    assert np.all(np.abs(gradient[zero]) <= alpha * (1 + 1e-8))
    assert_close(gradient[~zero], alpha * np.sign(fit.coef_[~zero]), rtol=1e-8)
    assert np.all(ElasticNet(alpha=1.01 * alpha / 0.3, l1_ratio=1.0).fit(w, y).coef_ == 0)


@pytest.fixture(scope="module")
def arm3_log():
    truth = load_robot("arm3")
    log = simulate_open_loop(truth, random_fourier(truth, seed=3), duration=10.0, rate=200.0,
                             sensor=SensorModel(torque_noise_std=0.05), seed=1)
    return truth, log


def test_identify_with_ridge_and_elastic_net_is_the_fit_in_memory(arm3_log):
    truth, log = arm3_log
    for estimator, again in ((Ridge(alpha=2.0), Ridge(alpha=2.0)),
                             (ElasticNet(alpha=2.0, l1_ratio=0.5),
                              ElasticNet(alpha=2.0, l1_ratio=0.5))):
        model = identify(truth, log, estimator=estimator)
        memory = again.fit(model.base_regressor(log.q, log.dq, log.ddq), log.tau)
        assert_close(model.coefficients, memory.coef_, rtol=1e-7, atol=1e-9)
        assert model.report["method"] == estimator.name and model.report["alpha"] == 2.0


def test_methods_follow_the_contract(arm3_log):
    truth, log = arm3_log
    names = {method.name: method for method in METHODS}
    assert set(names) == {"ridge", "elastic-net"}
    assert all(m.family == "linear" and not m.consistent for m in METHODS)
    estimate = names["elastic-net"].fit(Problem(truth, (log,)), alpha=5.0, l1_ratio=1.0)
    assert estimate.converged and estimate.details["l1_ratio"] == 1.0


def test_bad_inputs_name_the_argument(rng):
    w, _, y = _data(rng, n_samples=20)
    for alpha in (-1.0, np.nan, np.inf, "1"):
        with pytest.raises(ValueError, match="`alpha`"):
            Ridge(alpha=alpha).fit(w, y)
    for l1_ratio in (-0.1, 1.5, np.nan):
        with pytest.raises(ValueError, match="`l1_ratio`"):
            ElasticNet(alpha=1.0, l1_ratio=l1_ratio).fit(w, y)
    bad = w.copy()
    bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="`regressor`"):
        Ridge().fit(bad, y)


def test_elastic_net_is_exact_on_an_ill_conditioned_regressor(rng):
    """Condition number 1e4 (Gram 1e8), where coordinate descent crawls: the feature-sign
    search ends at the optimum, no worse than an interior-point solve of the same objective."""
    m, p = 2000, 40
    u, _ = np.linalg.qr(rng.standard_normal((m, p)))
    v, _ = np.linalg.qr(rng.standard_normal((p, p)))
    w = 100 * u @ np.diag(np.logspace(0, -4, p)) @ v.T
    y = w @ rng.standard_normal(p) + 0.01 * rng.standard_normal(m)
    for alpha in (1e-4, 1e-2, 1.0):
        fit = ElasticNet(alpha=alpha, l1_ratio=0.5).fit(w, y)
        assert fit.converged_ and fit.n_iter_ < 20 * p + 100

        def objective(x, alpha=alpha):
            return 0.5 * np.sum((w @ x - y) ** 2) + alpha * (0.5 * np.abs(x).sum()
                                                             + 0.25 * x @ x)

        assert objective(fit.coef_) <= objective(_cvxpy(w, y, alpha, 0.5)) * (1 + 1e-9)


def test_penalised_fits_take_data_that_leave_parameters_unexcited():
    """Ridge and the elastic net are what a user reaches for when the log does not excite
    everything: with alpha > 0 the penalty determines what the data do not, so a log whose last
    joint never moves is fitted (a warning and the report name what the penalty alone set),
    where OLS — and ridge with alpha 0 — refuse it, naming the same parameters."""
    from dynid.excitation.trajectory import FourierTrajectory
    from dynid.identification.linear.estimators import RankDeficiencyWarning

    robot = load_robot("panda")
    moving = random_fourier(robot, seed=1)
    a, b = moving.a.copy(), moving.b.copy()
    a[6], b[6] = 0.0, 0.0  # joint 7 never moves
    still = FourierTrajectory(a, b, moving.q0, moving.omega_f)
    data = simulate_open_loop(robot, still, duration=14.0, rate=100.0,
                              sensor=SensorModel(torque_noise_std=0.05), seed=0)
    for refused in (None, Ridge(alpha=0.0)):
        with pytest.raises(ValueError, match=r"determine only \d+ of \d+ .*not excited: .*fv7"):
            identify(robot, data, estimator=refused)
    for estimator in (Ridge(alpha=1e-3), ElasticNet(alpha=1e-3, l1_ratio=0.5)):
        with pytest.warns(RankDeficiencyWarning, match=r"not excited: .*fv7.*penalty alone"):
            model = identify(robot, data, estimator=estimator)
        assert "fv7" in model.report["undetermined"]
        k = model.base.base_names.index("fv7")
        assert abs(model.coefficients[k]) < 1e-6  # the penalty's value: zero
        assert model.report["relative_error_percent"] < 2.0
