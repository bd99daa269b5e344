"""Parametrisations (pseudo-inertia, log-Cholesky) and consistency checks."""

from __future__ import annotations

import numpy as np
from conftest import assert_close, random_link_parameters

from dynid.evaluation.validate import mass_matrix_check
from dynid.model.consistency import check_consistency
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


def test_without_bounds_nothing_is_claimed_within_them():
    """Issue 11: a robot without bounds was "within the bounds: yes". Unchecked is None, with
    the reason, in the text and the JSON."""
    import dataclasses
    import json

    arm = dataclasses.replace(load_robot("arm3"), bounds=None)  # the built-in's are derived
    report = check_consistency(arm.parameters, arm.bounds)
    assert report.consistent and report.within_bounds is None
    assert report.lines()[-1] == ("  physically consistent: yes; within the bounds: not checked "
                                  "(the robot has no bounds)")
    payload = json.loads(json.dumps(report.to_json()))
    assert payload["within_bounds"] is None and payload["com_in_box"] is None
    assert payload["density_realizable"] is None
    assert payload["not_checked"]["within_bounds"] == "the robot has no bounds"
    assert payload["not_checked"]["density_realizable"] == "the robot has no bounds"


def test_density_realizability_says_why_it_was_not_checked():
    """The Panda's bounds have no bounding ellipsoids: density realizability is null, and the
    JSON and the text say why; with an ellipsoid on one link, the others are named."""
    import dataclasses

    from dynid.robot.bounds import ParameterBounds

    panda = load_robot("panda")
    report = check_consistency(panda.parameters, panda.bounds)
    assert report.within_bounds is True and report.density_realizable == [None] * 7
    assert report.to_json()["not_checked"] == {
        "density_realizable": "no bounding ellipsoids in the robot's bounds"}
    assert ("  in ellipsoid: not checked (no bounding ellipsoids in the robot's bounds)"
            in report.lines())
    assert report.lines()[-1].endswith("within the bounds: yes")
    links = list(panda.bounds.links)
    links[0] = dataclasses.replace(links[0], ellipsoid_centre=np.zeros(3),
                                   ellipsoid_semi_axes=np.full(3, 1.0))
    one = check_consistency(panda.parameters, ParameterBounds(links, total_mass=None))
    assert one.density_realizable[0] is True and one.density_realizable[1:] == [None] * 6
    assert one.not_checked() == {
        "density_realizable": "no bounding ellipsoid for links 2, 3, 4, 5, 6, 7 in the robot's "
                              "bounds",
        "total_mass_in_range": "no total-mass range in the robot's bounds"}
