"""Parameter layout and conversions: (m, c, I_com) <-> 10-vector <-> pinocchio, frame changes."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from conftest import assert_close, random_link_parameters, random_rotation

from dynid.robot.inertia import (
    PARAMETER_NAMES,
    from_com,
    from_pinocchio_order,
    inertia_matrix,
    inertia_vector,
    to_com,
    to_pinocchio_order,
    transform_parameters,
)


def test_layout_is_stated_once():
    assert PARAMETER_NAMES == ("m", "mx", "my", "mz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz")


def test_com_round_trip(rng):
    params = random_link_parameters(rng, 6)
    mass, com, inertia = to_com(params)
    assert_close(from_com(mass, com, inertia), params)
    assert_close(from_com(mass, com, inertia_vector(inertia)), params)


def test_steiner_is_explicit(rng):
    mass, com = 2.0, np.array([0.1, -0.2, 0.3])
    inertia_com = np.diag([0.01, 0.02, 0.025])
    pi = from_com(mass, com, inertia_com)
    expected = inertia_com + mass * (com @ com * np.eye(3) - np.outer(com, com))
    assert_close(inertia_matrix(pi[4:]), expected)
    assert_close(pi[1:4], mass * com)


def test_pinocchio_order_against_pinocchio_inertia(rng):
    """pin.Inertia(m, c, I_com).toDynamicParameters() is [m, mc, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]
    about the origin: after our permutation it equals our vector."""
    for pi in random_link_parameters(rng, 5):
        mass, com, inertia = to_com(pi)
        theirs = pin.Inertia(float(mass), com, inertia).toDynamicParameters()
        assert_close(from_pinocchio_order(theirs), pi)
        assert_close(to_pinocchio_order(pi), theirs)
        assert_close(from_pinocchio_order(to_pinocchio_order(pi)), pi, rtol=0, atol=0)
    assert list(to_pinocchio_order(np.arange(10.0))) == [0, 1, 2, 3, 4, 5, 7, 6, 8, 9]


def test_transform_parameters_matches_pinocchio_se3_action(rng):
    pi = random_link_parameters(rng, 1)[0]
    rotation, translation = random_rotation(rng), rng.standard_normal(3)
    mass, com, inertia = to_com(pi)
    moved = pin.SE3(rotation, translation).act(pin.Inertia(float(mass), com, inertia))
    assert_close(transform_parameters(pi, rotation, translation),
                 from_pinocchio_order(moved.toDynamicParameters()))


def test_transform_parameters_is_linear_and_allows_zero_mass(rng):
    a, b = random_link_parameters(rng, 2)
    a[0] = 0.0  # linear map: defined for any 10-vector
    rotation, translation = random_rotation(rng), rng.standard_normal(3)
    assert_close(transform_parameters(a + 2 * b, rotation, translation),
                 transform_parameters(a, rotation, translation)
                 + 2 * transform_parameters(b, rotation, translation))


def test_bad_inputs():
    with pytest.raises(ValueError, match="mass > 0"):
        to_com(np.zeros(10))
    with pytest.raises(ValueError, match=r"`parameters` must have shape \(\*, 10\)"):
        to_pinocchio_order(np.zeros(9))
    with pytest.raises(ValueError, match="`com` must have shape"):
        from_com(1.0, np.zeros(2), np.eye(3))
    with pytest.raises(ValueError, match="`mass` contains NaN"):
        from_com(np.nan, np.zeros(3), np.eye(3))
