"""Parameter layout and conversions: (m, c, I_com) <-> 10-vector <-> pinocchio, frame changes."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from conftest import (
    assert_close,
    random_link_parameters,
    random_rotation,
    with_physical_margin,
)

from dynid.robot.inertia import (
    PARAMETER_NAMES,
    PHYSICAL_RTOL,
    from_com,
    from_pinocchio_order,
    inertia_matrix,
    inertia_vector,
    nearest_physical,
    physical_margin,
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


def test_nearest_physical_raises_only_the_negative_second_moments(rng):
    """Random links pushed out of physical consistency come back as bodies with their mass and
    CoM, their second moment about the CoM moved by its negative eigenvalues alone; physical
    links (the flat result included) are returned bit for bit; any batch shape."""
    bodies = random_link_parameters(rng, 12)
    wrong = np.array([with_physical_margin(pi, margin) for pi, margin in
                      zip(bodies[:8], -np.geomspace(1e-6, 0.5, 8), strict=True)])
    links = np.concatenate([wrong, bodies[8:]]).reshape(3, 4, 10)
    near = nearest_physical(links)
    assert near.shape == (3, 4, 10)
    assert (physical_margin(near) >= -PHYSICAL_RTOL).all()
    assert np.array_equal(nearest_physical(near), near)
    assert np.array_equal(near.reshape(12, 10)[8:], bodies[8:])
    mass, com, inertia = to_com(links)
    near_mass, near_com, near_inertia = to_com(near)
    assert_close(near_mass, mass, rtol=0, atol=0)
    assert_close(near_com, com, rtol=1e-14, atol=1e-15)

    def second_moment(tensor):
        return 0.5 * np.trace(tensor, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) - tensor

    values = np.linalg.eigvalsh(second_moment(inertia))
    change = np.linalg.norm(second_moment(near_inertia) - second_moment(inertia), axis=(-2, -1))
    assert_close(change, np.linalg.norm(np.minimum(values, 0.0), axis=-1), rtol=1e-9,
                 atol=1e-15)
    assert (change.reshape(12)[:8] > 0).all()


def test_nearest_physical_mends_a_broken_triangle_inequality():
    """Principal moments 1 + 2 < 4 (missed by 1): the two smaller grow by 0.5 each, the body
    is flat (1.5 + 2.5 = 4)."""
    pi = from_com(2.0, np.array([0.1, 0.0, -0.2]), np.diag([1.0, 2.0, 4.0]))
    _, _, inertia = to_com(nearest_physical(pi))
    assert_close(inertia, np.diag([1.5, 2.5, 4.0]), rtol=1e-14, atol=1e-14)
    with pytest.raises(ValueError, match="mass > 0"):
        nearest_physical(np.concatenate([[0.0, 0.0, 0.0, 0.0], [1.0, 0, 0, 2.0, 0, 4.0]]))


def test_bad_inputs():
    with pytest.raises(ValueError, match="mass > 0"):
        to_com(np.zeros(10))
    with pytest.raises(ValueError, match=r"`parameters` must have shape \(\*, 10\)"):
        to_pinocchio_order(np.zeros(9))
    with pytest.raises(ValueError, match="`com` must have shape"):
        from_com(1.0, np.zeros(2), np.eye(3))
    with pytest.raises(ValueError, match="`mass` contains NaN"):
        from_com(np.nan, np.zeros(3), np.eye(3))
