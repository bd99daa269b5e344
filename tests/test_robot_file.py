"""Robot files (dynid-robot/1 YAML) and robot construction: clear errors for bad input."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import yaml

from dynid.robot import (
    Joint,
    JointLimits,
    RevoluteDH,
    RevoluteMDH,
    Robot,
    load_robot,
    load_robot_file,
    robot_from_dict,
    robot_to_dict,
)


@pytest.fixture
def spec() -> dict:
    return robot_to_dict(load_robot("arm3"))


def test_dict_round_trip(spec):
    robot = robot_from_dict(spec)
    np.testing.assert_array_equal(robot.parameters, load_robot("arm3").parameters)


@pytest.mark.parametrize(("edit", "message"), [
    (lambda s: s["inertia"]["links"][1].pop("mass"), r"`inertia.links\[1\].mass` is missing"),
    (lambda s: s["inertia"]["links"][2].update(mass=-1.0),
     r"`inertia.links\[2\].mass` must be >= 0"),
    (lambda s: s["inertia"]["links"][0].update(mass="heavy"),
     r"`inertia.links\[0\].mass` must be a number"),
    (lambda s: s["inertia"]["links"].pop(), r"`inertia.links` must list 3 links"),
    (lambda s: s["inertia"].update(about="centroid"), r"`inertia.about` must be 'com' or"),
    (lambda s: s["kinematics"].update(convention="dhm"), r"`kinematics.convention` must be"),
    (lambda s: s["kinematics"]["joints"][0].update(type="spherical"),
     r"`kinematics.joints\[0\].type` must be 'revolute' or 'prismatic'"),
    (lambda s: s["kinematics"]["joints"][1].pop("a"), r"`kinematics.joints\[1\].a` is missing"),
    (lambda s: s["limits"].update(velocity=[1.0, 2.0]), r"`limits.velocity` must be a list of 3"),
    (lambda s: s["limits"].update(torque=[1.0, -2.0, 1.0]), r"`limits.torque` must be > 0"),
    (lambda s: s["limits"]["position"].update(lower=[4.0, 0.0, 0.0]),
     r"`limits.lower` must be below `limits.upper`"),
    (lambda s: s.update(gravity=[0.0, float("nan"), -9.81]), r"`gravity\[1\]` must be finite"),
    (lambda s: s.update(schema="other/9"), r"`schema` must be 'dynid-robot/1'"),
    (lambda s: s["friction"].update(model="magic"), r"`friction.model` must be one of"),
    (lambda s: s["friction"]["parameters"].pop("delta"), r"`friction.parameters` for model"),
    (lambda s: s.update(source="a paper"), r"`source` must be a mapping"),
    (lambda s: s["kinematics"].update(tool=[0.0, 0.1]), r"`kinematics.tool` must be a 4 x 4"),
    (lambda s: s["kinematics"].update(tool=7), r"`kinematics.tool` must be a mapping \(one row\)"),
    (lambda s: s["kinematics"].update(tool=[[1, 0, 0, 0]] * 4),
     r"`kinematics.tool` rotation block must be a proper rotation"),
    (lambda s: s["limits"].update(velocity=[1.0, float("nan"), 1.0]),
     r"`limits.velocity\[1\]` must be finite"),
])
def test_bad_robot_files_name_the_field(spec, tmp_path, edit, message):
    bad = copy.deepcopy(spec)
    edit(bad)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(bad))
    with pytest.raises(ValueError, match=message):
        load_robot_file(path)


@pytest.mark.parametrize("convention", ["mdh", "dh"])
def test_random_robot_round_trips_through_a_file(rng, tmp_path, convention):
    from conftest import assert_close, random_table_robot

    from dynid.robot import save_robot

    robot = random_table_robot(rng, convention, 4, prismatic=0.5)  # unbounded limits
    row = (RevoluteMDH(0.1, 0.7, -0.2, 0.4) if convention == "mdh"
           else RevoluteDH(0.3, -0.1, 1.1, -2.0))
    robot = Robot(**{**robot.__dict__, "tool": row.fixed()})
    save_robot(robot, tmp_path / "r.yaml")
    copy = load_robot_file(tmp_path / "r.yaml")
    assert_close(copy.tool, robot.tool, atol=1e-14)
    assert_close(copy.parameters, robot.parameters, rtol=0, atol=0)
    assert np.isinf(copy.limits.torque).all()
    assert [j.kind for j in copy.joints] == [j.kind for j in robot.joints]
    for a, b in zip(copy.joints, robot.joints, strict=True):
        assert_close(a.pre @ a.post, b.pre @ b.post, atol=1e-15)


@pytest.mark.parametrize("convention", ["mdh", "dh"])
def test_a_tool_no_row_gives_is_written_as_its_frame(rng, tmp_path, convention):
    """A calibrated tool (a few millimetres and milliradians off its row) is no single DH/MDH
    row: the robot file keeps it as the 4 x 4 frame, and reads it back exactly."""
    from conftest import random_table_robot

    from dynid.robot import save_robot
    from dynid.robot._joint import rot_x, translation
    from dynid.robot._urdf_tree import rpy_matrix

    robot = random_table_robot(rng, convention, 3)
    tool = translation(0.0011, -0.0007, 0.1) @ rot_x(0.003)
    tool[:3, :3] = tool[:3, :3] @ rpy_matrix((0.0, 0.002, 0.0))
    robot = Robot(**{**robot.__dict__, "tool": tool})
    save_robot(robot, tmp_path / "r.yaml")
    assert "tool:\n  - [" in (tmp_path / "r.yaml").read_text()
    np.testing.assert_array_equal(load_robot_file(tmp_path / "r.yaml").tool, robot.tool)


def test_unreadable_files(tmp_path):
    with pytest.raises(ValueError, match=r"robot file .*absent\.yaml' does not exist"):
        load_robot_file(tmp_path / "absent.yaml")
    with pytest.raises(ValueError, match="is a folder"):
        load_robot_file(tmp_path)
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: 1\nkinematics: [unclosed\n")
    with pytest.raises(ValueError, match=r"^broken\.yaml:3:\d+: \S[^\n]*$"):
        load_robot_file(broken)
    listing = tmp_path / "list.yaml"
    listing.write_text("- 1\n- 2\n")
    with pytest.raises(ValueError, match="must hold a mapping"):
        load_robot_file(listing)


def test_unknown_robot_name():
    with pytest.raises(ValueError, match="'pandaa' is neither a built-in robot"):
        load_robot("pandaa")
    with pytest.raises(TypeError, match="`name_or_path` must be a str or Path"):
        load_robot(7)


def test_caller_arrays_are_copied_not_frozen(rng):
    gravity, tool = np.array([0.0, 0.0, -9.81]), np.eye(4)
    limits = np.ones(1)
    Robot.from_mdh("r", [RevoluteMDH(0.0, 0.0, 0.1)], np.ones((1, 10)), gravity=gravity,
                   tool=tool, limits=JointLimits(-limits, limits, limits, limits, limits))
    assert gravity.flags.writeable and tool.flags.writeable and limits.flags.writeable


def test_robot_checks_its_fields():
    row = RevoluteMDH(a=0.0, alpha=0.0, d=0.1)
    with pytest.raises(ValueError, match=r"`parameters` must have shape \(1, 10\)"):
        Robot.from_mdh("r", [row], np.zeros((2, 10)))
    with pytest.raises(ValueError, match="link 1 has negative mass"):
        Robot.from_mdh("r", [row], -np.ones((1, 10)))
    with pytest.raises(ValueError, match="`parameters` contains NaN"):
        Robot.from_mdh("r", [row], np.full((1, 10), np.nan))
    with pytest.raises(ValueError, match="`axis` must be a nonzero 3-vector"):
        Joint("j", "revolute", axis=np.zeros(3))
    with pytest.raises(ValueError, match="`kind` must be 'revolute' or 'prismatic'"):
        Joint("j", "spherical")
    with pytest.raises(ValueError, match="rotation block must be a proper rotation"):
        Joint("j", "revolute", pre=np.diag([1.0, 1.0, -1.0, 1.0]))
    with pytest.raises(ValueError, match="`alpha` must be finite"):
        RevoluteMDH(a=0.0, alpha=np.inf, d=0.1)
    with pytest.raises(TypeError, match="`a` must be a real number"):
        RevoluteMDH(a="0.1", alpha=0.0, d=0.1)
    with pytest.raises(TypeError, match=r"`friction` must be a dynid\.friction model"):
        Robot.from_mdh("r", [row], np.ones((1, 10)), friction="sigmoid")
    with pytest.raises(ValueError, match=r"`tool` rotation block must be a proper rotation"):
        Robot.from_mdh("r", [row], np.ones((1, 10)), tool=np.ones((4, 4)))
    with pytest.raises(ValueError, match=r"`limits.velocity` must be > 0"):
        JointLimits(lower=[-1.0], upper=[1.0], velocity=[0.0], acceleration=[1.0], torque=[1.0])
