"""IDIM-IV under any ``dynid.simulate.Controller`` (``identify_iv(controller=...)``): the
instruments are the regressor of the model's closed loop simulated under the law that ran
(a pure PD impedance included), at the law's rate, taken at the log's samples."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dynid.data.preprocess import lowpass, prepare
from dynid.excitation.optimize import random_fourier
from dynid.friction.models import ViscousCoulomb
from dynid.identification.linear.idim import IVConvergenceWarning, identify, identify_iv
from dynid.robot import load_robot
from dynid.simulate import Controller, SensorModel, simulate_closed_loop


@pytest.fixture(scope="module")
def pd_log():
    """arm3 under a pure PD loop at 1 kHz, encoders of 1e-3 rad and torque noise; the log
    filtered and decimated to 100 Hz, as an inverse-model method reads it."""
    robot = load_robot("arm3").with_friction(
        ViscousCoulomb(np.full(3, 0.1), np.full(3, 0.2), np.zeros(3)))
    reference = random_fourier(robot, seed=3)
    law = Controller.impedance([300.0] * 3, [20.0] * 3)
    log = simulate_closed_loop(robot, reference, duration=5.0, controller=law, seed=1,
                               sensor=SensorModel(torque_noise_std=0.1,
                                                  position_resolution=1e-3,
                                                  velocity_from_positions=True))
    # decimated: the torques are low-passed too before every 10th sample is kept (prepare
    # leaves them unfiltered; a decimation without it would alias their noise)
    ready = prepare(lowpass(log, 10.0, fields=("tau",)), cutoff=10.0)
    return robot, reference, law, ready.select(np.arange(0, ready.n_samples, 10))


def _error(model, robot):
    full = np.concatenate([robot.parameters.ravel(), robot.friction.coefficients])
    true = model.base.base(full)
    return float(np.linalg.norm(model.coefficients - true) / np.linalg.norm(true))


def test_iv_under_a_pd_loop_beats_ols_on_quantised_positions(pd_log):
    robot, reference, law, log = pd_log
    ols = identify(robot, log)
    iv = identify_iv(robot, log, reference, controller=law, iterations=3)
    # measured: OLS 10.1 %, IV 6.0 % (2 iterations)
    assert _error(iv, robot) < 0.75 * _error(ols, robot)
    assert iv.report["first_instruments"] == "nominal"  # OLS here is no plant


def test_iv_takes_one_controller_per_log_and_checks_the_rates(pd_log):
    robot, reference, law, log = pd_log
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IVConvergenceWarning)  # a few iterations only
        one = identify_iv(robot, log, reference, controller=law, iterations=1)
        listed = identify_iv(robot, [log], [reference], controller=[law], iterations=1)
    assert np.array_equal(one.coefficients, listed.coefficients)
    with pytest.raises(ValueError, match="`natural_frequency`"):
        identify_iv(robot, log, reference, controller=law, natural_frequency=10.0)
    slow = Controller.impedance([300.0] * 3, [20.0] * 3, rate=150.0)  # 10 ms: 1.5 periods
    with pytest.raises(ValueError, match="whole number of the controller's periods"):
        identify_iv(robot, log, reference, controller=slow)
    with pytest.raises(TypeError, match="`controller`"):
        identify_iv(robot, log, reference, controller="pd")


def test_iv_with_a_computed_torque_controller_is_the_shorthand():
    """A computed-torque Controller at the log's rate gives the shorthand's estimate."""
    robot = load_robot("arm3").with_friction(
        ViscousCoulomb(np.full(3, 0.5), np.full(3, 1.0), np.zeros(3)))
    reference = random_fourier(robot, seed=3)
    data = simulate_closed_loop(robot, reference, duration=8.0, rate=200.0,
                                natural_frequency=10.0, seed=1,
                                sensor=SensorModel(torque_noise_std=0.2))
    ready = prepare(data, cutoff=5.0)
    law = Controller.computed_torque(robot, 10.0, rate=200.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IVConvergenceWarning)  # a few iterations only
        shorthand = identify_iv(robot, ready, reference, natural_frequency=10.0, iterations=2)
        given = identify_iv(robot, ready, reference, controller=law, iterations=2)
    np.testing.assert_allclose(given.coefficients, shorthand.coefficients, rtol=1e-12,
                               atol=1e-12)


def test_iv_runs_on_the_tx40_protocol_under_its_pd_loop():
    """The benchmark's TX40 problem: the PD loop at 1 kHz (``runner._controller``), the log
    filtered and decimated to 100 Hz (10 control periods per sample). At sigma_q 1e-2 deg the
    OLS estimate is no plant: IV's first instruments come from the nominal parameters, so the
    runner fits IV once per draw (``START_DEPENDENT_METHODS``)."""
    from dynid.benchmark import protocol
    from dynid.benchmark import runner as runner_module
    from dynid.identification.methods import IDENTIFICATION_METHODS

    truth = load_robot("tx40")
    run = protocol.experiment(truth, duration=10.0)
    law = runner_module._controller(run)
    start = protocol.draw_starts(truth, 1, seed=0)[0]
    robot = protocol.nominal_robot(run.truth, start)
    log = protocol.noisy_log(run, protocol.profile("highPositionNoise"))
    assert round(law.rate * (log.t[1] - log.t[0])) == 10
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IVConvergenceWarning)  # a few iterations only
        iv = identify_iv(robot, log, run.trajectory, controller=law, friction=run.friction)
    assert np.isfinite(iv.coefficients).all() and iv.report["iterations"] >= 1
    # position noise in the regressor: IV well below OLS on the protocol's 10 s log (8 draws:
    # median 5.1 % against 22 %); not on every log: a 3 s one gives OLS 2 %, IV 16 %
    from dynid.identification.estimate import Estimate

    ols = identify(robot, log, friction=run.friction)
    errors = [runner_module.score(Estimate(m.report["method"], m, 0.0, True, ""), run.truth,
                                  run.validation)["parameter_error"] for m in (iv, ols)]
    assert errors[0] < 0.5 * errors[1], errors
    assert iv.report["first_instruments"] == "nominal"
    assert runner_module.skip_reason(IDENTIFICATION_METHODS["iv"], run.gains) is None
    assert not runner_module.start_free(IDENTIFICATION_METHODS["iv"])
    assert runner_module.start_free(IDENTIFICATION_METHODS["ols"])
