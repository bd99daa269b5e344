"""M(q) against pinocchio's CRBA; symmetric positive definite; forward dynamics against ABA."""

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

from dynid.dynamics import forward_dynamics, mass_matrix, rnea
from dynid.robot import load_robot, to_pinocchio


def _crba(model, q):
    data = model.createData()
    out = []
    for x in q:
        m = pin.crba(model, data, pinocchio_q(model, x))
        out.append(np.triu(m) + np.triu(m, 1).T)
    return np.array(out)


@pytest.mark.parametrize("kind", ["mdh", "dh", "urdf"])
def test_mass_matrix_matches_crba(rng, tmp_path, kind):
    if kind == "urdf":
        robot, text = random_urdf_robot(rng, 6, tmp_path)
        model = pinocchio_from_urdf(text)
    else:
        robot = random_table_robot(rng, kind, 6, prismatic=0.4)
        model = to_pinocchio(robot)
    q, _, _ = random_states(rng, 50, robot.n_joints)
    m = mass_matrix(robot, q)
    assert_close(m, _crba(model, q), rtol=1e-10, atol=1e-12)
    assert_close(m, np.swapaxes(m, -1, -2), rtol=0, atol=0)
    assert (np.linalg.eigvalsh(m) > 0).all()


def test_mass_matrix_columns_are_rnea_with_unit_accelerations(rng):
    robot = load_robot("panda")
    q = random_states(rng, 3, 7)[0]
    zero = np.zeros(3 * 7).reshape(3, 7)
    m = mass_matrix(robot, q)
    for j in range(7):
        unit = np.zeros((3, 7))
        unit[:, j] = 1.0
        column = rnea(robot, q, zero, unit, gravity=np.zeros(3))
        assert_close(m[:, :, j], column, atol=1e-12)


def test_forward_dynamics_matches_aba_and_inverts_rnea(rng):
    robot = random_table_robot(rng, "dh", 6)
    model = to_pinocchio(robot)
    data = model.createData()
    q, dq, ddq = random_states(rng, 20, 6)
    tau = rnea(robot, q, dq, ddq)
    assert_close(forward_dynamics(robot, q, dq, tau), ddq, rtol=1e-8, atol=1e-8)
    expected = np.array([pin.aba(model, data, q[k], dq[k], tau[k]) for k in range(20)])
    assert_close(forward_dynamics(robot, q, dq, tau), expected, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("kind", ["mdh", "dh", "urdf"])
@pytest.mark.parametrize("n_samples", [7, 5000])  # the serial kernel, and the parallel one
def test_forward_dynamics_solves_the_mass_matrix_with_rotor_inertias(rng, tmp_path, kind,
                                                                     n_samples):
    # the articulated-body algorithm against M(q)^-1 (tau - c - g) by a dense solve, on
    # prismatic and revolute joints with the drives' rotor inertias on M's diagonal
    if kind == "urdf":
        robot, _ = random_urdf_robot(rng, 5, tmp_path)
    else:
        robot = random_table_robot(rng, kind, 6, prismatic=0.4)
    robot = robot.with_rotor_inertia(rng.uniform(0.0, 0.5, robot.n_joints))
    n = robot.n_joints
    q, dq, _ = random_states(rng, n_samples, n)
    tau = rng.normal(0.0, 10.0, (n_samples, n))
    bias = rnea(robot, q, dq, np.zeros_like(q))
    expected = np.linalg.solve(mass_matrix(robot, q), (tau - bias)[..., None])[..., 0]
    got = forward_dynamics(robot, q, dq, tau)
    assert_close(got, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())
    assert_close(rnea(robot, q, dq, got), tau, rtol=1e-9, atol=1e-9)
    # batch shapes: one sample, and (2, 3, n)
    assert_close(forward_dynamics(robot, q[0], dq[0], tau[0]), got[0], rtol=0, atol=0)
    assert forward_dynamics(robot, q[:6].reshape(2, 3, n), dq[:6].reshape(2, 3, n),
                            tau[:6].reshape(2, 3, n)).shape == (2, 3, n)


def test_forward_dynamics_rejects_non_physical_parameters():
    robot = load_robot("arm3")
    bad = robot.parameters.copy()
    bad[:, 4:] = 0.0
    bad[:, 0] = 0.0
    bad[:, 1:4] = 0.0
    with pytest.raises(ValueError, match="not positive definite"):
        forward_dynamics(robot, np.zeros(3), np.zeros(3), np.ones(3), parameters=bad)
