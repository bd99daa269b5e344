"""Conventions: MDH and DH rows against the textbook products; link and tool poses."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
import yaml
from conftest import assert_close, random_table_robot, reference_path
from scipy.spatial.transform import Rotation

from dynid.dynamics import forward_kinematics, tool_pose
from dynid.robot import (
    PrismaticDH,
    PrismaticMDH,
    RevoluteDH,
    RevoluteMDH,
    Robot,
    load_robot,
    to_pinocchio,
)


# Textbook elementary transforms, written here independently of dynid.robot.
def _rx(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1]])


def _rz(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])


def _tx(x):
    out = np.eye(4)
    out[0, 3] = x
    return out


def _tz(z):
    out = np.eye(4)
    out[2, 3] = z
    return out


def test_rows_follow_the_textbook_formulas(rng):
    a, alpha, d, theta, offset, q = rng.uniform(-2, 2, size=6)
    # MDH (Craig): Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i) Tz(d_i)
    assert_close(RevoluteMDH(a, alpha, d, offset).joint("j").transform(q),
                 _rx(alpha) @ _tx(a) @ _rz(q + offset) @ _tz(d), atol=1e-14)
    assert_close(PrismaticMDH(a, alpha, theta, offset).joint("j").transform(q),
                 _rx(alpha) @ _tx(a) @ _rz(theta) @ _tz(q + offset), atol=1e-14)
    # DH (standard): Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i)
    assert_close(RevoluteDH(d, a, alpha, offset).joint("j").transform(q),
                 _rz(q + offset) @ _tz(d) @ _tx(a) @ _rx(alpha), atol=1e-14)
    assert_close(PrismaticDH(theta, a, alpha, offset).joint("j").transform(q),
                 _rz(theta) @ _tz(q + offset) @ _tx(a) @ _rx(alpha), atol=1e-14)


def test_mdh_and_dh_are_distinct_types():
    with pytest.raises(TypeError, match=r"`rows\[0\]` must be RevoluteMDH or PrismaticMDH"):
        Robot.from_mdh("x", [RevoluteDH(0.1, 0.2, 0.3)], np.zeros((1, 10)))
    with pytest.raises(TypeError, match=r"`rows\[1\]` must be RevoluteDH or PrismaticDH"):
        Robot.from_dh("x", [RevoluteDH(0.1, 0.2, 0.3), RevoluteMDH(0.1, 0.2, 0.3)],
                      np.zeros((2, 10)))


@pytest.mark.parametrize("convention", ["mdh", "dh"])
def test_forward_kinematics_is_the_product_of_row_transforms(rng, convention):
    robot = random_table_robot(rng, convention, 5)
    q = rng.uniform(-3, 3, size=(4, 5))
    poses = forward_kinematics(robot, q)
    for k in range(4):
        pose = np.eye(4)
        for i, row in enumerate(robot.table):
            pose = pose @ row.joint("j").transform(q[k, i])
            assert_close(poses[k, i], pose, atol=1e-13)


def test_forward_kinematics_matches_pinocchio_frames(rng):
    robot = random_table_robot(rng, "dh", 6, prismatic=0.5)
    model = to_pinocchio(robot)
    data = model.createData()
    q = rng.uniform(-3, 3, size=(3, 6))
    poses, tools = forward_kinematics(robot, q), tool_pose(robot, q)
    for k in range(3):
        pin.framesForwardKinematics(model, data, q[k])
        for i, name in enumerate(robot.link_names):
            assert_close(poses[k, i], data.oMf[model.getFrameId(name)].homogeneous, atol=1e-13)
        assert_close(tools[k], data.oMf[model.getFrameId("tool")].homogeneous, atol=1e-13)


def test_panda_frames_are_franka_description_frames(rng):
    """Franka publishes its joint origins as xyz/rpy (URDF style); chaining them must give the
    same link frames and flange as the MDH table of Gaz Fig. 1."""
    spec = yaml.safe_load(reference_path("panda-franka-description", "fer",
                                         "kinematics.yaml").read_text())
    robot = load_robot("panda")
    q = rng.uniform(robot.limits.lower, robot.limits.upper, size=(5, 7))
    poses, flange = forward_kinematics(robot, q), tool_pose(robot, q)

    def origin(entry):
        k = entry["kinematic"]
        out = np.eye(4)
        out[:3, :3] = Rotation.from_euler("xyz", [k["roll"], k["pitch"], k["yaw"]]).as_matrix()
        out[:3, 3] = [k["x"], k["y"], k["z"]]
        return out

    for sample in range(5):
        pose = np.eye(4)
        for i in range(7):
            pose = pose @ origin(spec[f"joint{i + 1}"]) @ _rz(q[sample, i])
            assert_close(poses[sample, i], pose, atol=1e-12)
        assert_close(flange[sample], pose @ origin(spec["joint8"]), atol=1e-12)
