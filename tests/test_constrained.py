"""Physically constrained identification (CLS-1/2/3, log-Cholesky) on twin data with known
truth; the Jaco2 paper's finding on badly exciting data."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
from conftest import published_panda_cad

from dynid.evaluation.validate import mass_matrix_check
from dynid.excitation.optimize import random_fourier
from dynid.friction.models import ViscousCoulomb
from dynid.identification.constrained.cls import identify_constrained
from dynid.identification.linear.idim import identify
from dynid.metrics import rmse
from dynid.robot import load_robot
from dynid.simulate.twin import SensorModel, simulate_open_loop


@pytest.fixture(scope="module")
def twin():
    friction = ViscousCoulomb(np.full(7, 0.1), np.full(7, 0.2), np.full(7, -0.05))
    truth = load_robot("panda").with_friction(friction)
    sensor = SensorModel(torque_noise_std=0.2)
    fit = simulate_open_loop(truth, random_fourier(truth, seed=1), duration=14.0, rate=100.0,
                             sensor=sensor, seed=1)
    check = simulate_open_loop(truth, random_fourier(truth, seed=2), duration=14.0, rate=100.0,
                               sensor=sensor, seed=2)
    return truth, fit, check


def _validation(model, data):
    return rmse(data.tau, model.predict(data.q, data.dq, data.ddq))


@pytest.mark.parametrize("method", ["cls3", "log-cholesky"])
def test_consistent_and_as_good_as_unconstrained(twin, method):
    truth, fit, check = twin
    unconstrained = _validation(identify(truth, fit), check)
    result = identify_constrained(truth, fit, method=method,
                                  prior=load_robot("panda-cad").parameters)
    assert result.consistency.consistent
    assert result.model.std_kind == "lower bound"  # the unconstrained formula
    assert mass_matrix_check(result.model.robot, n_samples=300)["positive"]
    assert (_validation(result.model, check) <= 1.05 * unconstrained).all()
    # the regulariser holds the unidentifiable directions: no drift to absurd masses
    assert abs(result.parameters[:, 0].sum() / truth.total_mass - 1.0) < 0.25


@pytest.mark.parametrize("method", ["cls1", "cls2"])
def test_partial_constraints_fit_and_report(twin, method):
    truth, fit, check = twin
    result = identify_constrained(truth, fit, method=method)
    assert result.success
    masses = result.parameters[:, 0]
    assert ((masses >= 0) & (masses <= 10.0 + 1e-6)).all()  # Table VIII mass bounds
    assert (_validation(result.model, check)
            <= 1.05 * _validation(identify(truth, fit), check)).all()


def test_cls3_generalises_where_uls_breaks():
    """The Jaco2 paper's finding: on short, badly exciting data (a slow, small motion), ULS
    yields an inertia matrix that is not positive definite and generalises poorly; CLS-3 stays
    consistent and validates better."""
    friction = ViscousCoulomb(np.full(7, 0.1), np.full(7, 0.2), np.full(7, -0.05))
    truth = load_robot("panda").with_friction(friction)
    sensor = SensorModel(torque_noise_std=0.5)
    poor = simulate_open_loop(truth, random_fourier(truth, seed=5, margin=0.3), duration=13.5,
                              rate=100.0, sensor=sensor, seed=1)
    check = simulate_open_loop(truth, random_fourier(truth, seed=2), duration=14.0,
                               rate=100.0, sensor=sensor, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the ill-conditioning warning is the point here
        uls = identify(truth, poor)
    assert not mass_matrix_check(uls._geometry, uls._links, n_samples=300)["positive"]
    cls3 = identify_constrained(truth, poor, method="cls3",
                                prior=load_robot("panda-cad").parameters)
    assert cls3.consistency.consistent
    assert mass_matrix_check(cls3.model.robot, n_samples=300)["positive"]
    assert np.mean(_validation(cls3.model, check)) < 0.7 * np.mean(_validation(uls, check))


def test_badly_scaled_problem_still_solves(twin):
    """Torques in mN m (a 1000x scale change) and a prior far from the truth: scaling inside
    keeps Clarabel on track."""
    truth, fit, _ = twin
    from dynid.data.dataset import Dataset

    scaled = Dataset(t=fit.t, q=fit.q, dq=fit.dq, ddq=fit.ddq, tau=fit.tau * 1e3)
    heavy = truth.with_parameters(truth.parameters * 1e3)
    result = identify_constrained(heavy.with_friction(ViscousCoulomb.zeros(7)), scaled,
                                  method="cls3",
                                  bounds=_scaled_bounds(truth.bounds, 1e3))
    assert result.success and result.consistency.consistent


def _scaled_bounds(bounds, factor):
    from dynid.robot.bounds import LinkBounds, ParameterBounds

    return ParameterBounds(tuple(
        LinkBounds(mass=(b.mass[0] * factor, b.mass[1] * factor), com_lower=b.com_lower,
                   com_upper=b.com_upper) for b in bounds.links),
        total_mass=(bounds.total_mass[0] * factor, bounds.total_mass[1] * factor))


def test_bad_inputs(twin):
    truth, fit, _ = twin
    with pytest.raises(ValueError, match="`method` must be one of"):
        identify_constrained(truth, fit, method="cls4")
    with pytest.raises(ValueError, match="has no parameter bounds"):
        identify_constrained(dataclasses.replace(load_robot("arm3"), bounds=None), fit)
    with pytest.raises(ValueError, match=r"log-cholesky .* euclidean regulariser only"):
        identify_constrained(truth, fit, method="log-cholesky", regulariser="entropic")
    with pytest.raises(ValueError, match="entropic divergence needs the pseudo-inertia"):
        identify_constrained(truth, fit, method="cls1", regulariser="entropic")
    with pytest.raises(ValueError, match=r"`prior` must be \(7, 10\)"):
        identify_constrained(truth, fit, prior=np.zeros((3, 10)))
    with pytest.raises(ValueError, match="`weight` must be a number >= 0"):
        identify_constrained(truth, fit, weight=-1.0)


def test_entropic_regulariser_trades_fit_for_the_prior(twin):
    """The log-det divergence (Lee, Wensing & Park): at its default weight as good as ULS on
    validation; heavier weights pull towards the CAD prior, monotonically."""
    truth, fit, check = twin
    cad = load_robot("panda-cad").parameters
    unconstrained = _validation(identify(truth, fit), check)
    distances = []
    for weight in (None, 1e-4, 1e-2):
        result = identify_constrained(truth, fit, method="cls3", prior=cad,
                                      regulariser="entropic", weight=weight)
        assert result.success and result.consistency.consistent
        if weight is None:
            assert (_validation(result.model, check) <= 1.05 * unconstrained).all()
        distances.append(np.abs(result.parameters - cad).max())
    assert distances[0] > distances[1] > distances[2]


def test_prior_weight_auto_picks_by_held_out_error(twin):
    """`weight="auto"`: the weight of least held-out error over the log's time blocks, with
    the curve in the report; on the twin it predicts another log no worse than the default."""
    truth, fit, check = twin
    from dynid.identification.constrained.cls import AUTO_BLOCKS, AUTO_WEIGHTS

    prior = load_robot("panda-cad").parameters
    auto = identify_constrained(truth, fit, prior=prior, weight="auto")
    curve = auto.model.report["prior_weight_curve"]
    assert curve["weights"] == list(AUTO_WEIGHTS) and curve["blocks"] == AUTO_BLOCKS
    chosen = int(np.argmin(curve["held_out_squared_error"]))
    assert auto.model.report["prior_weight"] == AUTO_WEIGHTS[chosen] == curve["chosen"]
    default = identify_constrained(truth, fit, prior=prior)
    error = [np.linalg.norm(model.predict(check.q, check.dq, check.ddq) - check.tau)
             for model in (auto.model, default.model)]
    assert error[0] <= 1.05 * error[1], error


def test_an_inconsistent_prior_is_named(twin):
    """Franka's published link 4 breaks the triangle inequality: the regulariser would pull
    towards it, and a warning says so; the built-in panda-cad (the nearest body) warns not."""
    from dynid.identification import InconsistentPriorWarning

    truth, fit, _ = twin
    with pytest.warns(InconsistentPriorWarning, match=r"not physically consistent at link4"):
        identify_constrained(truth, fit, method="cls1", prior=published_panda_cad().parameters)
    with warnings.catch_warnings():
        warnings.simplefilter("error", InconsistentPriorWarning)
        identify_constrained(truth, fit, method="cls1", prior=load_robot("panda-cad").parameters)


@pytest.mark.filterwarnings("always::dynid.identification.RankDeficiencyWarning")
@pytest.mark.parametrize("method", ["cls1", "log-cholesky", "pc-ridge"])
def test_a_log_too_short_to_determine_the_model_is_named(tmp_path, capsys, method):
    """Issue 31: a 5-sample log (15 equations, 24 unknowns) was fitted with exit 0 and "rank
    24": the prior and the bounds, not the data, set 9 directions. The estimate stands (a
    prior is information), but a RankDeficiencyWarning says so, on the command line and in
    the model's report (`data_rank`, `undetermined`); a log that determines the model has
    its rank there and no warning."""
    import json

    from dynid.cli import main
    from dynid.data import write_dataset
    from dynid.identification import RankDeficiencyWarning
    from dynid.model.linear_model import load_model

    arm = load_robot("arm3")
    log = simulate_open_loop(arm, random_fourier(arm, seed=2), duration=14.0, rate=100.0,
                             sensor=SensorModel(torque_noise_std=0.3), seed=1)
    short = dataclasses.replace(log, **{field: getattr(log, field)[:5]
                                        for field in ("t", "q", "dq", "tau", "ddq")})
    write_dataset(tmp_path / "short.csv", short)
    argv = ["identify", "arm3", str(tmp_path / "short.csv"), "--as-is", "--method", method,
            "-o", str(tmp_path / "model.yaml")]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert (f"dynid: warning: {method}: the data determine only 15 of 24 unknowns (15 "
            "equations)") in err and "[RankDeficiencyWarning]" in err, err
    assert "rank 24 (the data determine 15: the prior and the bounds set the rest)" in out
    report = load_model(tmp_path / "model.yaml").report
    assert report["data_rank"] == 15 and "undetermined" in report
    if method == "cls1":  # the library's word, and none for a log that determines the model
        with pytest.warns(RankDeficiencyWarning, match="the prior and the bounds, not the "
                          "data, set"):
            identify_constrained(arm, short, method=method)
        write_dataset(tmp_path / "long.csv", log)
        assert main([*argv[:2], str(tmp_path / "long.csv"), *argv[3:], "--json"]) == 0
        out, err = capsys.readouterr()
        assert "RankDeficiencyWarning" not in err
        payload = json.loads(out)
        assert payload["data_rank"] == 24 and "undetermined" not in payload


def test_an_empty_prior_is_refused_by_name(tmp_path, capsys):
    """Issue 31: `--prior ''` read as "no prior given" and fitted towards the default."""
    from dynid.cli import main

    for command in (["identify", "arm3", "log.csv", "--method", "cls3"],
                    ["compare", "arm3", "log.csv"], ["retrieve", "arm3", "model.yaml"]):
        with pytest.raises(SystemExit) as exit_:
            main([*command, "--prior", ""])
        assert exit_.value.code == 2
        assert ("argument --prior: expected a built-in robot name or a robot file, got ''"
                in capsys.readouterr().err), command
