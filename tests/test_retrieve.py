"""Feasible-parameter retrieval (Gaz et al. 2019 §V): the convex SDP and Algorithm 1's
penalty search, from the truth's own coefficients and from Gaz's published ones."""

from __future__ import annotations

import dataclasses
import json
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from conftest import assert_close, gaz_reverse_engineered_model

from dynid.cli import main
from dynid.identification.retrieval.retrieve import (
    _PenaltyProblem,
    _search_box,
    gaz2019_penalty_weights,
    parameter_scale,
    retrieve_penalty,
    retrieve_sdp,
)
from dynid.model.base_parameters import robot_base_parameters
from dynid.model.consistency import check_consistency
from dynid.robot import load_robot
from dynid.robot.bounds import ParameterBounds
from dynid.robot.inertia import INERTIA


@pytest.fixture(scope="module")
def panda_static():
    panda = load_robot("panda")
    base = robot_base_parameters(panda, kind="static", drop_joint1_gravity=True)
    return panda, base, base.base(panda.parameters.ravel())


@pytest.mark.parametrize("method", ["sdp", "penalty"])
def test_retrieval_from_the_truth_coefficients_is_exact(panda_static, method):
    panda, base, coefficients = panda_static
    retrieve = retrieve_sdp if method == "sdp" else retrieve_penalty
    result = retrieve(panda, base, coefficients)  # penalty: the Q = 8, kappa = 10
    assert result.relative_error_percent < 1e-4  # relative 1e-6
    assert result.consistent and result.success
    assert 16.0 <= result.total_mass <= 20.0
    assert check_consistency(result.parameters, panda.bounds).within_bounds


@pytest.fixture(scope="module")
def gaz_table3():
    """Table III pi_RE, its two coefficients of relative std > 30 % dropped as Gaz did, and
    the relative error of Gaz's own published p-hat on the 41 kept."""
    model, _ = gaz_reverse_engineered_model()
    panda = load_robot("panda")
    keep = np.setdiff1d(np.arange(model.base.rank), model.report["dropped"])
    published = model.base.base(panda.parameters.ravel())
    error = 100 * (np.linalg.norm((published - model.coefficients)[keep])
                   / np.linalg.norm(model.coefficients[keep]))
    return panda, model, error


@pytest.mark.parametrize("method", ["sdp", "penalty"])
def test_gaz2019_table3_retrieval_beats_the_published_parameters(gaz_table3, method):
    """With Table VIII's bounds and 16-20 kg, both methods reproduce the 41 kept coefficients
    better than Gaz's published p-hat (0.895 %) — SDP 0.49 %, penalty ~0.50 % — with every link
    consistent and within its bounds."""
    panda, model, published_error = gaz_table3
    assert len(model.report["dropped"]) == 2
    assert published_error == pytest.approx(0.895, abs=0.01)
    retrieve = retrieve_sdp if method == "sdp" else retrieve_penalty
    result = retrieve(panda, model.base, model.coefficients, exclude=model.report["dropped"])
    assert result.residual.size == 41
    assert result.consistent
    assert result.relative_error_percent < 0.6 * published_error


def test_penalty_problem_jacobians_match_finite_differences(panda_static):
    panda, base, coefficients = panda_static
    rigid = base.regrouping[:, :70]
    lower, upper = _search_box(panda.bounds)
    sizes = parameter_scale(panda.bounds).reshape(7, 10)
    problem = _PenaltyProblem(regrouping=rigid, target=coefficients, lower=lower, upper=upper,
                              total=(16.0, 20.0), inertia_scale=sizes[:, INERTIA].max(axis=1),
                              mass_scale=4.0)
    u = np.random.default_rng(3).uniform(size=70)
    for value, jacobian in ((problem.residual, problem.residual_jacobian),
                            (lambda x: problem.margins(x)[0], lambda x: problem.margins(x)[1]),
                            (lambda x: problem.violations(x)[0],
                             lambda x: problem.violations(x)[1])):
        numeric = np.empty_like(jacobian(u))
        for k in range(70):
            step = np.zeros(70)
            step[k] = 1e-7
            numeric[:, k] = (value(u + step) - value(u - step)) / 2e-7
        assert np.abs(jacobian(u) - numeric).max() < 1e-5 * max(np.abs(numeric).max(), 1.0)
    assert np.allclose(problem.violations(u)[0], problem.violation_values(u), rtol=1e-12)


def test_penalty_runs_through_any_executor_and_reports_each_run(panda_static):
    panda, base, coefficients = panda_static
    lines = []
    with ThreadPoolExecutor(max_workers=2) as pool:
        result = retrieve_penalty(panda, base, coefficients, restarts=2, stages=2,
                                  annealing_evaluations=200, executor=pool,
                                  progress=lines.append)
    assert len(lines) == 2 and all("penalty retrieval: run" in line for line in lines)
    assert [run["seed"] for run in result.extra["runs"]] == [0, 1]
    assert result.extra["weights"] == [0.0, 10.0]
    assert result.to_json()["restarts"] == 2
    assert gaz2019_penalty_weights(4) == (0.0, 10.0, 20.0, 30.0)  # xi_1 = 0, xi_k+1 = 10 k


def test_infeasible_bounds_name_the_conflict(panda_static):
    panda, base, coefficients = panda_static

    def with_masses(low, high):
        return ParameterBounds(tuple(type(b)(mass=(low, high), com_lower=b.com_lower,
                                             com_upper=b.com_upper)
                                     for b in panda.bounds.links))

    for retrieve in (retrieve_sdp, retrieve_penalty):
        with pytest.raises(ValueError, match=r"\[5.0, 10.0\] kg lies below the sum of the "
                                             r"links' lower mass bounds \(14 kg\)"):
            retrieve(panda, base, coefficients, bounds=with_masses(2.0, 10.0),
                     total_mass=(5.0, 10.0))
        with pytest.raises(ValueError, match=r"lies above the sum of the links' upper mass"):
            retrieve(panda, base, coefficients, bounds=with_masses(0.0, 1.0),
                     total_mass=(16.0, 20.0))


def test_bad_arguments_are_named(panda_static):
    panda, base, coefficients = panda_static
    with pytest.raises(ValueError, match=r"`exclude` holds base-coefficient indices in \[0, 43"):
        retrieve_sdp(panda, base, coefficients, exclude=[43])
    with pytest.raises(ValueError, match="`weights` must be 3 values >= 0"):
        retrieve_penalty(panda, base, coefficients, stages=3, weights=[0.0, 1.0])
    with pytest.raises(ValueError, match="`restarts` and `stages` must be >= 1"):
        retrieve_penalty(panda, base, coefficients, restarts=0)
    arm = load_robot("arm3")
    for retrieve in (retrieve_sdp, retrieve_penalty):  # not scipy's "function create NaN"
        with pytest.raises(ValueError, match="every rigid-body coefficient is zero"):
            retrieve(arm, robot_base_parameters(arm), np.zeros(robot_base_parameters(arm).rank))
    with pytest.raises(ValueError, match="has no parameter bounds"):
        arm = dataclasses.replace(load_robot("arm3"), bounds=None)  # the built-in's are derived
        retrieve_penalty(arm, robot_base_parameters(arm), np.zeros(robot_base_parameters(
            arm).rank))


def test_retrieve_command(capsys, tmp_path):
    from dynid.data.dataset import StaticData
    from dynid.dynamics import gravity_torque, mass_matrix
    from dynid.identification.linear.reverse_engineering import identify_static
    from dynid.model.linear_model import save_model
    from dynid.robot import load_robot_file

    panda = load_robot("panda")
    q = np.random.default_rng(0).uniform(panda.limits.lower, panda.limits.upper, (200, 7))
    model = identify_static(panda, StaticData(q=q, M=mass_matrix(panda, q),
                                              g=gravity_torque(panda, q)))
    save_model(model, tmp_path / "coefficients.yaml")
    assert main(["retrieve", "panda", str(tmp_path / "coefficients.yaml"), "--prior",
                 "panda-cad", "--json", "-o", str(tmp_path / "p.yaml"), "--parameters-output",
                 str(tmp_path / "params.yaml")]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert {"relative_error_percent", "consistent", "total_mass", "seconds"} <= set(payload)
    assert payload["consistent"] is True and payload["relative_error_percent"] < 1e-4
    retrieved = load_robot_file(tmp_path / "params.yaml")
    assert check_consistency(retrieved.parameters, retrieved.bounds).within_bounds
    # -o: a model every model-reading command takes, carried by the retrieved full set
    from dynid.model.linear_model import load_model

    carried = load_model(tmp_path / "p.yaml")
    assert carried.report["method"] == "retrieve-sdp"
    assert_close(carried.physical_parameters, retrieved.parameters, rtol=1e-9, atol=1e-12)
    assert main(["export", str(tmp_path / "p.yaml"), "-o", str(tmp_path / "p.urdf")]) == 0
    assert main(["retrieve", "panda", str(tmp_path / "coefficients.yaml"), "-o",
                 str(tmp_path / "r.urdf"), "--parameters-output",
                 str(tmp_path / "r.yaml")]) == 2
    assert "give one of them" in capsys.readouterr().err
    assert main(["retrieve", "panda", str(tmp_path / "coefficients.yaml"), "--method",
                 "penalty", "--restarts", "2", "--stages", "3", "--json"]) == 0
    captured = capsys.readouterr()
    payload = json.loads(captured.out)
    assert payload["method"] == "penalty" and len(payload["runs"]) == 2
    assert captured.err.count("penalty retrieval: run") == 2
    assert main(["retrieve", "panda", str(tmp_path / "coefficients.yaml"), "--stages",
                 "3"]) == 2
    assert "are for --method penalty" in capsys.readouterr().err


def test_penalty_without_a_total_mass_range(panda_static):
    panda, base, coefficients = panda_static
    open_range = ParameterBounds(panda.bounds.links)  # no total-mass range
    result = retrieve_penalty(panda, base, coefficients, bounds=open_range, restarts=1,
                              stages=2, annealing_evaluations=100)
    assert result.consistency.consistent


def test_penalty_with_a_prior_lands_near_it(panda_static):
    """Beyond Gaz: the coefficients fix r combinations only; without a prior the search
    returns whatever feasible set its start reaches (a heavy link 2), with one it stays near
    the prior and fits as well."""
    panda, base, coefficients = panda_static
    prior = load_robot("panda-cad").parameters
    options = {"restarts": 2, "stages": 3, "annealing_evaluations": 200,
               "executor": ThreadPoolExecutor(max_workers=2)}
    free = retrieve_penalty(panda, base, coefficients, **options)
    pulled = retrieve_penalty(panda, base, coefficients, prior=prior, **options)
    assert pulled.success and pulled.extra["prior_weight"] == 1e-3
    distance = [np.linalg.norm(result.parameters[:, 0] - prior[:, 0])
                for result in (free, pulled)]
    assert distance[1] < 0.5 * distance[0], distance
    assert pulled.relative_error_percent < 0.1
    with pytest.raises(ValueError, match="`prior_weight` must be > 0"):
        retrieve_penalty(panda, base, coefficients, prior=prior, prior_weight=0.0, **options)
