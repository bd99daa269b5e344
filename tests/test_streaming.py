"""Streaming identification: logs folded chunk by chunk into triangular factors give the fit
of the whole regressor held in memory; a memory-mapped log is never read in whole; a file that
changes under a run is caught."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close

from dynid.data import read_dataset, write_dataset
from dynid.excitation.optimize import random_fourier
from dynid.identification import OLS, WLS, identify, identify_constrained
from dynid.identification._stream import Factors, fold_logs, from_arrays, joint_columns
from dynid.identification.linear import default_friction, linear_template
from dynid.robot import load_robot
from dynid.simulate.twin import SensorModel, simulate_open_loop


@pytest.fixture(scope="module")
def panda_log():
    robot = load_robot("panda")
    data = simulate_open_loop(robot, random_fourier(robot, seed=3), duration=30.0, rate=200.0,
                              sensor=SensorModel(torque_noise_std=0.1), seed=3)
    return robot, data


def test_chunked_factors_fit_like_the_whole_regressor(panda_log):
    """OLS and WLS from the streamed factors (small chunks, structural zeros left out) equal
    the estimators fitted on the whole base regressor."""
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


def test_a_joint_keeps_only_the_columns_its_rows_can_touch(panda_log):
    robot, _ = panda_log
    template = linear_template(robot, default_friction(robot))
    columns = joint_columns(template, 0, 1)
    sizes = [c.size for c in columns]
    assert sizes[0] == template.base.rank - 3 * (robot.n_joints - 1)  # not others' friction
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] < sizes[0] / 3


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
