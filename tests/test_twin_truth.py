"""A twin whose truth differs from the robot file (dynid.simulate.truth, `dynid simulate`'s
--perturb, --rotor-inertia, --viscous, --coulomb, --delay, --no-velocity): the perturbed links
stay physical bodies, the truth is written beside the log and read back, the torque channel
lags by the delay asked, and a log without velocities has none."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from conftest import assert_close

from dynid.cli import main
from dynid.excitation import FourierTrajectory
from dynid.robot import load_robot
from dynid.robot.inertia import physical_margin
from dynid.simulate import SensorModel, simulate_open_loop
from dynid.simulate.truth import load_truth, perturbed, truth_path, twin_truth


@pytest.mark.parametrize("name", ["panda", "tx40"])
def test_perturbed_links_are_physical_and_moved_by_at_most_the_fraction(name):
    robot = load_robot(name)
    truth = perturbed(robot, 0.3, seed=4)
    assert (physical_margin(truth.parameters) >= -1e-9).all()
    mass, moved = robot.parameters[:, 0], truth.parameters[:, 0]
    heavy = mass > 0
    ratio = moved[heavy] / mass[heavy]
    assert (np.abs(ratio - 1) <= 0.3 + 1e-12).all() and np.abs(ratio - 1).max() > 0.05
    assert_close(moved[~heavy], mass[~heavy])  # a massless link stays massless
    assert not np.allclose(truth.parameters[heavy, 4:], robot.parameters[heavy, 4:], rtol=0.01)
    assert_close(perturbed(robot, 0.3, seed=4).parameters, truth.parameters)  # seeded
    assert not np.allclose(perturbed(robot, 0.3, seed=5).parameters, truth.parameters)
    assert_close(perturbed(robot, 0.0).parameters, robot.parameters)


def test_perturbation_beyond_the_range_is_refused():
    with pytest.raises(ValueError, match="`relative` must be a fraction in"):
        perturbed(load_robot("arm3"), 1.5)
    with pytest.raises(ValueError, match="`coulomb`"):
        twin_truth(load_robot("arm3"), coulomb=[0.1, 0.2])


def test_twin_truth_sets_rotor_inertia_and_friction():
    robot = load_robot("arm3")
    truth = twin_truth(robot, rotor_inertia=0.05, coulomb=[0.1, 0.2, 0.3])
    assert_close(truth.rotor_inertia, np.full(3, 0.05))
    assert truth.friction.name == "viscous-coulomb"
    assert_close(truth.friction.fc, [0.1, 0.2, 0.3])
    assert_close(truth.friction.fv, np.zeros(3))  # arm3's own friction is arctan: no fv kept
    assert_close(truth.parameters, robot.parameters)


def _trajectory() -> FourierTrajectory:
    return FourierTrajectory(a=0.3 * np.ones((3, 2)), b=0.2 * np.ones((3, 2)),
                             q0=np.zeros(3), omega_f=2 * np.pi / 2)


def test_torque_delay_shifts_the_torque_channel_by_whole_samples():
    robot = load_robot("arm3").with_friction(twin_truth(load_robot("arm3"), viscous=0.1).friction)
    exact = simulate_open_loop(robot, _trajectory(), duration=1.0, rate=200.0)
    late = simulate_open_loop(robot, _trajectory(), duration=1.0, rate=200.0,
                              sensor=SensorModel(torque_delay=0.025))
    assert late.n_samples == exact.n_samples - 5  # the log starts when the late channel does
    assert_close(late.t, exact.t[5:])
    assert_close(late.q, exact.q[5:])
    assert_close(late.tau, exact.tau[:-5], atol=1e-9)
    assert late.metadata["sensor"]["torque_delay"] == 0.025
    with pytest.raises(ValueError, match="`torque_delay`"):
        SensorModel(torque_delay=-1.0)


def test_simulate_writes_the_truth_beside_a_log_without_velocities(tmp_path, capsys):
    trajectory = tmp_path / "traj.yaml"
    trajectory.write_text(yaml.safe_dump(_trajectory().to_dict()))
    log = tmp_path / "log.csv"
    assert main(["simulate", "arm3", str(trajectory), "-o", str(log), "--duration", "1",
                 "--rate", "200", "--perturb", "20", "--truth-seed", "3", "--rotor-inertia",
                 "0.02", "0.03", "0.04", "--coulomb", "0.2", "--viscous", "0.1",
                 "--delay", "10", "--no-velocity", "--json"]) == 0
    summary = yaml.safe_load(capsys.readouterr().out)
    assert summary["truth"] == str(truth_path(log)) == str(tmp_path / "log.truth.yaml")
    assert summary["differs_from_robot_file"] == ["--perturb", "--rotor-inertia", "--viscous",
                                                  "--coulomb", "--delay", "--no-velocity"]
    header = log.read_text().splitlines()[0].split(",")
    assert header == ["t", "q1", "q2", "q3", "tau1", "tau2", "tau3"]  # no dq, no ddq
    truth = load_truth(truth_path(log))
    expected = twin_truth(load_robot("arm3"), perturb=0.2, seed=3,
                          rotor_inertia=[0.02, 0.03, 0.04], coulomb=0.2, viscous=0.1)
    assert_close(truth.parameters, expected.parameters)
    assert_close(truth.robot.parameters, expected.parameters)  # the truth's robot file
    assert_close(truth.rotor_inertia, [0.02, 0.03, 0.04])
    assert_close(truth.friction.fc, np.full(3, 0.2))
    assert truth.log["torque_delay_s"] == 0.01 and truth.log["velocities"] is False
    assert truth.perturbation == {"percent": 20.0, "seed": 3}
    # the torques are the truth's, 2 samples (10 ms at 200 Hz) late
    exact = simulate_open_loop(expected, _trajectory(), duration=1.0, rate=200.0)
    table = np.loadtxt(log, delimiter=",", skiprows=1)
    assert_close(table[:, 4:], exact.tau[:-2], atol=1e-9)
    assert_close(table[:, 0], exact.t[2:])


def test_simulate_without_truth_options_writes_the_robot_files_truth(tmp_path, capsys):
    trajectory = tmp_path / "traj.yaml"
    trajectory.write_text(yaml.safe_dump(_trajectory().to_dict()))
    log = tmp_path / "log.npz"
    assert main(["simulate", "arm3", str(trajectory), "-o", str(log), "--duration", "0.5",
                 "--rate", "100"]) == 0
    capsys.readouterr()
    truth = load_truth(tmp_path / "log.truth.yaml")
    assert_close(truth.parameters, load_robot("arm3").parameters)
    assert truth.log["velocities"] is True and truth.perturbation == {}
    assert "dq" in np.load(log).files


def test_an_npz_log_without_velocities_has_no_dq_array(tmp_path):
    from dynid.data import write_dataset

    data = simulate_open_loop(load_robot("arm3"), _trajectory(), duration=0.2, rate=100.0)
    archive = np.load(write_dataset(tmp_path / "log.npz", data, velocities=False))
    assert sorted(archive.files) == ["ddq", "q", "t", "tau"]
    assert_close(archive["tau"], data.tau)


def test_a_late_velocity_less_twin_with_motor_inertia_is_identified_at_the_floor(tmp_path,
                                                                                 capsys):
    """A twin unlike its robot file in every way `simulate` offers: links moved 10 %, motors'
    inertia, dry and viscous friction, torques 4 ms late, no velocities logged. `identify
    --rotor-inertia` finds the lag and reaches the noise floor on another trajectory."""
    rng = np.random.default_rng(7)
    logs = []
    for seed in (1, 2):
        trajectory = tmp_path / f"traj{seed}.yaml"
        trajectory.write_text(yaml.safe_dump(FourierTrajectory(
            a=rng.uniform(-0.4, 0.4, (3, 3)), b=rng.uniform(-0.4, 0.4, (3, 3)),
            q0=np.zeros(3), omega_f=2 * np.pi / 6).to_dict()))
        logs.append(str(tmp_path / f"log{seed}.csv"))
        assert main(["simulate", "arm3", str(trajectory), "-o", logs[-1], "--duration", "6",
                     "--perturb", "10", "--rotor-inertia", "0.05", "--coulomb", "0.3",
                     "--viscous", "0.1", "--delay", "4", "--no-velocity", "--noise", "0.1",
                     "--seed", str(seed), "--quiet"]) == 0
    model = str(tmp_path / "model.yaml")
    capsys.readouterr()
    assert main(["identify", "arm3", logs[0], "--rotor-inertia", "-o", model, "--json"]) == 0
    fit = yaml.safe_load(capsys.readouterr().out)
    truth = load_truth(truth_path(logs[0]))
    # found and compensated; from positions alone (velocities derived) the estimate is off by
    # about 1 ms on such short logs (5.0-5.2 ms here; 4.00 ms when the log has velocities)
    assert abs(fit["torque_delay_s"] - truth.log["torque_delay_s"]) < 1.5e-3
    assert main(["validate", model, logs[1], "--json"]) == 0
    held_out = yaml.safe_load(capsys.readouterr().out)
    assert max(held_out["rmse"]) <= 1.5 * 0.1, held_out["rmse"]
