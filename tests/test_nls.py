"""Nonlinear identification of physical parameters with friction (Gilbert et al. 2024): truth
recovered from twin data, consistency by construction, and their Tables 6-7 comparison."""

from __future__ import annotations

import numpy as np
import pytest

from dynid.evaluation.validate import mass_matrix_check
from dynid.excitation.optimize import random_fourier
from dynid.friction.models import LuGre, Stribeck
from dynid.identification.nonlinear.nls import compare_friction, identify_nls
from dynid.model.linear_model import load_model, save_model
from dynid.robot import load_robot
from dynid.robot.inertia import to_com
from dynid.simulate.twin import SensorModel, simulate_open_loop

N = 7
STRIBECK = Stribeck(fc=np.linspace(0.2, 0.6, N), fs=np.linspace(0.1, 0.3, N),
                    vs=np.linspace(0.02, 0.1, N), ks=np.linspace(0.8, 2.0, N),
                    fv=np.linspace(0.05, 0.3, N))


def _twin(friction, noise, seed, duration=20.0):
    truth = load_robot("panda").with_friction(friction)
    data = simulate_open_loop(truth, random_fourier(truth, seed=seed), duration=duration,
                              rate=100.0, sensor=SensorModel(torque_noise_std=noise), seed=seed)
    # the search starts from Franka's CAD values, far from the truth (link 1: 2.8 vs 5.0 kg)
    return truth, data, truth.with_parameters(load_robot("panda-cad").parameters)


def _base_error(result, truth):
    base = result.model.base
    expected = base.base(truth.parameters.ravel())
    return np.linalg.norm(base.base(result.parameters.ravel()) - expected) / np.linalg.norm(
        expected)


@pytest.mark.parametrize("friction", [
    STRIBECK,
    LuGre(sigma0=np.linspace(500.0, 2000.0, N), sigma1=np.linspace(0.5, 3.0, N),
          sigma2=np.linspace(0.05, 0.3, N), fc=np.linspace(0.2, 0.6, N),
          fs=np.linspace(0.3, 0.9, N), vs=np.linspace(0.02, 0.1, N)),
], ids=["stribeck", "lugre"])
def test_noise_free_twin_gives_back_the_truth(friction):
    truth, data, start = _twin(friction, 0.0, seed=1)
    result = identify_nls(start, data, friction=friction.name)
    assert result.success, result.status
    assert result.model.std_kind == "lower bound"  # the friction taken as known
    assert _base_error(result, truth) < 1e-5
    # relative, absolute near zero (the offsets fo, none in the truth)
    truth_table = friction.per_joint()
    relative = (np.abs(result.friction.per_joint() - truth_table)
                / np.maximum(np.abs(truth_table), 1e-2))
    assert relative.max() < 2e-3
    assert result.consistency.consistent and result.consistency.within_bounds
    assert mass_matrix_check(result.model.robot, n_samples=200)["positive"]


def test_gilbert2024_tables6_7_friction_comparison_on_the_twin(tmp_path):
    """Gilbert's finding on a twin whose joints have Stribeck friction: without a friction model
    the errors are several times larger; Stribeck is best, identification and validation, by
    RMSE and MAE; every fit physically consistent."""
    _, data, start = _twin(STRIBECK, 0.05, seed=1, duration=10.0)
    _, check, _ = _twin(STRIBECK, 0.05, seed=2, duration=10.0)
    table = compare_friction(start, data, check)
    assert table.models == ["none", "lugre", "stribeck", "sigmoid"]
    for scores in (table.rmse_identification, table.rmse_validation,
                   table.mae_identification, table.mae_validation):
        mean = scores.mean(axis=1)
        assert mean[0] > 4 * mean[2]  # none vs stribeck
        assert mean[2] == mean.min()
    # the noise on average; joint 2 the worst: 0.060 N m (0.056 before the Stribeck offsets
    # fo were fitted: one more unknown per joint)
    assert table.rmse_validation[2].mean() == pytest.approx(0.05, rel=0.1)
    assert table.rmse_validation[2] == pytest.approx(np.full(N, 0.05), rel=0.25)
    assert all(fit.consistency.consistent for fit in table.fits)
    assert "RMSE validation [N m]" in table.lines()
    # the model file keeps the fitted friction
    save_model(table.fits[2].model, tmp_path / "stribeck.yaml")
    loaded = load_model(tmp_path / "stribeck.yaml")
    assert loaded.fitted_friction.name == "stribeck"
    np.testing.assert_allclose(loaded.predict(check.q, check.dq, check.ddq),
                               table.fits[2].model.predict(check.q, check.dq, check.ddq),
                               rtol=1e-9, atol=1e-9)


def test_gaz_residual_method_improves_on_no_friction():
    _, data, start = _twin(STRIBECK, 0.05, seed=1, duration=10.0)
    _, check, _ = _twin(STRIBECK, 0.05, seed=2, duration=10.0)
    table = compare_friction(start, data, check, models=("none", "sigmoid", "stribeck"),
                             method="residual")
    mean = table.rmse_identification.mean(axis=1)
    assert mean[1] < 0.5 * mean[0] and mean[2] < 0.5 * mean[0]
    assert table.fits[0] is None and table.fits[2].model.name == "stribeck"


def test_lasso_drives_the_products_of_inertia_to_zero():
    """Gilbert's use of the L1 term: the products of inertia about the CoM vanish while the fit
    stays at the noise level and the total mass inside the robot file's 16-20 kg."""
    _, data, start = _twin(STRIBECK, 0.05, seed=1, duration=10.0)

    def products(result):
        inertia = to_com(result.parameters)[2]
        return np.abs(inertia[:, [0, 0, 1], [1, 2, 2]]).sum()

    plain = identify_nls(start, data, friction="stribeck")
    sparse = identify_nls(start, data, friction="stribeck", lasso=1e-5)
    assert products(sparse) < 1e-3 * products(plain)
    assert sparse.rmse.mean() < 1.02 * plain.rmse.mean()
    for result in (plain, sparse):
        assert result.consistency.consistent and result.consistency.within_bounds


def test_bad_inputs_are_named():
    _, data, start = _twin(STRIBECK, 0.0, seed=1, duration=5.0)
    with pytest.raises(ValueError, match="`friction` must be one of"):
        identify_nls(start, data, friction="coulomb-only")
    with pytest.raises(ValueError, match="`lasso` must be >= 0"):
        identify_nls(start, data, lasso=-1.0)
    with pytest.raises(ValueError, match=r"`start` must have shape \(7, 10\)"):
        identify_nls(start, data, start=np.zeros((3, 10)))
    fixed = start.bounds.__class__(start.bounds.links, total_mass=(18.0, 18.0))
    result = identify_nls(start, data, friction="none", bounds=fixed, max_iterations=3)
    assert np.isfinite(result.parameters).all()
    with pytest.raises(ValueError, match="`models` must be among"):
        compare_friction(start, data, data, models=("none", "magic"))


def test_nls_and_friction_commands(capsys, tmp_path):
    import json

    from dynid.cli import main
    from dynid.data.io import write_dataset
    from dynid.robot import load_robot_file

    _, data, _ = _twin(STRIBECK, 0.05, seed=3, duration=8.0)
    write_dataset(tmp_path / "log.csv", data)
    log = str(tmp_path / "log.csv")
    assert main(["identify", "panda", log, "--method", "nls", "--friction", "stribeck",
                 "--validate", "0.25", "--json", "--quiet", "--parameters-output",
                 str(tmp_path / "params.yaml")]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["nls"]["friction"] == "stribeck" and payload["nls"]["consistent"]
    assert max(payload["validation"]["rmse"]) < 0.08
    fitted = load_robot_file(tmp_path / "params.yaml")
    assert fitted.friction.name == "stribeck" and fitted.n_joints == 7
    assert main(["friction", "panda", log, "--validate", "0.25", "--models", "none",
                 "stribeck", "--json", "--quiet"]) == 0
    table = json.loads(capsys.readouterr().out)
    none, stribeck = np.mean(table["rmse"]["validation"], axis=1)
    assert stribeck < 0.25 * none
    assert main(["identify", "panda", log, "--friction", "none", "-o",
                 str(tmp_path / "rigid.yaml")]) == 0
    capsys.readouterr()
    assert main(["friction", "panda", log, "--validate", "0.25", "--method", "residual",
                 "--model", str(tmp_path / "rigid.yaml"), "--models", "none", "sigmoid",
                 "--optimizer", "nelder-mead", "-o", str(tmp_path / "with.yaml"),
                 "--quiet"]) == 0
    assert "model with sigmoid friction written" in capsys.readouterr().out
    assert load_model(tmp_path / "with.yaml").fitted_friction.name == "sigmoid"
    assert main(["friction", "panda", log, "--validate", "0.25", "--models", "sigmoid",
                 "stribeck", "-o", str(tmp_path / "two.yaml")]) == 2
    assert "`-o` writes one model" in capsys.readouterr().err
    assert main(["identify", "panda", log, "--friction", "sigmoid"]) == 2
    assert "not linear in its parameters" in capsys.readouterr().err
    assert main(["friction", "panda", log]) == 2
    assert "give the validation data" in capsys.readouterr().err
    assert main(["identify", "panda", log, "--lasso", "1e-5"]) == 2
    assert "`--lasso` is for --method nls, not ols" in capsys.readouterr().err


def _arm3_log(duration=3.0):
    arm = load_robot("arm3")
    return arm, simulate_open_loop(arm, random_fourier(arm, seed=2), duration=duration,
                                   rate=100.0)


def test_no_friction_fit_then_what_the_cli_does(tmp_path):
    """Issue 11: `identify --method nls --friction none` fitted, wrote the model, then died on
    the friction table (NoFriction's "per joint" values were no (n, k) table). After the fit
    the CLI saves the model, prints its table, saves the robot with the fitted friction,
    prints the friction per joint and the consistency, and dumps the JSON: all of it here."""
    import dataclasses
    import json

    from dynid.friction.models import NoFriction
    from dynid.robot import load_robot_file, save_robot

    arm, data = _arm3_log()
    arm = dataclasses.replace(arm, bounds=None)  # the built-in's bounds are derived
    result = identify_nls(arm, data, friction=NoFriction(3), max_iterations=10)
    assert result.friction.name == "none" and result.model.fitted_friction is None
    save_model(result.model, tmp_path / "model.yaml")
    loaded = load_model(tmp_path / "model.yaml")
    assert len(loaded.table()) == len(result.model.table()) == result.model.base.rank
    save_robot(dataclasses.replace(arm, parameters=result.parameters, friction=result.friction,
                                   name="arm3-nls"), tmp_path / "params.yaml")
    assert load_robot_file(tmp_path / "params.yaml").friction.name == "none"
    names, table = result.friction_table()
    assert names == () and table.shape == (3, 0)
    lines = result.lines()
    assert lines[0] == "  friction none: no friction parameters fitted"
    # arm3 has no parameter bounds: nothing was checked against them, and the text says so
    assert lines[-1].endswith("within the bounds: not checked (the robot has no bounds)")
    payload = json.loads(json.dumps(result.to_json()))
    assert payload["friction_parameters"] == {"model": "none"}
    assert payload["within_bounds"] is None
    assert payload["not_checked"]["within_bounds"] == "the robot has no bounds"
    # a friction model with fields: the same table as per_joint
    stribeck_names, stribeck = dataclasses.replace(result, friction=STRIBECK).friction_table()
    assert stribeck_names == STRIBECK.field_names() and stribeck.shape == (N, 6)


def test_identify_nls_without_friction_command(capsys, tmp_path):
    """The CLI path of issue 11 end to end (needs `dynid identify` to print the friction from
    `NLSResult.lines()` / `friction_table()`, not `NoFriction.per_joint()`)."""
    from dynid.cli import main
    from dynid.data.io import write_dataset

    _, data = _arm3_log()
    write_dataset(tmp_path / "log.csv", data)
    assert main(["identify", "arm3", str(tmp_path / "log.csv"), "--method", "nls",
                 "--friction", "none", "--quiet", "-o", str(tmp_path / "model.yaml")]) == 0
    out = capsys.readouterr().out
    assert "friction none: no friction parameters fitted" in out
    # arm3's bounds are derived from its description: checked
    assert "within the bounds: yes" in out
    assert load_model(tmp_path / "model.yaml").fitted_friction is None


def test_zero_torques_are_refused_by_name():
    from dynid.data.dataset import Dataset

    arm, data = _arm3_log(duration=1.0)
    silent = Dataset(t=data.t, q=data.q, dq=data.dq, ddq=data.ddq, tau=0.0 * data.tau)
    with pytest.raises(ValueError, match=r"`data\.tau` is zero on every joint"):
        identify_nls(arm, silent, friction="none")


def test_two_logs_with_their_own_offsets_give_back_the_truth():
    """Two noise-free runs whose torque sensors have different offsets: NLS on both at once
    recovers the rigid body and the Stribeck friction as from one clean log, and each log's
    offsets (the model's offset fo is their mean)."""
    friction = Stribeck(fc=STRIBECK.fc, fs=STRIBECK.fs, vs=STRIBECK.vs, ks=STRIBECK.ks,
                        fv=STRIBECK.fv)
    truth = load_robot("panda").with_friction(friction)
    biases = [np.linspace(-0.4, 0.3, N), np.linspace(0.2, -0.1, N)]
    logs = [simulate_open_loop(truth, random_fourier(truth, seed=seed), duration=10.0,
                               rate=100.0, sensor=SensorModel(torque_bias=bias), seed=seed)
            for seed, bias in ((1, biases[0]), (2, biases[1]))]
    start = truth.with_parameters(load_robot("panda-cad").parameters)
    result = identify_nls(start, logs, friction="stribeck")
    assert result.success, result.status
    assert _base_error(result, truth) < 1e-5
    offsets = np.array([entry["offsets"] for entry in result.model.report["log_offsets"]])
    assert np.abs(offsets - biases).max() < 1e-5
    assert np.abs(result.friction.fo - np.mean(biases, axis=0)).max() < 1e-5
    assert result.rmse.max() < 1e-5
    shared = identify_nls(start, logs, friction="stribeck", offsets="shared",
                          max_iterations=30)
    assert "log_offsets" not in shared.model.report
    assert shared.rmse.mean() > 100 * result.rmse.mean()  # one offset cannot fit both logs


def test_identify_nls_on_two_logs_command(capsys, tmp_path):
    """`dynid identify ROBOT A B --method nls` fits both logs, each with its offsets."""
    import json

    from dynid.cli import main
    from dynid.data import write_dataset

    arm = load_robot("arm3")
    paths = []
    for seed, bias in ((2, [0.2, -0.1, 0.05]), (3, [-0.2, 0.1, 0.0])):
        data = simulate_open_loop(arm, random_fourier(arm, seed=seed), duration=20.0,
                                  rate=100.0, sensor=SensorModel(torque_bias=bias))
        paths.append(str(tmp_path / f"log{seed}.csv"))
        write_dataset(paths[-1], data)
    assert main(["identify", "arm3", *paths, "--method", "nls", "--friction",
                 "viscous-coulomb", "--as-is", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    offsets = [entry["offsets"] for entry in payload["log_offsets"]]
    # arm3's links are thinner than NLS's thinnest body (1 mm): the fit is close, not exact
    assert np.abs(np.array(offsets) - [[0.2, -0.1, 0.05], [-0.2, 0.1, 0.0]]).max() < 0.03
    assert len(payload["logs"]) == 2
