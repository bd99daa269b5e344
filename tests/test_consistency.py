"""Parametrisations (pseudo-inertia, log-Cholesky), consistency checks, and the convex
feasible-parameter retrieval."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import assert_close, gaz_reverse_engineered_model, random_link_parameters

from dynid.cli import main
from dynid.consistency import ParameterBounds, check_consistency, mass_matrix_check
from dynid.identifiability import robot_base_parameters
from dynid.inertia import (
    from_com,
    from_log_cholesky,
    from_pseudo_inertia,
    pseudo_inertia,
    to_log_cholesky,
)
from dynid.retrieve import retrieve_sdp
from dynid.robot import load_robot


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


def test_retrieval_from_the_truth_coefficients_is_exact():
    panda = load_robot("panda")
    base = robot_base_parameters(panda, kind="static", drop_joint1_gravity=True)
    result = retrieve_sdp(panda, base, base.base(panda.parameters.ravel()))
    assert result.relative_error_percent < 1e-4  # relative 1e-6
    assert result.consistent and result.success
    assert 16.0 <= result.total_mass <= 20.0


def test_gaz2019_retrieval_from_the_reverse_engineered_coefficients():
    """Table III pi_RE with Table VIII bounds and 16-20 kg: the SDP's relative error beats the
    one of Gaz's own published p-hat (0.90 %), with every link consistent and within bounds."""
    model, _ = gaz_reverse_engineered_model()
    panda = load_robot("panda")
    published = model.base.base(panda.parameters.ravel())
    published_error = 100 * (np.linalg.norm(published - model.coefficients)
                             / np.linalg.norm(model.coefficients))
    assert published_error == pytest.approx(0.895, abs=0.01)
    result = retrieve_sdp(panda, model.base, model.coefficients)
    assert result.consistent
    assert result.relative_error_percent < 0.6 * published_error


def test_infeasible_bounds_name_the_conflict():
    panda = load_robot("panda")
    base = robot_base_parameters(panda, kind="static", drop_joint1_gravity=True)
    coefficients = base.base(panda.parameters.ravel())

    def with_masses(low, high):
        return ParameterBounds(tuple(type(b)(mass=(low, high), com_lower=b.com_lower,
                                             com_upper=b.com_upper)
                                     for b in panda.bounds.links))

    with pytest.raises(ValueError, match=r"\[5.0, 10.0\] kg lies below the sum of the links' "
                                         r"lower mass bounds \(14 kg\)"):
        retrieve_sdp(panda, base, coefficients, bounds=with_masses(2.0, 10.0),
                     total_mass=(5.0, 10.0))
    with pytest.raises(ValueError, match=r"lies above the sum of the links' upper mass bounds"):
        retrieve_sdp(panda, base, coefficients, bounds=with_masses(0.0, 1.0),
                     total_mass=(16.0, 20.0))


def test_retrieve_command(capsys, tmp_path):
    from dynid.data import StaticData
    from dynid.dynamics import gravity_torque, mass_matrix
    from dynid.identify import identify_static
    from dynid.model import save_model
    from dynid.robot import load_robot_file

    panda = load_robot("panda")
    q = np.random.default_rng(0).uniform(panda.limits.lower, panda.limits.upper, (200, 7))
    model = identify_static(panda, StaticData(q=q, M=mass_matrix(panda, q),
                                              g=gravity_torque(panda, q)))
    save_model(model, tmp_path / "coefficients.yaml")
    assert main(["retrieve", "panda", str(tmp_path / "coefficients.yaml"), "--prior",
                 "panda-cad", "--json", "-o", str(tmp_path / "params.yaml")]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert {"relative_error_percent", "consistent", "total_mass", "seconds"} <= set(payload)
    assert payload["consistent"] is True and payload["relative_error_percent"] < 1e-4
    retrieved = load_robot_file(tmp_path / "params.yaml")
    assert check_consistency(retrieved.parameters, retrieved.bounds).within_bounds
