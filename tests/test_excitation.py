"""Fourier trajectories: analytic derivatives, limits respected."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close

from dynid.excitation import random_fourier
from dynid.robot import load_robot
from dynid.trajectory import FourierTrajectory


def test_derivatives_are_consistent(rng):
    traj = FourierTrajectory(rng.standard_normal((3, 4)), rng.standard_normal((3, 4)),
                             rng.standard_normal(3), 0.15 * np.pi)
    t = np.linspace(0.0, 5.0, 20001)
    q, dq, ddq = traj.sample(t)
    h = t[1] - t[0]
    assert_close(np.gradient(q, h, axis=0)[1:-1], dq[1:-1], rtol=0, atol=1e-6)
    assert_close(np.gradient(dq, h, axis=0)[1:-1], ddq[1:-1], rtol=0, atol=1e-5)
    assert_close(traj.sample(t[:3] + traj.period)[0], q[:3], atol=1e-12)  # periodic


@pytest.mark.parametrize("name", ["panda", "arm3", "jaco2"])
def test_random_fourier_stays_inside_the_limits(name):
    robot = load_robot(name)
    traj = random_fourier(robot, seed=3, margin=0.9)
    q, dq, ddq = traj.sample(np.linspace(0, traj.period, 200_001))  # finer than the design grid
    limits = robot.limits
    centre, half = (limits.upper + limits.lower) / 2, (limits.upper - limits.lower) / 2
    assert (np.abs(q - centre) <= 0.9 * half + 1e-9).all()
    assert (np.abs(dq) <= 0.9 * limits.velocity + 1e-9).all()
    assert (np.abs(ddq) <= 0.9 * limits.acceleration + 1e-9).all()
    assert_close(random_fourier(robot, seed=3).a, traj.a, rtol=0, atol=0)  # deterministic


def test_many_harmonics_stay_inside_the_limits():
    robot = load_robot("arm3")
    traj = random_fourier(robot, harmonics=200, seed=1)  # 200 harmonics: a 12 800-point grid
    _, dq, _ = traj.sample(np.linspace(0, traj.period, 50_001))
    assert (np.abs(dq) <= 0.9 * robot.limits.velocity + 1e-9).all()


def test_bad_inputs():
    with pytest.raises(ValueError, match="`omega_f` must be > 0"):
        FourierTrajectory(np.ones((2, 1)), np.ones((2, 1)), np.zeros(2), -1.0)
    with pytest.raises(ValueError, match="`a` and `b` must both be"):
        FourierTrajectory(np.ones((2, 1)), np.ones((3, 1)), np.zeros(2), 1.0)
    traj = FourierTrajectory(np.ones((2, 1)), np.ones((2, 1)), np.zeros(2), 1.0)
    with pytest.raises(ValueError, match="`t` must be strictly increasing"):
        traj.sample([0.0, 0.2, 0.1])
    with pytest.raises(ValueError, match="`harmonics` must be >= 1"):
        random_fourier(load_robot("arm3"), harmonics=0)
