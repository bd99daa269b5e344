"""RNEA, g(q), c(q, dq) against pinocchio on random chains, and by hand on the 3-DoF arm."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from conftest import (
    assert_close,
    pinocchio_from_urdf,
    pinocchio_q,
    random_states,
    random_table_robot,
    random_urdf_robot,
)

from dynid.dynamics import coriolis_torque, gravity_torque, rnea
from dynid.robot import load_robot, to_pinocchio


def _chains(rng, tmp_path):
    """(our robot, an independent pinocchio model of it) for MDH, DH and URDF chains."""
    for convention in ("mdh", "dh"):
        robot = random_table_robot(rng, convention, 6, prismatic=0.4)
        yield robot, to_pinocchio(robot)
    robot, text = random_urdf_robot(rng, 6, tmp_path)
    model = pinocchio_from_urdf(text)
    model.gravity.linear = robot.gravity
    yield robot, model


def _pin_rnea(model, q, dq, ddq):
    data = model.createData()
    return np.array([pin.rnea(model, data, pinocchio_q(model, q[k]), dq[k], ddq[k])
                     for k in range(q.shape[0])])


@pytest.mark.parametrize("n_samples", [1, 7, 10_000])
def test_rnea_matches_pinocchio_on_random_chains(rng, tmp_path, n_samples):
    for robot, model in _chains(rng, tmp_path):
        q, dq, ddq = random_states(rng, n_samples, robot.n_joints)
        assert_close(rnea(robot, q, dq, ddq), _pin_rnea(model, q, dq, ddq), rtol=1e-10,
                     atol=1e-10)


def test_every_chain_has_prismatic_and_unaligned_joints(rng, tmp_path):
    for robot, _ in _chains(rng, tmp_path):
        assert {j.kind for j in robot.joints} == {"revolute", "prismatic"}, robot.name
        if robot.convention == "urdf":
            assert any(np.count_nonzero(j.axis) > 1 for j in robot.joints)


def test_gravity_and_coriolis_match_pinocchio(rng):
    robot = random_table_robot(rng, "dh", 5)
    model = to_pinocchio(robot)
    data = model.createData()
    q, dq, _ = random_states(rng, 9, robot.n_joints)
    expected_g = np.array([pin.computeGeneralizedGravity(model, data, x) for x in q])
    expected_c = np.array([pin.nonLinearEffects(model, data, x, v) for x, v in zip(q, dq,
                                                                                     strict=True)])
    assert_close(gravity_torque(robot, q), expected_g, atol=1e-10)
    assert_close(coriolis_torque(robot, q, dq), expected_c - expected_g, atol=1e-10)


def test_arm3_gravity_by_hand():
    """3-DoF arm (Szabo 2021): joint 1 vertical; joints 2-3 swing the two rods in a vertical
    plane. With theta2 = q2 + pi/2 and the CoM of each rod at its middle:
    g3 = m3 g (a3/2) cos(t2 + q3),  g2 = g3 + g (m2 a2/2 + m3 a2) cos(t2),  g1 = 0."""
    robot = load_robot("arm3")
    m2, m3 = robot.parameters[1, 0], robot.parameters[2, 0]
    a2 = a3 = 0.5
    g = 9.81
    q = np.array([[0.3, -0.4, 0.9], [-1.0, 1.2, -0.5], [2.0, 0.0, 0.0]])
    t2 = q[:, 1] + np.pi / 2
    g3 = m3 * g * a3 / 2 * np.cos(t2 + q[:, 2])
    g2 = g3 + g * (m2 * a2 / 2 + m3 * a2) * np.cos(t2)
    expected = np.stack([np.zeros(3), g2, g3], axis=1)
    assert_close(gravity_torque(robot, q), expected, atol=1e-12)


def test_parameters_and_gravity_override(rng):
    robot = load_robot("panda")
    other = load_robot("panda-cad")
    q, dq, ddq = random_states(rng, 4, 7)
    assert_close(rnea(robot, q, dq, ddq, parameters=other.parameters),
                 rnea(other, q, dq, ddq))
    assert_close(rnea(robot, q, np.zeros_like(q), np.zeros_like(q), gravity=np.zeros(3)),
                 np.zeros((4, 7)), atol=1e-14)


@pytest.mark.parametrize("shape", [(), (1,), (3, 1, 2)])
def test_batch_shapes(rng, shape):
    robot = load_robot("panda")
    q, dq, ddq = (rng.standard_normal((*shape, 7)) for _ in range(3))
    tau = rnea(robot, q, dq, ddq)
    assert tau.shape == (*shape, 7)
    assert_close(tau.reshape(-1, 7), rnea(robot, q.reshape(-1, 7), dq.reshape(-1, 7),
                                          ddq.reshape(-1, 7)))


def test_bad_inputs_name_the_argument():
    robot = load_robot("panda")
    good = np.zeros((2, 7))
    with pytest.raises(ValueError, match="`q` must have shape"):
        rnea(robot, np.zeros((2, 6)), good, good)
    with pytest.raises(ValueError, match="`dq` contains NaN"):
        rnea(robot, good, np.full((2, 7), np.nan), good)
    with pytest.raises(ValueError, match="`ddq` contains NaN or inf"):
        rnea(robot, good, good, np.full((2, 7), np.inf))
    with pytest.raises(ValueError, match="batch shapes must agree"):
        rnea(robot, good, np.zeros((3, 7)), good)
    with pytest.raises(TypeError, match="`q` must be real numbers"):
        rnea(robot, [["a"] * 7], good[:1], good[:1])
    with pytest.raises(ValueError, match="`parameters` must have shape"):
        rnea(robot, good, good, good, parameters=np.zeros((7, 9)))
    with pytest.raises(TypeError, match="`robot` must be a dynid Robot"):
        rnea("panda", good, good, good)
