"""Metrics against hand computations on small arrays."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close

from dynid.metrics import mae, relative_error_percent, rmse


def test_metrics_by_hand():
    measured = np.array([[1.0, 2.0], [3.0, 4.0]])
    predicted = np.array([[1.0, 1.0], [1.0, 4.0]])
    # errors: joint 1: 0, 2; joint 2: 1, 0
    assert_close(rmse(measured, predicted), [np.sqrt(2.0), np.sqrt(0.5)])
    assert_close(mae(measured, predicted), [1.0, 0.5])
    assert_close(relative_error_percent(measured, predicted), 100 * np.sqrt(5.0 / 30.0))


def test_shapes_must_match():
    with pytest.raises(ValueError, match="must both be"):
        rmse(np.zeros((3, 2)), np.zeros((3, 1)))


def test_jaco2_eq9_and_residual_statistics_by_hand():
    from dynid.metrics import residual_statistics, w_errors

    measured = np.array([[1.0, 2.0], [3.0, 4.0], [0.0, 0.0]])
    predicted = np.array([[1.0, 1.0], [1.0, 4.0], [1.0, 0.0]])
    # errors (tau - tau^): [0, 1], [2, 0], [-1, 0]: |e| = sqrt(6), |tau| = sqrt(30), N = 3
    w, w_r = w_errors(measured, predicted)
    assert w == pytest.approx(np.sqrt(6.0) / 3)
    assert w_r == pytest.approx(np.sqrt(6.0 / 30.0))
    stats = residual_statistics(measured, predicted)
    assert_close(stats["mean"], [1.0 / 3.0, 1.0 / 3.0])
    assert_close(stats["max_abs"], [2.0, 1.0])
    # joint 1 centred: [-1/3, 5/3, -4/3]: lag-1 sum -5/9 - 20/9, power 1/9 + 25/9 + 16/9
    assert stats["lag1_autocorrelation"][0] == pytest.approx(-25.0 / 42.0)


@pytest.fixture(scope="module")
def twin_models():
    from dynid.excitation.optimize import random_fourier
    from dynid.friction.models import ViscousCoulomb
    from dynid.identification.constrained.cls import identify_constrained
    from dynid.identification.linear.idim import identify
    from dynid.robot import load_robot
    from dynid.simulate.twin import SensorModel, simulate_open_loop

    truth = load_robot("panda").with_friction(
        ViscousCoulomb(np.full(7, 0.1), np.full(7, 0.3), np.full(7, -0.05)))
    logs = [simulate_open_loop(truth, random_fourier(truth, seed=k), duration=14.0,
                               rate=100.0, sensor=SensorModel(torque_noise_std=0.1), seed=k)
            for k in range(2)]
    return (truth, logs, identify(truth, logs[0]),
            identify_constrained(truth, logs[0], method="cls3").model)


def test_validate_a_base_and_a_physical_model(twin_models):
    from dynid.evaluation.validate import validate_model

    _, (_, check), ols, cls3 = twin_models
    base = validate_model(ols, check, n_poses=200)
    assert base.physical is False and base.consistency is None and not base.consistent
    assert base.rmse == pytest.approx(np.full(7, 0.1), rel=0.2)  # the noise
    assert (base.rmse_rigid > base.rmse).all()  # friction matters
    physical = validate_model(cls3, check, n_poses=200)
    assert physical.physical and physical.consistent
    assert physical.mass_matrix["positive"]
    payload = physical.to_json()
    assert {"rmse", "mae", "relative_error_percent", "consistent", "w", "w_r"} <= set(payload)
    assert "physically consistent: yes" in "\n".join(physical.lines())


def test_validate_refuses_another_robot(twin_models):
    from dynid.data.dataset import Dataset
    from dynid.evaluation.validate import validate_model

    _, (_, check), ols, _ = twin_models
    three = Dataset(t=check.t, q=check.q[:, :3], dq=check.dq[:, :3], ddq=check.ddq[:, :3],
                    tau=check.tau[:, :3])
    with pytest.raises(ValueError, match="the data have 3 joints, the model's robot"):
        validate_model(ols, three)
    other = Dataset(t=check.t, q=check.q, dq=check.dq, ddq=check.ddq, tau=check.tau,
                    metadata={"robot": "jaco2"})
    with pytest.raises(ValueError, match="logged on robot 'jaco2', the model is of 'panda'"):
        validate_model(ols, other)


def test_validate_command(twin_models, capsys, tmp_path):
    import json

    from dynid.cli import main
    from dynid.data.io import write_dataset
    from dynid.model.linear_model import save_model

    _, (_, check), _, cls3 = twin_models
    save_model(cls3, tmp_path / "model.yaml")
    write_dataset(tmp_path / "check.csv", check)
    assert main(["validate", str(tmp_path / "model.yaml"), str(tmp_path / "check.csv"),
                 "--json", "--poses", "100", "--plot", str(tmp_path / "v.png")]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert len(payload["rmse"]) == 7 and payload["consistent"] is True
    assert (tmp_path / "v.png").read_bytes()[:4] == b"\x89PNG"
    assert main(["validate", str(tmp_path / "absent.yaml"), str(tmp_path / "check.csv")]) == 2
    assert "absent.yaml' does not exist" in capsys.readouterr().err  # the model file


def test_a_log_of_zero_torques_keeps_its_rmse_and_says_why_relative_errors_are_undefined(
        twin_models, capsys, tmp_path):
    """Issue 11: all-zero torques (none logged) crashed `validate` with ZeroDivisionError. The
    absolute errors stand; the relative ones are None, with the reason; the CLI prints it."""
    import json
    import warnings

    from dynid.cli import main
    from dynid.data.dataset import Dataset
    from dynid.data.io import write_dataset
    from dynid.evaluation.validate import validate_model
    from dynid.model.linear_model import save_model

    _, (_, check), _, cls3 = twin_models
    silent = Dataset(t=check.t, q=check.q, dq=check.dq, ddq=check.ddq, tau=0.0 * check.tau)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = validate_model(cls3, silent, n_poses=50)
    predicted = cls3.predict(check.q, check.dq, check.ddq, check.t)
    assert_close(report.rmse, np.sqrt(np.mean(predicted**2, axis=0)))
    assert report.w == pytest.approx(np.linalg.norm(predicted) / check.n_samples)
    assert report.relative_error_percent is None and report.w_r is None
    assert "`data.tau` is zero on every joint" in report.undefined["relative_error_percent"]
    text = "\n".join(report.lines())
    assert "relative error and w_r undefined (`data.tau` is zero on every joint" in text
    payload = json.loads(json.dumps(report.to_json()))
    assert payload["relative_error_percent"] is None and payload["w_r"] is None
    assert set(payload["undefined"]) == {"relative_error_percent", "w_r"}
    save_model(cls3, tmp_path / "model.yaml")
    write_dataset(tmp_path / "silent.csv", silent)
    assert main(["validate", str(tmp_path / "model.yaml"), str(tmp_path / "silent.csv"),
                 "--poses", "50"]) == 0
    assert "relative error and w_r undefined" in capsys.readouterr().out
    assert main(["validate", str(tmp_path / "model.yaml"), str(tmp_path / "silent.csv"),
                 "--poses", "50", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["relative_error_percent"] is None
