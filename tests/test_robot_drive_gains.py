"""A robot file's drive gains (``drive_gains: {nominal, range}``): read, checked, carried on the
Robot and written back, for a table robot and a robot file pointing at a URDF."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import yaml

from dynid.robot import (
    load_robot,
    load_robot_file,
    robot_from_dict,
    robot_to_dict,
    save_robot,
)
from tests.conftest import assert_close

NOMINAL = [1.6, 0.7, 1.2]
RANGE = [[1.0, 2.0], [0.5, 0.9], [1.0, 1.5]]


@pytest.fixture
def spec() -> dict:
    return robot_to_dict(load_robot("arm3"))


def test_a_robot_without_drive_gains_states_none(spec):
    robot = robot_from_dict(spec)
    assert robot.drive_gains is None and robot.drive_gain_range is None
    assert "drive_gains" not in robot_to_dict(robot)


@pytest.mark.parametrize("given", [{"nominal": NOMINAL}, {"range": RANGE},
                                   {"nominal": NOMINAL, "range": RANGE},
                                   {"range": [[-2.0, -1.0], [0.5, 0.9], [1.0, 1.5]]}])
def test_drive_gains_round_trip_through_a_file(spec, tmp_path, given):
    spec["drive_gains"] = given
    path = tmp_path / "arm.yaml"
    path.write_text(yaml.safe_dump(spec))
    robot = load_robot_file(path)
    if "nominal" in given:
        assert_close(robot.drive_gains, given["nominal"], rtol=0, atol=0)
        assert robot.drive_gains.shape == (3,) and not robot.drive_gains.flags.writeable
    else:
        assert robot.drive_gains is None
    if "range" in given:
        assert_close(robot.drive_gain_range, given["range"], rtol=0, atol=0)
        assert robot.drive_gain_range.shape == (3, 2)
    else:
        assert robot.drive_gain_range is None
    save_robot(robot, tmp_path / "again.yaml")
    assert yaml.safe_load((tmp_path / "again.yaml").read_text())["drive_gains"] == given
    back = load_robot_file(tmp_path / "again.yaml")
    for name in ("drive_gains", "drive_gain_range"):
        mine, theirs = getattr(robot, name), getattr(back, name)
        assert (mine is None and theirs is None) or np.array_equal(mine, theirs)


@pytest.mark.parametrize(("value", "message"), [
    ("fast", r"`drive_gains` must be a mapping"),
    ({}, r"`drive_gains` must give `nominal`, `range` or both"),
    ({"nominal": NOMINAL, "gain": 1}, r"drive_gains"),
    ({"nominal": [1.0, 2.0]}, r"`drive_gains.nominal` must be a list of 3 numbers"),
    ({"nominal": [1.0, "big", 2.0]}, r"`drive_gains.nominal\[1\]` must be a number"),
    ({"nominal": [1.0, float("nan"), 2.0]}, r"`drive_gains.nominal\[1\]` must be finite"),
    ({"nominal": [1.0, 0.0, 2.0]}, r"`drive_gains.nominal` must be nonzero"),
    ({"nominal": [1.0, True, 2.0]}, r"`drive_gains.nominal\[1\]` must be a number"),
    ({"range": [[1.0, 2.0]]}, r"`drive_gains.range` must be a list of 3 pairs"),
    ({"range": "1..2"}, r"`drive_gains.range` must be a list of 3 pairs"),
    ({"range": [[1.0, 2.0], [0.5], [1.0, 1.5]]}, r"`drive_gains.range\[1\]` must be a list of 2"),
    ({"range": [[1.0, 2.0], [0.9, 0.5], [1.0, 1.5]]}, r"`drive_gains.range`: joint 2 has lo"),
    ({"range": [[1.0, 2.0], [0.0, 0.5], [1.0, 1.5]]}, r"`drive_gains.range`: joint 2 spans"),
    ({"range": [[1.0, 2.0], [-0.5, 0.5], [1.0, 1.5]]}, r"`drive_gains.range`: joint 2 spans"),
    ({"range": [[1.0, 2.0], [0.5, float("inf")], [1.0, 1.5]]},
     r"`drive_gains.range\[1\]\[1\]` must be finite"),
    ({"range": [[1.0, 2.0], [0.5, float("nan")], [1.0, 1.5]]},
     r"`drive_gains.range\[1\]\[1\]` must be finite"),
    ({"nominal": [1.6, 1.0, 1.2], "range": RANGE},
     r"joint 2's gain 1 lies outside its range \[0.5, 0.9\]"),
])
def test_bad_drive_gains_name_the_key(spec, tmp_path, value, message):
    bad = copy.deepcopy(spec)
    bad["drive_gains"] = value
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(bad))
    with pytest.raises(ValueError, match=message) as error:
        load_robot_file(path)
    assert str(error.value).startswith("bad.yaml: ")


def test_the_robot_checks_drive_gains_given_in_code():
    robot = load_robot("arm3")
    stated = robot.with_drive_gains(NOMINAL, RANGE)
    assert_close(stated.drive_gains, NOMINAL)
    assert_close(stated.drive_gain_range, RANGE)
    assert robot.with_drive_gains().drive_gains is None
    with pytest.raises(ValueError, match=r"`drive_gains.nominal` must have shape \(3,\)"):
        robot.with_drive_gains([1.0, 2.0])
    with pytest.raises(ValueError, match=r"`drive_gains.range` must be 3 pairs"):
        robot.with_drive_gains(gain_range=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"`drive_gains.range` contains NaN or inf"):
        robot.with_drive_gains(gain_range=[[1.0, np.inf]] * 3)


def test_a_robot_file_pointing_at_a_urdf_gives_drive_gains(tmp_path):
    from dynid.export import export_robot

    export_robot(load_robot("arm3"), tmp_path / "arm.urdf")
    spec = {"name": "mine", "urdf": "arm.urdf", "drive_gains": {"range": RANGE}}
    (tmp_path / "arm.yaml").write_text(yaml.safe_dump(spec))
    robot = load_robot(tmp_path / "arm.yaml")
    assert_close(robot.drive_gain_range, RANGE, rtol=0, atol=0)
    save_robot(robot, tmp_path / "again.yaml")
    written = yaml.safe_load((tmp_path / "again.yaml").read_text())
    assert written["urdf"] == "arm.urdf" and written["drive_gains"] == {"range": RANGE}
    assert_close(load_robot(tmp_path / "again.yaml").drive_gain_range, RANGE, rtol=0, atol=0)
    spec["drive_gains"] = {"range": [[1.0, 2.0], [0.9, 0.5], [1.0, 1.5]]}
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(spec))
    with pytest.raises(ValueError, match=r"bad.yaml: `drive_gains.range`: joint 2 has lo"):
        load_robot_file(tmp_path / "bad.yaml")
