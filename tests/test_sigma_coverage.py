"""Each estimator's σ against its own error on its twin (a known truth, the noise the estimator
is built for, several noise seeds): a σ whose model says ``std_kind`` "covariance" covers —
the standardised errors ``z = (estimate - truth) / σ`` have an RMS near 1, about 95 % lie
within 2, none beyond 5 — and one that does not cover says "lower bound"
(``docs/workflow/estimators.md`` has the table for every method; ``test_bootstrap.py`` the
bootstrap's)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dynid.excitation.optimize import random_fourier
from dynid.friction.models import ViscousCoulomb
from dynid.identification.linear.estimators import OLS, WLS
from dynid.identification.linear.idim import identify, identify_iv
from dynid.identification.linear.regularised import Ridge
from dynid.identification.linear.robust import IRLS, ML, TLS
from dynid.robot import load_robot
from dynid.simulate import Controller
from dynid.simulate.twin import simulate_closed_loop, simulate_open_loop

SEEDS = range(8)


@pytest.fixture(scope="module")
def twin():
    """arm3 with its own arctan friction (Szabó 2021's arm), 10 s at 200 Hz of a random
    Fourier excitation: the exact log, its base regressor ``(N, 3, 24)`` and the truth."""
    robot = load_robot("arm3")
    log = simulate_open_loop(robot, random_fourier(robot, seed=3), duration=10.0, rate=200.0)
    model = identify(robot, log)
    truth = model.base.base(np.concatenate([robot.parameters.ravel(),
                                            robot.friction.coefficients]))
    return robot, log, model.base_regressor(log.q, log.dq, log.ddq), truth


def _figures(z: np.ndarray) -> dict:
    return {"rms": float(np.sqrt(np.mean(z**2))), "within_2": float(np.mean(np.abs(z) < 2)),
            "max": float(np.abs(z).max())}


def assert_covers(z: np.ndarray) -> None:
    """z's RMS in [0.6, 1.6], at least 85 % within 2 (95 % expected: 8 seeds of 24 coefficients,
    correlated, leave a few percent either way), none beyond 5."""
    figures = _figures(np.ravel(z))
    assert 0.6 <= figures["rms"] <= 1.6 and figures["within_2"] >= 0.85 \
        and figures["max"] < 5, figures


def _fits(twin, estimator, noise) -> np.ndarray:
    """z over SEEDS: ``identify`` on the twin's log with Gaussian torque noise ``noise``
    (scalar or per joint); every model's std says "covariance"."""
    robot, log, _, truth = twin
    out = []
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        tau = log.tau + np.asarray(noise) * rng.standard_normal(log.tau.shape)
        model = identify(robot, dataclasses.replace(log, tau=tau), estimator=estimator)
        assert model.std_kind == "covariance"
        out.append((model.coefficients - truth) / model.std)
    return np.array(out)


def test_ols_and_wls_cover_on_white_torque_noise(twin):
    assert_covers(_fits(twin, OLS(), 0.3))
    assert_covers(_fits(twin, WLS(), [0.5, 0.3, 0.1]))  # one noise level per joint


def test_tls_covers_when_only_the_torques_are_noisy(twin):
    """Issue 31's defect: with exact regressor columns TLS's correction of OLS for the
    regressor noise it assumes is a bias that no covariance holds (Gleser's first-order σ left
    4 to 6 of 24 coefficients beyond 5σ, ``tau_s3`` 2.095 for 2.0 at σ 0.013): its σ holds
    that correction too."""
    assert_covers(_fits(twin, TLS(), 0.02))


def test_iv_covers_on_a_closed_loop_log():
    """IDIM-IV on arm3 (viscous + Coulomb friction) under a PD loop, white torque noise, the
    accelerations exact (a filtered, differentiated log's residuals are coloured: there every
    formula σ, OLS's and IV's alike, is optimistic by the filter's correlation time — the
    bootstrap's case)."""
    robot = load_robot("arm3").with_friction(
        ViscousCoulomb(np.full(3, 0.1), np.full(3, 0.2), np.zeros(3)))
    reference = random_fourier(robot, seed=3)
    controller = Controller.impedance([300.0] * 3, [20.0] * 3)
    log = simulate_closed_loop(robot, reference, duration=5.0, controller=controller)
    truth = None
    out = []
    for seed in range(5):
        rng = np.random.default_rng(seed)
        data = dataclasses.replace(log, tau=log.tau + 0.1 * rng.standard_normal(log.tau.shape))
        model = identify_iv(robot, data, reference, controller=controller)
        assert model.std_kind == "covariance"
        if truth is None:
            truth = model.base.base(np.concatenate([robot.parameters.ravel(),
                                                    robot.friction.coefficients]))
        out.append((model.coefficients - truth) / model.std)
    assert_covers(np.array(out))


def _errors_in_variables(twin, regressor_noise, torque_noise, fit) -> np.ndarray:
    """z over SEEDS with Gaussian noise on every entry of the twin's regressor (std
    ``regressor_noise`` per column) and on its torques."""
    _, _, w, truth = twin
    out = []
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        noisy = w + regressor_noise * rng.standard_normal(w.shape)
        estimate = fit().fit(noisy, w @ truth + torque_noise * rng.standard_normal(w.shape[:2]))
        out.append((estimate.coef_ - truth) / estimate.std_)
    return np.array(out)


def test_tls_and_ml_cover_with_noise_in_every_column(twin):
    """The noise they are built for, as large as 10 % of a regressor column: there Gleser's
    first-order covariance alone is too small (TLS's z RMS 1.6, ML's 1.3); the second-order
    term makes up for it."""
    _, _, w, _ = twin
    assert_covers(_errors_in_variables(twin, 0.1, 0.1, TLS))
    columns = 0.1 * np.sqrt(np.mean(w**2, axis=(0, 1)))  # 10 % of each column's RMS
    assert_covers(_errors_in_variables(
        twin, columns, 0.1, lambda: ML(regressor_noise=columns, torque_noise=0.1)))


def test_penalised_and_robust_fits_say_lower_bound(twin):
    """Ridge's sandwich leaves out its shrinkage: with a penalty that matters, coefficients
    lie far beyond it; IRLS's is its last weighted step's, not Huber's sandwich."""
    robot, log, _, truth = twin
    rng = np.random.default_rng(0)
    data = dataclasses.replace(log, tau=log.tau + 0.3 * rng.standard_normal(log.tau.shape))
    ridge = identify(robot, data, estimator=Ridge(alpha=10.0))
    assert ridge.std_kind == "lower bound"
    assert np.abs((ridge.coefficients - truth) / ridge.std).max() > 5
    assert identify(robot, data, estimator=IRLS(loss="huber")).std_kind == "lower bound"
