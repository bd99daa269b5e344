"""Trajectory families: analytic derivatives equal finite differences; boundary conditions;
the commanded excitation of the real Panda log; pose sets."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close, reference_path

from dynid.excitation.trajectory import (
    FourierTrajectory,
    RampedVelocityFourier,
    SinusoidalVelocity,
    gaz2019_table1,
    load_poses,
    load_trajectory,
    random_poses,
    rest_at_ends,
    save_trajectory,
)
from dynid.robot import load_robot


def _check_derivatives(trajectory, t, ddq_atol=1e-4):
    q, dq, ddq = trajectory.sample(t)
    h = t[1] - t[0]
    assert_close(np.gradient(q, h, axis=0)[2:-2], dq[2:-2], rtol=0, atol=1e-5)
    assert_close(np.gradient(dq, h, axis=0)[2:-2], ddq[2:-2], rtol=0, atol=ddq_atol)


def test_fourier_derivatives_and_rest(rng):
    traj = FourierTrajectory(rng.standard_normal((3, 5)), rng.standard_normal((3, 5)),
                             rng.standard_normal(3), 0.15 * np.pi)
    _check_derivatives(traj, np.linspace(0.0, 5.0, 20001))
    rested = rest_at_ends(traj)
    _, dq, ddq = rested.sample(np.array([0.0, rested.period, 2 * rested.period]))
    assert_close(dq, np.zeros((3, 3)), atol=1e-12)
    assert_close(ddq, np.zeros((3, 3)), atol=1e-12)


def test_ramped_velocity_derivatives_and_ends(rng):
    traj = RampedVelocityFourier(rng.standard_normal((2, 4)), rng.standard_normal((2, 4)),
                                 [0.1, -0.2], 0.15 * np.pi, duration=6.0, ramp=0.5,
                                 t_shift=0.3)
    t = np.linspace(0.0, 6.0, 60001)
    _check_derivatives(traj, t, ddq_atol=1e-3)  # the jerk jumps where the ramps end
    q, dq, ddq = traj.sample(t)
    assert_close(q[0], [0.1, -0.2], atol=1e-15)
    assert_close(np.vstack([dq[[0, -1]], ddq[[0, -1]]]), np.zeros((4, 2)), atol=1e-12)
    # q is the exact integral of dq (trapezoid rule on a fine grid)
    steps = 0.5 * (dq[1:] + dq[:-1]) * (t[1] - t[0])
    assert_close(q - q[0], np.vstack([np.zeros(2), np.cumsum(steps, axis=0)]), atol=1e-7)


def test_sinusoidal_velocity_is_gaz_table1():
    traj = gaz2019_table1(np.zeros(7))
    t = np.linspace(0.0, 4.0, 40001)
    _check_derivatives(traj, t)
    _, dq, _ = traj.sample(np.array([3.68 / 4]))
    assert dq[0, 0] == pytest.approx(2.21)
    with pytest.raises(ValueError, match="`period` must be > 0"):
        SinusoidalVelocity([1.0], [0.0], [0.0])


def test_commanded_panda_excitation_matches_its_file():
    """commanded_traj1: dq = ramp x Fourier(5 harmonics, w = 0.15 pi) of gen_params. Between the
    ramps it is our series started 0.502 s late, to the file's printed precision."""
    folder = reference_path("panda-gaz2019", "commanded_traj1")
    params = np.loadtxt(folder / "gen_params.txt")
    t = np.loadtxt(folder / "gen_time.txt")
    recorded = np.loadtxt(folder / "gen_dq.txt").reshape(-1, 7)
    traj = RampedVelocityFourier(params[:7], params[7:], np.loadtxt(folder / "gen_q0.txt"),
                                 0.15 * np.pi, duration=t[-1] + 1e-3, ramp=0.5, t_shift=0.50188)
    middle = (t > 0.6) & (t < t[-1] - 0.6)
    _, dq, _ = traj.sample(t[middle])
    assert_close(dq, recorded[middle], rtol=0, atol=3e-4)


def test_pose_sets(tmp_path):
    robot = load_robot("panda")
    poses = random_poses(robot, 50, margin=0.1, seed=3)
    span = robot.limits.upper - robot.limits.lower
    assert (poses >= robot.limits.lower + 0.1 * span).all()
    assert (poses <= robot.limits.upper - 0.1 * span).all()
    good = load_poses(reference_path("panda-gaz2019", "GOOD_CONFS_1010.txt"), n_joints=7)
    assert good.shape == (1010, 7)
    (tmp_path / "bad.txt").write_text("0.1 0.2\n0.3 x\n")
    with pytest.raises(ValueError, match=r"bad\.txt line 2: 'x' is not a finite number"):
        load_poses(tmp_path / "bad.txt")
    with pytest.raises(ValueError, match="has 7 columns, expected 6"):
        load_poses(reference_path("panda-gaz2019", "GOOD_CONFS_1010.txt"), n_joints=6)


def test_ramp_integral_at_resonance():
    """A harmonic at the ramp's own frequency (l w_f = pi / ramp): the integral stays exact."""
    w_f = 0.15 * np.pi
    ramp = 1.0 / 0.6 * (1 + 1e-15)  # harmonic 4 of w_f at pi / ramp, to round-off
    traj = RampedVelocityFourier(np.eye(1, 4, 3), np.zeros((1, 4)), [0.0], w_f,
                                 duration=10.0, ramp=ramp)
    t = np.linspace(0.0, 10.0, 200_001)
    q, dq, _ = traj.sample(t)
    steps = 0.5 * (dq[1:] + dq[:-1]) * (t[1] - t[0])
    assert_close(q[:, 0], np.concatenate([[0.0], np.cumsum(steps[:, 0])]), atol=1e-8)


def test_malformed_trajectory_files(tmp_path):
    from dynid.excitation.trajectory import load_trajectory

    cases = {
        "list.yaml": "- 1\n- 2\n",
        "empty.yaml": "",
        "family.yaml": "family: spline\n",
        "word.yaml": "family: fourier\nomega_f: one\nq0: [0]\na: [[1]]\nb: [[1]]\n",
        "missing.yaml": "family: fourier\nq0: [0]\n",
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(ValueError):
            load_trajectory(tmp_path / name)
    # issue 22: a list where the family's name goes was "unhashable type: 'list'"
    for text in ("family: [fourier]\n", "family: {fourier: 1}\n"):
        (tmp_path / "listed.yaml").write_text(text)
        with pytest.raises(ValueError, match=r"listed.yaml: `family` must be one of \["
                                             r"'fourier', .*\(text\), got"):
            load_trajectory(tmp_path / "listed.yaml")
    (tmp_path / "one.csv").write_text("t,q1,dq1,ddq1\n0,0,0,0\n")
    with pytest.raises(ValueError, match="at least two samples"):
        load_trajectory(tmp_path / "one.csv")


def _written(path):
    import yaml

    table = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    n = (table.shape[1] - 1) // 3
    return table[:, 1:1 + n], table[:, 1 + n:1 + 2 * n], table[:, 1 + 2 * n:], \
        yaml.safe_load(path.with_suffix(".yaml").read_text())


def test_saved_trajectories_start_and_end_at_rest(tmp_path):
    """Issue 11: "ready to send to a robot" means dq = ddq = 0 in the first and the last row,
    and the YAML says where the arm must be before it starts."""
    from dynid.excitation.optimize import random_fourier

    arm = load_robot("arm3")
    rested = rest_at_ends(random_fourier(arm, omega_f=2 * np.pi / 10.0, seed=3))
    path = save_trajectory(tmp_path / "rest.csv", rested, duration=10.0, rate=50.0)
    q, dq, ddq, spec = _written(path)
    assert (dq[[0, -1]] == 0).all() and (ddq[[0, -1]] == 0).all()  # exact zeros
    assert np.abs(dq).max() > 0.1  # and it moves between
    assert spec["at_rest"] is True
    assert spec["start"] == {"q": q[0].tolist(), "dq": [0.0] * 3, "ddq": [0.0] * 3}
    assert_close(spec["start"]["q"], rested.sample(np.zeros(1))[0][0], atol=1e-15)
    assert_close(load_trajectory(path.with_suffix(".yaml")).a, rested.a, atol=0)  # still loads
    ramped = RampedVelocityFourier(rested.a, rested.b, rested.q0, rested.omega_f,
                                   duration=4.0, ramp=0.5)
    save_trajectory(tmp_path / "ramped.csv", ramped, duration=4.0, rate=100.0)
    assert _written(tmp_path / "ramped.csv")[3]["at_rest"] is True


def test_a_trajectory_that_moves_at_an_end_is_refused_unless_allowed(tmp_path):
    from dynid.excitation.optimize import random_fourier

    arm = load_robot("arm3")
    moving = random_fourier(arm, seed=3)
    with pytest.raises(ValueError, match=r"does not start at rest: at t = 0 s \|dq\| reaches"):
        save_trajectory(tmp_path / "moving.csv", moving, duration=2.0, rate=100.0)
    rested = rest_at_ends(moving)  # at rest at whole periods of 13.3 s (w = 0.15 pi) only
    with pytest.raises(ValueError, match="does not end at rest: at t = 10 s"):
        save_trajectory(tmp_path / "moving.csv", rested, duration=10.0, rate=100.0)
    with pytest.raises(ValueError, match="allow_moving_ends=True"):  # Gaz: ddq(0) = A w
        save_trajectory(tmp_path / "moving.csv", gaz2019_table1(np.zeros(7)), duration=2.0,
                        rate=100.0)
    with pytest.raises(ValueError, match=r"falls at t = 9\.98501 s, before 10 s: give a whole"):
        save_trajectory(tmp_path / "moving.csv", rest_at_ends(
            random_fourier(arm, omega_f=2 * np.pi / 10.0, seed=3)), duration=10.0, rate=33.35)
    assert not list(tmp_path.iterdir())  # nothing written
    save_trajectory(tmp_path / "moving.csv", moving, duration=2.0, rate=100.0,
                    allow_moving_ends=True)
    _, dq, _, spec = _written(tmp_path / "moving.csv")
    assert spec["at_rest"] is False
    assert_close(spec["start"]["dq"], moving.sample(np.zeros(1))[1][0], rtol=1e-15, atol=0)
    assert np.abs(dq[0]).max() > 0.1


def test_a_trajectory_file_missing_a_field_names_it():
    """A truncated trajectory file names the fields it lacks (and any it should not have)."""
    from dynid.excitation import trajectory_from_dict

    with pytest.raises(ValueError, match=r"trajectory 'fourier': missing 'b' \(a truncated"):
        trajectory_from_dict({"family": "fourier", "omega_f": 1.0, "q0": [0.0],
                              "a": [[0.1]]})
    with pytest.raises(ValueError, match=r"unknown 'colour'"):
        trajectory_from_dict({"family": "fourier", "omega_f": 1.0, "q0": [0.0],
                              "a": [[0.1]], "b": [[0.0]], "colour": "red"})
