"""Parametrisations (pseudo-inertia, log-Cholesky) and consistency checks."""

from __future__ import annotations

import numpy as np
from conftest import assert_close, random_link_parameters

from dynid.evaluation.validate import mass_matrix_check
from dynid.identification.consistency import check_consistency
from dynid.robot import load_robot
from dynid.robot.inertia import (
    from_com,
    from_log_cholesky,
    from_pseudo_inertia,
    pseudo_inertia,
    to_log_cholesky,
)


def test_pseudo_inertia_and_log_cholesky_round_trip(rng):
    params = random_link_parameters(rng, 6)
    assert_close(from_pseudo_inertia(pseudo_inertia(params)), params, atol=1e-14)
    assert (np.linalg.eigvalsh(pseudo_inertia(params)) > 0).all()
    assert_close(from_log_cholesky(to_log_cholesky(params)), params, atol=1e-13)
    # every real theta is a physical body
    bodies = from_log_cholesky(rng.standard_normal((50, 10)))
    assert check_consistency(bodies).consistent


def test_pseudo_inertia_is_the_triangle_inequality():
    """A thin rod (moments 0, m L^2/12, m L^2/12) sits on the boundary; moments (1, 1, 3)
    violate the triangle inequality: J has a negative eigenvalue."""
    bad = from_com(1.0, np.zeros(3), np.diag([1.0, 1.0, 3.0]))
    report = check_consistency(bad)
    assert report.inertia_positive == [True] and report.triangle == [False]
    assert not report.consistent
    assert np.linalg.eigvalsh(pseudo_inertia(bad)).min() < 0
    negative = from_com(1.0, np.zeros(3), np.eye(3)) * np.array([-1] + [1] * 9)
    assert check_consistency(negative).mass_positive == [False]


def test_bounds_and_mass_matrix_checks():
    panda = load_robot("panda")
    report = check_consistency(panda.parameters, panda.bounds)
    assert report.consistent and report.within_bounds and report.total_mass_in_range
    moved = panda.parameters.copy()
    moved[6, 1:4] = moved[6, 0] * np.array([0.3, 0.0, 0.1])  # CoM of link 7 far outside
    assert check_consistency(moved, panda.bounds).com_in_box[6] is False
    assert mass_matrix_check(panda, n_samples=200)["positive"]
