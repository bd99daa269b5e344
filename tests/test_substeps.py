"""The closed loop's RK4 steps per period, chosen from the truth's fastest dynamics
(``dynid.simulate._substeps``)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dynid.cli import main
from dynid.excitation.optimize import random_fourier
from dynid.excitation.trajectory import save_trajectory
from dynid.friction.models import LuGre, Sigmoid, ViscousCoulomb
from dynid.robot import load_robot
from dynid.simulate import simulate_closed_loop
from dynid.simulate._substeps import fastest_rate, rk4_substeps, steepest_friction


def test_steepest_friction_is_the_models_steepest_slope():
    sigmoid = Sigmoid([0.5, 1.2, 0.8], [5.0, 40.0, 10.0], [0.04, -0.02, 0.0])
    robot = load_robot("arm3").with_friction(sigmoid)
    # a logistic's slope peaks at a quarter of its gain, at dq = -phi3 (within the range)
    expected = sigmoid.phi1 * sigmoid.phi2 / 4
    assert np.allclose(steepest_friction(robot, np.full(3, 2.0)), expected, rtol=1e-4)
    # the Coulomb jump at 0 is a discontinuity, not a slope: only the viscous part counts
    coulomb = load_robot("arm3").with_friction(ViscousCoulomb([0.1, 0.2, 0.3], [5.0] * 3,
                                                              [0.0] * 3))
    assert np.allclose(steepest_friction(coulomb, np.full(3, 2.0)), [0.1, 0.2, 0.3])


def test_the_fastest_rate_covers_a_lugre_bristles_relaxation():
    robot = load_robot("arm3")
    lugre = LuGre(*(np.full(3, value) for value in (1e3, 1.0, 0.1, 0.3, 0.5, 0.05)))
    rng = np.random.default_rng(1)
    q, ddq = rng.uniform(-1, 1, (8, 3)), rng.uniform(-1, 1, (8, 3))
    dq = rng.uniform(-2, 2, (8, 3))
    relaxation = (1e3 * np.abs(dq) / 0.3).max()  # at speed s(dq) = fc: sigma0 |dq| / fc
    rho = fastest_rate(robot.with_friction(lugre), np.arange(8.0), q, dq, ddq)
    assert relaxation <= rho <= 3 * relaxation
    # the rigid arm alone (no friction) is far slower: its gravity modes
    assert fastest_rate(robot.with_friction(None), np.arange(8.0), q, dq, ddq) < 0.01 * rho


def test_the_panda_takes_one_step_per_millisecond():
    robot = load_robot("panda")
    trajectory = random_fourier(robot, seed=0)
    assert rk4_substeps(robot, trajectory, duration=10.0, rate=1000.0, start=0.0) == 1
    assert rk4_substeps(robot, trajectory, duration=10.0, rate=250.0, start=0.0) == 4
    log = simulate_closed_loop(robot, trajectory, duration=0.05,
                               controller=load_robot("panda-cad"))
    assert log.metadata["rk4_substeps"] == 1
    assert simulate_closed_loop(robot, trajectory, duration=0.05,
                                substeps=3).metadata["rk4_substeps"] == 3


def test_the_chosen_substeps_follow_a_stiff_friction_accurately():
    """A steep arctan (slope 126 N m s/rad at rest on a light arm): the chosen substeps agree
    with four times as many to 1e-7 rad; one step per period does not come close."""
    robot = load_robot("arm3")
    trajectory = random_fourier(robot, seed=0)
    options = {"duration": 0.5, "rate": 1000.0}
    chosen = simulate_closed_loop(robot, trajectory, **options)
    substeps = chosen.metadata["rk4_substeps"]
    assert substeps >= 5
    fine = simulate_closed_loop(robot, trajectory, substeps=4 * substeps, **options)
    assert np.abs(chosen.q - fine.q).max() < 1e-7
    assert np.abs(chosen.tau - fine.tau).max() < 1e-4
    try:
        coarse = simulate_closed_loop(robot, trajectory, substeps=1, **options)
    except ValueError as error:  # RK4 beyond its stability limit may diverge outright
        assert "diverged" in str(error)
    else:
        assert np.abs(coarse.q - fine.q).max() > 100 * np.abs(chosen.q - fine.q).max()


def test_substeps_are_checked_and_a_crawl_is_refused():
    robot = load_robot("arm3")
    trajectory = random_fourier(robot, seed=0)
    for bad in (0, 1.5, True, "2"):
        with pytest.raises(ValueError, match="`substeps` must be an integer >= 1 or None"):
            simulate_closed_loop(robot, trajectory, duration=0.1, substeps=bad)
    stiff = robot.with_friction(LuGre(*(np.full(3, value)
                                        for value in (1e7, 1.0, 0.1, 0.3, 0.5, 0.05))))
    with pytest.raises(ValueError, match=r"need \d+ RK4 steps per control period at 1000 Hz "
                                         r"\(at most 1000 are taken automatically\): give "
                                         "`substeps`"):
        simulate_closed_loop(stiff, trajectory, duration=0.1)


def test_simulate_command_takes_and_reports_the_substeps(capsys, tmp_path):
    robot = load_robot("arm3")
    save_trajectory(tmp_path / "traj.csv", random_fourier(robot, seed=6), duration=1.0,
                    rate=1000.0, allow_moving_ends=True)
    common = ["simulate", "arm3", str(tmp_path / "traj.yaml"), "--duration", "0.2",
              "--closed-loop"]
    assert main([*common, "-o", str(tmp_path / "a.npz"), "--substeps", "3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rk4_substeps"] == 3
    assert main([*common, "-o", str(tmp_path / "b.npz")]) == 0
    chosen = rk4_substeps(robot, random_fourier(robot, seed=6), duration=0.2, rate=1000.0,
                          start=0.0)
    assert f"RK4 steps per control period: {chosen}" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_status:
        main([*common, "-o", str(tmp_path / "c.npz"), "--substeps", "0"])
    assert exit_status.value.code == 2
    assert "argument --substeps: expected [1, 10000], got 0" in capsys.readouterr().err
    assert main(["simulate", "arm3", str(tmp_path / "traj.yaml"), "-o", str(tmp_path / "d.npz"),
                 "--substeps", "2"]) == 2
    assert "`--substeps` need --closed-loop" in capsys.readouterr().err
    assert not any((tmp_path / name).exists() for name in ("c.npz", "d.npz"))
