"""The first identification path: twin data with known truth, recovered by OLS."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close

from dynid.data import Dataset
from dynid.excitation import random_fourier
from dynid.friction import NoFriction, ViscousCoulomb
from dynid.identify import identify
from dynid.robot import load_robot
from dynid.simulate import simulate_open_loop


@pytest.fixture(scope="module")
def panda_linear_truth():
    """The Panda with linear friction of Gaz Table III's magnitude (known truth)."""
    friction = ViscousCoulomb(fv=np.full(7, 0.1), fc=np.full(7, 0.2), fo=np.full(7, -0.05))
    return load_robot("panda").with_friction(friction)


def test_noise_free_data_gives_the_true_base_parameters(panda_linear_truth):
    robot = panda_linear_truth
    data = simulate_open_loop(robot, random_fourier(robot, seed=1), duration=15.0, rate=200.0)
    model = identify(robot, data)
    truth = np.concatenate([robot.parameters.ravel(), robot.friction.coefficients])
    assert model.base.rank == 43 + 21
    assert_close(model.coefficients, model.base.base(truth), rtol=1e-6, atol=1e-8)
    assert model.report["relative_error_percent"] < 1e-8


def test_noisy_data_is_unbiased_and_predicts_new_motion(panda_linear_truth):
    robot = panda_linear_truth
    sigma = 0.1
    fit_data = simulate_open_loop(robot, random_fourier(robot, seed=2), duration=20.0,
                                  rate=500.0, noise_std=sigma, seed=7)
    check = simulate_open_loop(robot, random_fourier(robot, seed=3), duration=10.0,
                               rate=500.0, noise_std=sigma, seed=8)
    model = identify(robot, fit_data)
    truth = model.base.base(np.concatenate([robot.parameters.ravel(),
                                            robot.friction.coefficients]))
    z = (model.coefficients - truth) / model.std
    assert np.abs(z).max() < 5.0  # every coefficient within 5 standard deviations
    residual = check.tau - model.predict(check.q, check.dq, check.ddq)
    assert abs(np.sqrt(np.mean(residual**2)) - sigma) < 0.02


def test_rigid_body_only_and_bad_inputs(panda_linear_truth):
    robot = load_robot("arm3").with_friction(NoFriction(3))
    data = simulate_open_loop(robot, random_fourier(robot, seed=0), duration=5.0, rate=200.0)
    model = identify(robot, data, friction=NoFriction(3))
    assert model.base.rank == 15
    assert_close(model.predict(data.q, data.dq, data.ddq), data.tau, rtol=1e-8, atol=1e-8)
    no_acceleration = Dataset(t=data.t, q=data.q, dq=data.dq, tau=data.tau)
    with pytest.raises(ValueError, match="no accelerations"):
        identify(robot, no_acceleration)
    with pytest.raises(ValueError, match="`data` has 3 joints, `robot` 7"):
        identify(panda_linear_truth, data)
    with pytest.raises(ValueError, match="`friction` must be linear"):
        identify(robot, data, friction=load_robot("panda").friction)
