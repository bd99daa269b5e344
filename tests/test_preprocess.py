"""Preprocessing: zero phase, cutoffs, differentiation error on known signals, resampling,
trimming and splitting, inspection; the real Panda log."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close, reference_path

from dynid.data.dataset import Dataset
from dynid.data.io import read_dataset, read_panda_log
from dynid.data.preprocess import (
    differentiate,
    inspect,
    lowpass,
    moving_mean,
    noise_level,
    prepare,
    resample,
    savgol,
    split,
    trim,
)
from dynid.robot import load_robot


def _sine(frequency: float, rate: float = 1000.0, duration: float = 10.0, noise: float = 0.0,
          seed: int = 0) -> Dataset:
    t = np.arange(int(duration * rate)) / rate
    w = 2 * np.pi * frequency
    q = np.sin(w * t)[:, None]
    rng = np.random.default_rng(seed)
    return Dataset(t=t, q=q + noise * rng.standard_normal(q.shape),
                   dq=(w * np.cos(w * t))[:, None], tau=np.sin(w * t)[:, None])


def test_butterworth_has_no_lag_and_cuts_where_asked():
    passed = lowpass(_sine(0.5), 5.0, order=4)
    middle = slice(2000, 8000)
    # zero phase: the filtered sine is the sine, no delay (well inside the pass band)
    assert_close(passed.q[middle], _sine(0.5).q[middle], atol=1e-4)
    stopped = lowpass(_sine(20.0), 5.0, order=4)
    assert np.abs(stopped.q[middle]).max() < 1e-4  # 2 octaves above: squared 4th order
    at_cutoff = lowpass(_sine(5.0), 5.0, order=2)
    assert np.abs(at_cutoff.q[middle]).max() == pytest.approx(0.5, abs=0.01)  # -6 dB


def test_moving_mean_and_savgol_keep_a_slow_sine():
    data = _sine(0.2, noise=0.01)
    for smooth in (moving_mean(data, 21), savgol(data, 51, 3)):
        assert_close(smooth.q[100:-100], _sine(0.2).q[100:-100], atol=1e-2)  # noise / 5
        assert noise_level(smooth.q)[0] < noise_level(data.q)[0] / 3


def test_differentiation_error_on_known_signals():
    """ddq of a 1 Hz sine at 1 kHz: central differences within 1e-4 relative; from q
    (double differentiation) within 1e-3."""
    w = 2 * np.pi * 1.0
    data = _sine(1.0)
    from_dq = differentiate(data, source="dq")
    exact = (-w * w * np.sin(w * data.t))[:, None]
    inner = slice(1, -1)
    assert np.abs(from_dq.ddq[inner] - exact[inner]).max() <= 1e-4 * w * w
    from_q = differentiate(data, source="q")
    assert np.abs(from_q.ddq[2:-2] - exact[2:-2]).max() <= 1e-3 * w * w
    smoothed = differentiate(_sine(1.0, noise=1e-4), source="q", window=31)
    assert np.abs(smoothed.dq[50:-50, 0] - data.dq[50:-50, 0]).max() < 0.05 * w


def test_resample_irregular_time():
    rng = np.random.default_rng(1)
    t = np.cumsum(np.r_[0.0, rng.uniform(0.0007, 0.003, 999)])
    linear = np.column_stack([2 * t, -t])
    data = Dataset(t=t, q=linear, dq=linear, tau=linear)
    uniform = resample(data, 1000.0)
    assert_close(np.diff(uniform.t), np.full(uniform.n_samples - 1, 1e-3), atol=1e-12)
    assert_close(uniform.q, np.column_stack([2 * uniform.t, -uniform.t]), atol=1e-12)
    with pytest.raises(ValueError, match="not uniformly sampled"):
        lowpass(data, 5.0)


def test_trim_split_and_errors():
    data = _sine(1.0)
    short = trim(data, 1.0, 2.0)
    assert short.t[0] == pytest.approx(1.0) and short.t[-1] == pytest.approx(data.t[-1] - 2.0)
    fit, check = split(data, 0.7)
    assert (fit.n_samples, check.n_samples) == (7000, 3000)
    assert check.t[0] > fit.t[-1]
    with pytest.raises(ValueError, match="`cutoff` must be in"):
        lowpass(data, 600.0)
    with pytest.raises(ValueError, match="`window` must be an odd"):
        moving_mean(data, 4)
    with pytest.raises(ValueError, match="`fraction` must be in"):
        split(data, 1.0)
    with pytest.raises(ValueError, match="leaves no data"):
        trim(data, 6.0, 6.0)


def test_inspect_reports_gaps_and_noise():
    t = np.arange(1000) * 1e-3
    t[500:] += 5e-3  # one 6 ms gap
    rng = np.random.default_rng(0)
    q = np.sin(t)[:, None] + 0.01 * rng.standard_normal((1000, 1))
    report = inspect(Dataset(t=t, q=q, dq=q, tau=q))
    assert report["gaps"]["count"] == 1
    assert report["gaps"]["largest_ms"] == pytest.approx(6.0)
    assert report["rate_hz"] == pytest.approx(1000.0)
    assert report["noise_std"]["q"][0] == pytest.approx(0.01, rel=0.15)


def test_the_real_panda_log_loads_and_inspects():
    folder = reference_path("panda-gaz2019", "rbt_log_exciting_traj1")
    log = read_dataset(folder)
    assert (log.n_samples, log.n_joints) == (20544, 7)
    report = inspect(log, load_robot("panda"))
    assert report["gaps"]["count"] == 504
    assert report["gaps"]["largest_ms"] == pytest.approx(8.81, abs=0.01)
    assert report["limits"]["q_outside"] == [0] * 7
    ready = prepare(log)
    assert ready.ddq is not None and ready.duration == pytest.approx(20.0, abs=0.01)


def test_malformed_panda_log(tmp_path):
    (tmp_path / "exciting_traj_time.txt").write_text("0\n0.001\n")
    for name in ("positions", "velocity", "torques"):
        (tmp_path / f"exciting_traj_{name}.txt").write_text("0.1\n" * 14)
    assert read_panda_log(tmp_path).n_samples == 2
    (tmp_path / "exciting_traj_torques.txt").write_text("0.1\n" * 13)
    with pytest.raises(ValueError, match="has 13 values, expected 7 per time stamp"):
        read_panda_log(tmp_path)
    (tmp_path / "exciting_traj_velocity.txt").write_text("0.1\nabc\n")
    with pytest.raises(ValueError, match=r"velocity\.txt line 2: 'abc' is not a finite number"):
        read_panda_log(tmp_path)
    (tmp_path / "exciting_traj_time.txt").unlink()
    with pytest.raises(ValueError, match=r"exciting_traj_time\.txt' does not exist"):
        read_dataset(tmp_path)


def test_epoch_time_stamps_are_uniform():
    t = 1.7e9 + np.arange(2000) * 1e-3
    data = Dataset(t=t, q=np.zeros((2000, 1)), dq=np.zeros((2000, 1)), tau=np.ones((2000, 1)))
    assert prepare(Dataset(t=t, q=data.q, dq=data.dq, tau=data.tau, ddq=data.q)).n_samples == 2000


def test_moving_mean_edges_average_what_exists():
    t = np.arange(10) * 1e-3
    ramp = np.arange(10.0)[:, None]
    smooth = moving_mean(Dataset(t=t, q=ramp, dq=ramp, tau=ramp), 5)
    assert_close(smooth.q[:, 0], [1.0, 1.5, 2, 3, 4, 5, 6, 7, 7.5, 8.0])
    with pytest.raises(ValueError, match="odd number of samples in"):
        moving_mean(Dataset(t=t, q=ramp, dq=ramp, tau=ramp), 11)


@pytest.mark.parametrize("step", [1e-9, 1e-7])
def test_a_filter_at_nanosecond_steps_names_the_log(tmp_path, step):
    """A log that never moves, stamped every nanosecond (time stamps in ns read as s): the
    low-pass cannot be computed (its gain at 0 Hz is lost; scipy's edge solve was a bare
    "Singular matrix"); the error names the file and says what to do."""
    n = 400
    zeros = np.zeros((n, 2))
    path = tmp_path / "still.npz"
    np.savez(path, t=np.arange(n) * step, q=zeros, dq=zeros, tau=zeros + 1.0)
    data = read_dataset(path)
    with pytest.raises(ValueError, match=r"still\.npz: a 5 Hz low-pass cannot be computed "
                                         r"for samples 1e-0[79] s apart .*too small to "
                                         r"filter and differentiate.*--units t=ms"):
        lowpass(data, 5.0)
    with pytest.raises(ValueError, match=r"still\.npz: samples 1e-0[79] s apart .*faster than "
                                         r"any arm .*too small to filter and differentiate"
                                         r".*--units t=ms"):
        prepare(data)
    # the same log at a millisecond step filters: a constant passes unchanged
    fine = Dataset(t=np.arange(n) * 1e-3, q=zeros + 0.5, dq=zeros, tau=zeros + 1.0)
    assert_close(lowpass(fine, 5.0).q, np.full((n, 2), 0.5), rtol=1e-9, atol=0.0)
