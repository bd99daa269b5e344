"""The control law as a value (``dynid.simulate.Controller``) and the twin that runs it."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close

from dynid.dynamics import rnea
from dynid.excitation.optimize import random_fourier
from dynid.friction.models import ViscousCoulomb
from dynid.robot import load_robot
from dynid.simulate import Controller, SensorModel, simulate_closed_loop


def _arm():
    robot = load_robot("arm3")
    return robot.with_friction(ViscousCoulomb(np.full(3, 0.1), np.full(3, 0.2), np.zeros(3)))


def test_controller_is_the_keywords_bit_for_bit():
    """A Controller runs exactly the loop its shorthand keywords describe."""
    robot = _arm()
    path = random_fourier(robot, seed=3)
    sensor = SensorModel(position_resolution=1e-4, velocity_from_positions=True)
    cases = [({"natural_frequency": 15.0},
              Controller.computed_torque(robot, 15.0, rate=500.0, resolution=1e-4,
                                         velocity_from_positions=True)),
             ({"stiffness": [300.0, 200.0, 100.0], "damping": 10.0},
              Controller.impedance([300.0, 200.0, 100.0], 10.0, model=robot, rate=500.0,
                                   resolution=1e-4, velocity_from_positions=True))]
    for keywords, law in cases:
        by_words = simulate_closed_loop(robot, path, duration=1.0, rate=500.0, sensor=sensor,
                                        **keywords)
        by_value = simulate_closed_loop(robot, path, duration=1.0, controller=law,
                                        sensor=sensor)
        assert np.array_equal(by_words.q, by_value.q)
        assert np.array_equal(by_words.tau, by_value.tau)


def test_pure_pd_loop_has_no_feedforward():
    """Without a model the torque is the PD feedback alone (on the exact state here), and it
    is the truth's dynamics of the logged motion."""
    robot = _arm()
    law = Controller.impedance([300.0, 300.0, 300.0], [20.0, 20.0, 20.0])
    path = random_fourier(robot, seed=3)
    log = simulate_closed_loop(robot, path, duration=1.0, controller=law)
    q_d, dq_d, _ = path.sample(log.t)
    assert_close(log.tau, 300.0 * (q_d - log.q) + 20.0 * (dq_d - log.dq), rtol=1e-12,
                 atol=1e-12)
    assert_close(log.tau, rnea(robot, log.q, log.dq, log.ddq) + robot.friction.torque(log.dq),
                 rtol=1e-9, atol=1e-9)
    assert log.metadata["controller"] == "none (PD)"
    assert "joint impedance" in log.metadata["source"]


def test_controller_rate_and_substeps_are_its_own():
    robot = _arm()
    law = Controller.impedance(300.0, 20.0, rate=250.0, substeps=3)
    log = simulate_closed_loop(robot, random_fourier(robot, seed=3), duration=1.0,
                               controller=law)
    assert log.n_samples == 251 and log.metadata["rk4_substeps"] == 3
    assert law.to_dict()["rate_hz"] == 250.0


@pytest.mark.parametrize(("build", "name"), [
    (lambda r: Controller("pid", r), "law"),
    (lambda r: Controller.computed_torque(None), "model"),
    (lambda r: Controller.computed_torque(r, [10.0, -1.0, 2.0]), "natural_frequency"),
    (lambda r: Controller.computed_torque(r, [10.0, 2.0]), "natural_frequency"),
    (lambda r: Controller.impedance([1.0, np.nan, 1.0], 1.0), "stiffness"),
    (lambda r: Controller.impedance(1.0, 0.0), "damping"),
    (lambda r: Controller("impedance", stiffness=1.0), "damping"),
    (lambda r: Controller("impedance", stiffness=1.0, damping=1.0, natural_frequency=3.0),
     "natural_frequency"),
    (lambda r: Controller.impedance(1.0, 1.0, rate=0.0), "rate"),
    (lambda r: Controller.impedance(1.0, 1.0, substeps=0), "substeps"),
    (lambda r: Controller.impedance(1.0, 1.0, resolution=-1e-3), "resolution"),
    (lambda r: Controller.impedance(1.0, 1.0, velocity_from_positions="yes"),
     "velocity_from_positions"),
])
def test_bad_controllers_name_the_argument(build, name):
    with pytest.raises(ValueError, match=f"`{name}`"):
        build(load_robot("arm3"))


def test_controller_beside_its_keywords_is_refused():
    robot = _arm()
    path = random_fourier(robot, seed=3)
    law = Controller.impedance(300.0, 20.0, rate=500.0)
    with pytest.raises(ValueError, match="`controller` is a Controller: set natural_frequency"):
        simulate_closed_loop(robot, path, duration=0.1, controller=law, natural_frequency=5.0)
    with pytest.raises(ValueError, match="`rate`"):
        simulate_closed_loop(robot, path, duration=0.1, controller=law, rate=1000.0)
    with pytest.raises(ValueError, match="`stiffness`"):  # 2 gains for 3 joints, no model
        simulate_closed_loop(robot, path, duration=0.1,
                             controller=Controller.impedance([1.0, 2.0], 1.0))
    with pytest.raises(ValueError, match="`controller`"):
        simulate_closed_loop(robot, path, duration=0.1,
                             controller=Controller.computed_torque(load_robot("panda")))
    with pytest.raises(TypeError, match="`controller`"):
        simulate_closed_loop(robot, path, duration=0.1, controller="computed torque")
