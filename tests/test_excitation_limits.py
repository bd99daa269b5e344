"""Limits an excitation needs, completed where a description has none (issue 22): derived
acceleration limits from the effort limits and the inertia, a range for continuous joints;
``dynid excite`` runs on every arm ``dynid robots`` lists, with no invented numbers."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
import yaml
from conftest import assert_close

from dynid.cli import main
from dynid.dynamics import gravity_torque, mass_matrix
from dynid.excitation import optimize_excitation
from dynid.excitation.limits import (
    ACCELERATION_CAP,
    ACCELERATION_SAFETY,
    CONTINUOUS_RANGE,
    RAMP_TIME,
    derived_acceleration_limits,
    excitation_limits,
)
from dynid.robot import builtin_robots, example_robots, load_robot

ARMS = builtin_robots() + [name for name, _ in example_robots(builtin_robots())]


def _load(name):
    with warnings.catch_warnings():  # a URDF's own notes (ignored elements) are not tested here
        warnings.simplefilter("ignore")
        return load_robot(name)


def _without_acceleration(robot):
    return dataclasses.replace(robot, limits=dataclasses.replace(
        robot.limits, acceleration=np.full(robot.n_joints, np.inf)))


def test_the_rule_on_the_panda_against_a_dense_search():
    """The derived limits follow the documented formula, evaluated independently on a dense
    sampling; they stay at or below the cap, and near Franka's published ones."""
    robot = _without_acceleration(load_robot("panda-cad"))
    derived, by_effort = derived_acceleration_limits(robot, poses=256)
    assert by_effort.all()
    rng = np.random.default_rng(7)
    lower, upper = robot.limits.lower, robot.limits.upper
    q = lower + (upper - lower) * rng.random((4000, 7))
    diagonal = np.diagonal(mass_matrix(robot, q), axis1=-2, axis2=-1).max(axis=0)
    gravity = np.abs(gravity_torque(robot, q)).max(axis=0)
    dense = np.minimum(ACCELERATION_SAFETY * (robot.limits.torque - gravity) / diagonal,
                       ACCELERATION_CAP)
    # 256 poses find slightly smaller maxima than 4000: the derived limit is at most a few
    # percent above the dense one
    assert (derived >= dense * (1 - 1e-12)).all() and (derived <= 1.05 * dense).all()
    published = np.array([15, 7.5, 10, 12.5, 15, 20, 20])
    assert (derived <= ACCELERATION_CAP).all() and (derived <= 1.15 * published).all()
    assert derived[1] == pytest.approx(8.4, abs=0.2)  # the shoulder, gravity-loaded


def test_given_limits_are_kept_and_missing_ones_filled():
    robot = load_robot("panda")
    completed = excitation_limits(robot)
    assert all(
        np.array_equal(getattr(completed.robot.limits, k), getattr(robot.limits, k))
        for k in ("lower", "upper", "velocity", "acceleration", "torque"))
    assert completed.derived == {"acceleration": (), "velocity": (), "position": ()}
    assert completed.notes() == []
    # no effort, no velocity, no position range on joint 3: the conservative rules
    limits = robot.limits
    inf = np.inf
    bare = dataclasses.replace(robot, limits=dataclasses.replace(
        limits, acceleration=np.where(np.arange(7) < 4, inf, limits.acceleration),
        torque=np.where(np.arange(7) == 0, inf, limits.torque),
        lower=np.where(np.arange(7) == 2, -inf, limits.lower),
        upper=np.where(np.arange(7) == 2, inf, limits.upper)))
    completed = excitation_limits(bare, continuous_range=2.0)
    filled = completed.robot.limits
    assert completed.derived["acceleration"] == (0, 1, 2, 3)
    assert completed.derived["position"] == (2,)
    assert filled.lower[2] == -2.0 and filled.upper[2] == 2.0
    assert filled.acceleration[0] == pytest.approx(min(limits.velocity[0] / RAMP_TIME,
                                                       ACCELERATION_CAP))
    assert completed.rule[0] == "velocity" and completed.rule[1] == "effort"
    assert_close(filled.acceleration[4:], limits.acceleration[4:])
    notes = "\n".join(completed.notes())
    assert "(no effort limit)" in notes and "[-2, 2]" in notes
    with pytest.raises(ValueError, match="`continuous_range` must be a finite angle > 0"):
        excitation_limits(bare, continuous_range=0.0)


@pytest.mark.parametrize("name", ARMS)
def test_excite_runs_on_every_listed_arm_within_its_limits(name):
    robot = _load(name)
    result = optimize_excitation(robot, harmonics=2, period=3.0, rate=20.0, starts=1,
                                 start_iterations=2, max_iterations=2, seed=0)
    limits = result.limits
    for key in ("lower", "upper", "velocity", "acceleration"):
        given = getattr(robot.limits, key)
        assert np.isfinite(getattr(limits, key)).all()
        # the description's own limits are kept
        assert_close(getattr(limits, key)[np.isfinite(given)], given[np.isfinite(given)])
    continuous = ~np.isfinite(robot.limits.lower) & ~np.isfinite(robot.limits.upper)
    assert_close(limits.upper[continuous], np.full(continuous.sum(), CONTINUOUS_RANGE))
    q, dq, ddq = result.trajectory.sample(np.linspace(0.0, 3.0, 6001))
    assert (q >= limits.lower).all() and (q <= limits.upper).all()
    assert (np.abs(dq) <= limits.velocity).all()
    assert (np.abs(ddq) <= limits.acceleration).all()
    assert np.abs(dq).max() > 0  # it moves
    if not np.isfinite(robot.limits.acceleration).all():
        assert any(line.startswith("acceleration limits derived") for line in
                   result.derived_limits)


def test_the_command_line_prints_the_derived_limits_and_takes_overrides(tmp_path, capsys):
    arm = next((name for name in ARMS if not np.isfinite(_load(name).limits.lower).all()),
               None)
    if arm is None:  # example-robot-data's Kinova has continuous joints
        pytest.skip("no arm with a continuous joint installed")
    out = tmp_path / "traj.csv"
    options = ["--harmonics", "2", "--period", "3", "--grid-rate", "20", "--rate", "50",
               "--starts", "1", "--iterations", "2"]
    assert main(["excite", arm, "-o", str(out), *options, "--continuous-range", "1.5"]) == 0
    text = capsys.readouterr().out
    assert "acceleration limits derived" in text and "position ranges assumed" in text
    assert "[-1.5, 1.5]" in text
    written = yaml.safe_load(out.with_suffix(".yaml").read_text())  # what it keeps to, recorded
    assert np.isfinite(written["acceleration_limits"]).all()
    assert any("derived" in line for line in written["derived_limits"])
    # --acceleration-limit overrides the derived ones
    assert main(["excite", arm, "-o", str(out), *options, "--acceleration-limit", "2",
                 "--json"]) == 0
    payload = yaml.safe_load(capsys.readouterr().out)
    assert payload["limits"]["acceleration"] == [2.0] * len(payload["limits"]["velocity"])
    assert not any(line.startswith("acceleration") for line in payload["derived_limits"])
    # robot show prints them too
    assert main(["robot", "show", arm]) == 0
    assert "for `dynid excite`: acceleration limits derived" in capsys.readouterr().out


def test_random_fourier_completes_the_limits_too():
    from dynid.excitation import random_fourier

    robot = _load(next(name for name in ARMS if name == "kinova") if "kinova" in ARMS
                  else "arm3")
    completed = excitation_limits(robot).robot.limits
    q, dq, ddq = random_fourier(robot, seed=3).sample(np.linspace(0.0, 40.0, 8001))
    assert (q >= completed.lower).all() and (q <= completed.upper).all()
    assert (np.abs(ddq) <= completed.acceleration).all() and np.abs(dq).max() > 0


def test_a_double_pendulum_without_any_limit_is_excited(tmp_path, capsys):
    """example-robot-data's double pendulum: continuous joints, no effort, no velocity limit."""
    from dynid.robot._example_robot_data import robots_folder

    folder = robots_folder()
    path = None if folder is None else \
        folder / "double_pendulum_description" / "urdf" / "double_pendulum_simple.urdf"
    if path is None or not path.is_file():
        pytest.skip("example-robot-data's double pendulum is not installed")
    out = tmp_path / "pendulum.csv"
    assert main(["excite", str(path), "-o", str(out), "--harmonics", "3", "--period", "4",
                 "--grid-rate", "25", "--rate", "50", "--starts", "1", "--iterations", "3",
                 "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "joint1 2 (no effort limit)" in text  # 1 rad/s assumed, reached in 0.5 s
    assert "velocity limits assumed (none given): joint1 1, joint2 1" in text
    table = np.loadtxt(out, delimiter=",", skiprows=1)
    assert (np.abs(table[:, 1:3]) <= CONTINUOUS_RANGE).all()
    assert (np.abs(table[:, 3:5]) <= 1.0).all() and (np.abs(table[:, 5:7]) <= 2.0).all()


def _weak_shoulder():
    """arm3 without acceleration limits, its shoulder's effort 2 % above the gravity it holds at
    the worst pose: the derived limit is the floor's, 0.5 x 0.1 x effort / max M_22 (about
    0.75 rad/s^2), as a Kinova Gen3 with a gripper gets 0.73 on joint 2 (issue 32)."""
    robot = load_robot("arm3")
    lower, upper = robot.limits.lower, robot.limits.upper
    q = lower + (upper - lower) * np.random.default_rng(3).random((4000, 3))
    held = np.abs(gravity_torque(robot, q)).max(axis=0)[1]
    return dataclasses.replace(robot, limits=dataclasses.replace(
        robot.limits, acceleration=np.full(3, np.inf), torque=np.array([50.0, 1.02 * held,
                                                                        50.0])))


def test_a_derived_limit_that_cripples_a_joint_is_warned_with_the_option_that_lifts_it(
        tmp_path, capsys):
    from dynid.excitation.optimize import UNDER_EXCITED_GAIN, UnderExcitedWarning
    from dynid.robot import save_robot

    weak = _weak_shoulder()
    small = {"harmonics": 5, "period": 10.0, "rate": 20.0, "starts": 1, "start_iterations": 10,
             "max_iterations": 30, "seed": 0}
    with pytest.warns(UnderExcitedWarning) as caught:
        result = optimize_excitation(weak, **small)
    assert len(caught) == 1
    [entry] = result.under_excited
    assert entry["joint"] == 2 and entry["limit"] < 1.0 and entry["lifted"] == ACCELERATION_CAP
    assert entry["condition"] >= UNDER_EXCITED_GAIN * entry["condition_lifted"]
    text = str(caught[0].message)
    assert "joint2 (joint 2) is under-excited: its acceleration limit 0.7" in text
    assert "(0.5 x max(effort" in text and "gravity" in text and "max M_jj" in text
    assert "`--acceleration-limit 10 10 10` on `dynid excite`" in text
    # the same arm with the effort to spare: no warning
    strong = dataclasses.replace(weak, limits=dataclasses.replace(weak.limits,
                                                                  torque=np.full(3, 50.0)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnderExcitedWarning)
        assert optimize_excitation(strong, **small).under_excited == []
    # the command line: warned on stderr, in --json and the parameters file; the option named
    # lifts it, and the condition number drops
    save_robot(weak, tmp_path / "weak.yaml")
    out = tmp_path / "traj.csv"
    options = ["--harmonics", "5", "--period", "10", "--grid-rate", "20", "--rate", "50",
               "--starts", "1", "--iterations", "30", "--json"]
    assert main(["excite", str(tmp_path / "weak.yaml"), "-o", str(out), *options]) == 0
    captured = capsys.readouterr()
    payload = yaml.safe_load(captured.out)
    assert [e["joint"] for e in payload["under_excited"]] == [2]
    assert "UnderExcitedWarning" in captured.err and "--acceleration-limit" in captured.err
    assert "under-excited" in yaml.safe_load(out.with_suffix(".yaml").read_text())[
        "under_excited"][0]
    assert main(["excite", str(tmp_path / "weak.yaml"), "-o", str(out), *options,
                 "--acceleration-limit", "10", "10", "10"]) == 0
    captured = capsys.readouterr()
    lifted = yaml.safe_load(captured.out)
    assert lifted["under_excited"] == [] and "UnderExcitedWarning" not in captured.err
    assert lifted["condition_number"] * UNDER_EXCITED_GAIN < payload["condition_number"]
