"""Streaming identification: logs folded chunk by chunk into triangular factors give the fit
of the whole regressor held in memory; a memory-mapped log is never read in whole; a file that
changes under a run is caught."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close

import dynid.identification._stream as stream
from dynid.data import read_dataset, write_dataset
from dynid.excitation.optimize import random_fourier
from dynid.identification import OLS, WLS, identify, identify_constrained
from dynid.identification._stream import Factors, fold_logs, from_arrays, joint_layouts
from dynid.identification.linear.idim import linear_template
from dynid.model.base_parameters import default_friction
from dynid.robot import load_robot
from dynid.simulate.twin import SensorModel, simulate_open_loop


@pytest.fixture(scope="module")
def panda_log():
    robot = load_robot("panda")
    data = simulate_open_loop(robot, random_fourier(robot, seed=3), duration=60.0, rate=200.0,
                              sensor=SensorModel(torque_noise_std=0.1), seed=3)
    return robot, data


@pytest.mark.parametrize("precondition_after", [10**9, 3000], ids=["householder", "gram"])
def test_chunked_factors_fit_like_the_whole_regressor(panda_log, monkeypatch,
                                                      precondition_after):
    """OLS and WLS from the streamed factors (small chunks, structural zeros left out; every
    chunk folded by QR, or by Gram updates once 3000 rows precondition them) equal the
    estimators fitted on the whole base regressor."""
    monkeypatch.setattr(stream, "PRECONDITION_AFTER", precondition_after)
    robot, data = panda_log
    template = linear_template(robot, default_friction(robot))
    whole = template.base_regressor(data.q, data.dq, data.ddq)
    for estimator in (OLS(), WLS()):
        reference = type(estimator)().fit(whole, data.tau)
        streamed = type(estimator)().fit_factors(fold_logs(template, [data], 0, chunk=257))
        assert_close(streamed.coef_, reference.coef_, rtol=1e-10, atol=1e-12)
        assert_close(streamed.std_, reference.std_, rtol=1e-8, atol=1e-14)
        assert streamed.relative_error_percent_ == pytest.approx(
            reference.relative_error_percent_, rel=1e-10)
    model = identify(robot, data)
    assert_close(model.coefficients, OLS().fit(whole, data.tau).coef_, rtol=1e-10, atol=1e-12)


def test_a_joint_folds_only_the_columns_its_rows_can_tell_apart(panda_log):
    """Joint j's rows touch no column of the links before it, nor other joints' friction;
    of the columns they touch, the dependent ones (at every state) are regrouped, and the
    layout reproduces the rows exactly."""
    robot, data = panda_log
    template = linear_template(robot, default_friction(robot))
    layouts = joint_layouts(template, 0, 1)[0]
    touched = [layout.columns.size for layout in layouts]
    folded = [layout.independent.size for layout in layouts]
    assert touched[0] <= template.base.rank - 3 * (robot.n_joints - 1)  # not others' friction
    assert touched == sorted(touched, reverse=True) and touched[-1] < touched[0] / 3
    assert folded[0] < touched[0]  # joint 1's row alone does not separate its columns
    whole = template.base_regressor(data.q[:500], data.dq[:500], data.ddq[:500])
    for j, layout in enumerate(layouts):
        rows = whole[:, j, layout.columns]
        assert_close(layout.spread(rows[:, layout.independent]), rows, rtol=0, atol=1e-9)
        assert not np.delete(whole[:, j], layout.columns, axis=1).any()


def test_factors_merge_as_one_fold(rng):
    """The reduction: two halves folded apart and merged give the factor of all rows; the
    row counts add up; factors over other columns refuse to merge."""
    w, y = rng.standard_normal((300, 3, 5)), rng.standard_normal((300, 3))
    whole = from_arrays(w, y)
    halves = from_arrays(w[:120], y[:120]).merged(from_arrays(w[120:], y[120:]))
    assert halves.n_rows == whole.n_rows == 900
    product = whole.stacked()
    merged = halves.stacked()
    assert_close(merged.T @ merged, product.T @ product, rtol=1e-10, atol=1e-10)
    with pytest.raises(ValueError, match="cannot be merged"):
        whole.merged(Factors(4))


def test_memory_mapped_log_identifies_as_the_log_in_memory(panda_log, tmp_path):
    robot, data = panda_log
    path = write_dataset(tmp_path / "log.npz", data)
    mapped = read_dataset(path, mmap=True)
    assert isinstance(mapped.q, np.memmap) and not mapped.q.flags.writeable
    assert_close(np.asarray(mapped.tau), data.tau, rtol=0, atol=0)
    in_memory = identify(robot, data)
    streamed = identify(robot, mapped)
    assert_close(streamed.coefficients, in_memory.coefficients, rtol=1e-12, atol=1e-14)
    constrained = identify_constrained(robot, mapped, method="cls2")
    assert constrained.success
    # the file changes under the run: caught by its size
    with open(path, "ab") as handle:
        handle.write(b"\0" * 64)
    with pytest.raises(ValueError, match="changed under the run"):
        identify(robot, mapped)


def test_memory_mapping_refuses_what_it_cannot_map(panda_log, tmp_path):
    _, data = panda_log
    small = data.select(slice(0, 50))
    csv = write_dataset(tmp_path / "log.csv", small)
    with pytest.raises(ValueError, match="only an NPZ log in SI units can be memory-mapped"):
        read_dataset(csv, mmap=True)
    squeezed = tmp_path / "squeezed.npz"
    np.savez_compressed(squeezed, t=small.t, q=small.q, dq=small.dq, tau=small.tau)
    with pytest.raises(ValueError, match="compressed and cannot be memory-mapped"):
        read_dataset(squeezed, mmap=True)
    broken = tmp_path / "broken.npz"
    t = small.t.copy()
    t[30] = t[29]
    np.savez(broken, t=t, q=small.q, dq=small.dq, tau=small.tau)
    with pytest.raises(ValueError, match=r"strictly increasing.*memory-mapped"):
        read_dataset(broken, mmap=True)


def test_a_dask_cluster_folds_the_logs_as_one_machine(panda_log, tmp_path, cluster,
                                                      monkeypatch):
    """Logs folded on a LocalCluster of 2 workers, in pieces (a memory-mapped log mapped
    again by each worker, an in-memory log sent), give the local coefficients to 1e-10."""
    robot, data = panda_log
    monkeypatch.setattr(stream, "PIECE_SAMPLES", 5000)  # several pieces per log
    other = simulate_open_loop(robot, random_fourier(robot, seed=4), duration=40.0, rate=200.0,
                               sensor=SensorModel(torque_noise_std=0.1, torque_bias=0.2),
                               seed=4)
    mapped = read_dataset(write_dataset(tmp_path / "log.npz", data), mmap=True)
    local = identify(robot, [mapped, other])
    remote = identify(robot, [mapped, other], client=cluster)
    scale = np.abs(local.coefficients).max()
    assert np.abs(remote.coefficients - local.coefficients).max() < 1e-10 * scale
    assert_close(remote.std, local.std, rtol=1e-8, atol=0)
    constrained = identify_constrained(robot, [mapped, other], method="cls2", client=cluster)
    alone = identify_constrained(robot, [mapped, other], method="cls2")
    assert_close(constrained.parameters, alone.parameters, rtol=1e-6, atol=1e-8)
    # the file changes before the workers map it: their error, not a partial factor
    with open(tmp_path / "log.npz", "ab") as handle:
        handle.write(b"\0" * 64)
    with pytest.raises(ValueError, match="changed under the run"):
        identify(robot, mapped, client=cluster)


def test_validation_in_chunks_gives_the_figures_of_the_whole_residual(panda_log,
                                                                      monkeypatch):
    """validate_model accumulates its figures chunk by chunk (here 777 samples at a time):
    every figure equals the one computed on the whole residual, the 95th percentile exactly
    as np.percentile."""
    import dynid.evaluation.validate as validation
    from dynid.metrics import relative_error_percent, residual_statistics, rmse, w_errors

    robot, data = panda_log
    model = identify(robot, data.select(slice(0, 6000)))
    monkeypatch.setattr(validation, "VALIDATION_CHUNK", 777)
    report = validation.validate_model(model, data, reestimate_offsets=True, joints=[1, 2, 4])
    picked = [0, 1, 3]
    predicted = model.predict(data.q, data.dq, data.ddq)
    offsets = np.mean(data.tau - predicted, axis=0)
    measured, predicted = data.tau[:, picked], (predicted + offsets)[:, picked]
    assert_close(np.array(report.offsets), offsets, rtol=1e-9)
    assert_close(report.rmse, rmse(measured, predicted), rtol=1e-10)
    expected = residual_statistics(measured, predicted)
    for name, value in report.residuals.items():
        assert_close(np.asarray(value), expected[name], rtol=1e-7, atol=1e-12)
    assert report.relative_error_percent == pytest.approx(
        relative_error_percent(measured, predicted), rel=1e-10)
    assert (report.w, report.w_r) == pytest.approx(w_errors(measured, predicted), rel=1e-10)
    rigid = model.rigid_torque(data.q, data.dq, data.ddq)[:, picked]
    assert_close(report.rmse_rigid, rmse(measured, rigid), rtol=1e-10)


def test_a_friction_state_runs_on_across_validation_chunks(panda_log, monkeypatch):
    """A LuGre model's bristle states, integrated chunk by chunk from the last state of the
    chunk before, are the whole log's; the chunked validation equals the whole-log figures."""
    import dataclasses

    import dynid.evaluation.validate as validation
    from dynid.friction import LuGre
    from dynid.metrics import rmse

    robot, data = panda_log
    ones = np.ones(robot.n_joints)
    lugre = LuGre(sigma0=3e3 * ones, sigma1=2.0 * ones, sigma2=0.1 * ones, fc=0.3 * ones,
                  fs=0.5 * ones, vs=0.05 * ones)
    whole = lugre.states_along(data.t, data.dq)
    cut = 4321
    first = lugre.states_along(data.t[:cut], data.dq[:cut])
    rest = lugre.states_along(data.t[cut - 1:], data.dq[cut - 1:], first[-1])
    assert_close(np.concatenate([first, rest[1:]]), whole, rtol=0, atol=0)
    with pytest.raises(ValueError, match="`z0`"):
        lugre.states_along(data.t[:5], data.dq[:5], np.full(robot.n_joints, np.nan))
    model = dataclasses.replace(identify(robot, data.select(slice(0, 6000))),
                                fitted_friction=lugre)
    monkeypatch.setattr(validation, "VALIDATION_CHUNK", 777)
    report = validation.validate_model(model, data)
    expected = model.predict(data.q, data.dq, data.ddq, data.t)
    assert_close(report.rmse, rmse(data.tau, expected), rtol=1e-10)
    # the steady-state friction instead of the state's would be visibly different
    assert np.abs(rmse(data.tau, model.predict(data.q, data.dq, data.ddq)) - report.rmse).max() \
        > 1e-6


def test_identify_command_streams_a_mapped_log_on_a_scheduler(panda_log, tmp_path, cluster,
                                                              capsys):
    import json

    from dynid.cli import main

    robot, data = panda_log
    path = str(write_dataset(tmp_path / "log.npz", data))
    assert main(["identify", "panda", path, "--mmap"]) == 2
    assert "give --as-is too" in capsys.readouterr().err
    assert main(["identify", "panda", path, "--as-is", "--mmap", "--method", "iv",
                 "--scheduler", cluster.scheduler.address]) == 2
    assert "`--scheduler` is for --method" in capsys.readouterr().err
    assert main(["identify", "panda", path, "--as-is", "--mmap", "--json",
                 "--scheduler", cluster.scheduler.address]) == 0
    payload = json.loads(capsys.readouterr().out)
    local = identify(robot, data, structure="auto")  # the command's default: the same choice
    assert payload["structure"]["dropped"] == local.report["structure"]["dropped"]
    assert_close(np.array([row["value"] for row in payload["coefficients"]]),
                 local.coefficients, rtol=1e-9, atol=1e-12)
    assert main(["identify", "panda", path, "--scheduler", "tcp://127.0.0.1:9"]) == 2
    assert "no Dask scheduler at tcp://127.0.0.1:9" in capsys.readouterr().err
