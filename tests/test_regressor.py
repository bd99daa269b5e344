"""The regressor: Y pi == our RNEA == pinocchio, and Y == pinocchio's regressor column by column."""

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
from hypothesis import given, settings
from hypothesis import strategies as st

from dynid.dynamics import parameter_names, regressor, rnea
from dynid.robot import load_robot, to_pinocchio
from dynid.robot.inertia import PARAMETER_NAMES, PINOCCHIO_PARAMETER_NAMES


@pytest.mark.parametrize("n_samples", [1, 7, 10_000])
@pytest.mark.parametrize("kind", ["mdh", "dh", "urdf"])
def test_regressor_times_parameters_equals_rnea_and_pinocchio(rng, tmp_path, kind, n_samples):
    if kind == "urdf":
        robot, text = random_urdf_robot(rng, 6, tmp_path)
        model = pinocchio_from_urdf(text)
        model.gravity.linear = robot.gravity
    else:
        robot = random_table_robot(rng, kind, 6, prismatic=0.4)
        model = to_pinocchio(robot)
    q, dq, ddq = random_states(rng, n_samples, robot.n_joints)
    y = regressor(robot, q, dq, ddq)
    assert y.shape == (n_samples, robot.n_joints, 10 * robot.n_joints)
    tau = rnea(robot, q, dq, ddq)
    data = model.createData()
    check = slice(None) if n_samples < 100 else slice(0, n_samples, 37)
    expected = np.array([pin.rnea(model, data, pinocchio_q(model, q[k]), dq[k], ddq[k])
                         for k in range(n_samples)[check]])
    assert_close(y @ robot.parameters.ravel(), tau, rtol=1e-10, atol=1e-10)
    assert_close(tau[check], expected, rtol=1e-10, atol=1e-10)


def test_regressor_columns_equal_pinocchio_after_permutation(rng):
    """Pinocchio orders [m, mc, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]: it swaps Ixz and Iyy (rigeo's
    note). For MDH/URDF-style frames (link frame = joint frame) the columns coincide once
    permuted by names."""
    robot = random_table_robot(rng, "mdh", 5)
    model = to_pinocchio(robot)
    data = model.createData()
    q, dq, ddq = random_states(rng, 3, 5)
    ours = regressor(robot, q, dq, ddq)
    permutation = [PINOCCHIO_PARAMETER_NAMES.index(name) for name in PARAMETER_NAMES]
    assert permutation == [0, 1, 2, 3, 4, 5, 7, 6, 8, 9]
    for k in range(3):
        theirs = pin.computeJointTorqueRegressor(model, data, q[k], dq[k], ddq[k])
        theirs = theirs.reshape(5, 5, 10)[..., permutation].reshape(5, 50)
        assert_close(ours[k], theirs, atol=1e-10)


def test_regressor_is_block_upper_triangular(rng):
    robot = load_robot("panda")
    y = regressor(robot, *random_states(rng, 4, 7))
    for i in range(7):
        for j in range(i):
            assert np.all(y[:, i, 10 * j:10 * j + 10] == 0.0)


def test_parameter_names_follow_the_layout():
    names = parameter_names(load_robot("arm3"))
    assert names[:10] == ["m1", "mx1", "my1", "mz1", "Ixx1", "Ixy1", "Ixz1", "Iyy1", "Iyz1",
                          "Izz1"]
    assert len(names) == 30 and names[-1] == "Izz3"


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=0, max_size=3), seed=st.integers(0, 1000))
def test_any_batch_shape(shape, seed):
    robot = load_robot("arm3")
    rng = np.random.default_rng(seed)
    q, dq, ddq = (rng.standard_normal((*shape, 3)) for _ in range(3))
    y = regressor(robot, q, dq, ddq)
    assert y.shape == (*shape, 3, 30)
    assert_close(y @ robot.parameters.ravel(), rnea(robot, q, dq, ddq), atol=1e-12)


def test_out_argument_is_filled_and_checked(rng):
    robot = load_robot("panda")
    q, dq, ddq = random_states(rng, 5, 7)
    out = np.full((5, 7, 70), np.nan)
    y = regressor(robot, q, dq, ddq, out=out)
    assert np.shares_memory(y, out)
    assert_close(out, regressor(robot, q, dq, ddq))
    with pytest.raises(ValueError, match="`out` must be a writeable C-contiguous float64"):
        regressor(robot, q, dq, ddq, out=np.empty((5, 7, 69)))
    with pytest.raises(ValueError, match="got float32"):
        regressor(robot, q, dq, ddq, out=np.empty((5, 7, 70), dtype=np.float32))
    frozen = np.empty((5, 7, 70))
    frozen.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        regressor(robot, q, dq, ddq, out=frozen)


def test_gravity_override(rng):
    robot = load_robot("panda")
    q, dq, ddq = random_states(rng, 4, 7)
    g = np.array([1.0, -2.0, -9.0])
    assert_close(regressor(robot, q, dq, ddq, gravity=g) @ robot.parameters.ravel(),
                 rnea(robot, q, dq, ddq, gravity=g))
    with pytest.raises(ValueError, match=r"`gravity` must have shape \(3,\)"):
        regressor(robot, q, dq, ddq, gravity=np.zeros(2))


def test_bad_inputs_name_the_argument():
    from dynid.dynamics import forward_dynamics, mass_matrix, tool_pose

    robot = load_robot("panda")
    good = np.zeros((2, 7))
    with pytest.raises(ValueError, match="`ddq` must have shape"):
        regressor(robot, good, good, np.zeros((2, 3)))
    with pytest.raises(ValueError, match="`q` contains NaN"):
        mass_matrix(robot, np.full((2, 7), np.nan))
    with pytest.raises(ValueError, match="`tau` must have shape"):
        forward_dynamics(robot, good, good, np.zeros(6))
    with pytest.raises(ValueError, match="`q` contains NaN or inf"):
        tool_pose(robot, np.full(7, np.inf))
    with pytest.raises(TypeError, match="`q` must be real numbers"):
        regressor(robot, good + 1j, good, good)


def test_read_only_inputs_are_accepted(rng):
    robot = load_robot("panda")
    q, dq, ddq = random_states(rng, 5, 7)
    for array in (q, dq, ddq):
        array.setflags(write=False)
    assert_close(regressor(robot, q, dq, ddq) @ robot.parameters.ravel(),
                 rnea(robot, q, dq, ddq))
