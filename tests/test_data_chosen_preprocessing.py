"""The preprocessing chosen from the log (issue 32, item 1): the cutoff read from the log's
spectrum, the torques never filtered, velocities derived from positions where a log has none,
the friction fits' dead band, and the torque channel's lag estimated and undone."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dynid.data import prepare, read_dataset, write_dataset
from dynid.data.cutoff import MAX_FRACTION, choose_cutoff
from dynid.data.preprocess import DEAD_BAND_FRACTION, dead_band
from dynid.excitation.optimize import random_fourier
from dynid.friction.models import ViscousCoulomb
from dynid.identification import identify
from dynid.identification.delay import estimate_delay, shift_torques
from dynid.identification.linear.idim import linear_template
from dynid.robot import load_robot
from dynid.simulate import SensorModel, simulate_closed_loop

RATE = 1000.0


def _sines(seconds: float = 30.0, *, noise: float = 1e-4, rate: float = RATE,
           top: float = 0.5, seed: int = 0) -> np.ndarray:
    """Three joints of five harmonics of 0.1 Hz up to ``top`` Hz, plus white noise."""
    t = np.arange(0.0, seconds, 1.0 / rate)
    harmonics = np.linspace(0.1, top, 5)
    q = np.column_stack([sum(0.3 / (k + 1) * np.sin(2 * np.pi * f * t + j)
                             for k, f in enumerate(harmonics)) for j in range(3)])
    return q + noise * np.random.default_rng(seed).standard_normal(q.shape)


def test_the_cutoff_sits_above_the_motion_and_below_the_noise():
    chosen = choose_cutoff(_sines(), 1.0 / RATE)
    assert 1.0 < chosen < 6.0  # motion up to 0.5 Hz, encoder noise 1e-4 rad
    assert all(0.5 <= edge < 3.0 for edge in chosen.band)
    assert "chosen from the log's spectrum" in chosen.note
    # less noise lets more of the spectrum through; faster motion moves it up
    assert choose_cutoff(_sines(noise=1e-6), 1.0 / RATE) > chosen
    assert choose_cutoff(_sines(top=2.0), 1.0 / RATE) > chosen


def test_a_log_without_noise_is_cut_a_few_times_above_its_motion():
    chosen = choose_cutoff(_sines(noise=0.0), 1.0 / RATE)
    assert 1.0 < chosen < 5.0 < MAX_FRACTION * RATE / 2  # the motion ends near 0.5 Hz
    assert "capped at 4x" in chosen.note


@pytest.mark.parametrize(("values", "step", "derivatives", "match"), [
    (np.zeros((10, 2)), 1e-3, 2, "N >= 64"),
    (np.zeros(100), 1e-3, 2, "N >= 64"),
    (np.zeros((100, 2)), 0.0, 2, "`step`"),
    (np.zeros((100, 2)), 1e-3, 3, "`derivatives`"),
])
def test_bad_spectra_are_refused(values, step, derivatives, match):
    with pytest.raises(ValueError, match=match):
        choose_cutoff(values, step, derivatives=derivatives)


@pytest.fixture(scope="module")
def twin():
    """A 3-joint arm with viscous + Coulomb friction under computed torque, 8 s at 1 kHz,
    0.1 N m torque noise, 1e-4 rad encoders, the accelerations not logged."""
    robot = load_robot("arm3")
    truth = robot.with_friction(ViscousCoulomb(np.full(3, 0.1), np.full(3, 0.3),
                                               np.full(3, 0.05)))
    log = simulate_closed_loop(truth, random_fourier(truth, seed=3), duration=8.0, seed=5,
                               sensor=SensorModel(torque_noise_std=0.1,
                                                  position_resolution=1e-4))
    return truth, dataclasses.replace(log, ddq=None)


def test_prepare_filters_the_states_and_leaves_the_torques_as_logged(twin):
    _, raw = twin
    ready = prepare(raw)
    steps = ready.metadata["preprocessing"]
    assert "chosen from the log's spectrum" in steps[0]
    rows = np.searchsorted(raw.t, ready.t)
    np.testing.assert_array_equal(ready.tau, raw.tau[rows])  # never filtered
    assert not np.array_equal(ready.q, raw.q[rows])  # the encoder steps are smoothed
    assert steps[-1].startswith("friction fits leave out")


def test_the_dead_band_is_a_fraction_of_each_joints_speed(tmp_path):
    from dynid.data import Dataset, prepare_to_file

    t = np.linspace(0, 10, 1001)
    dq = np.column_stack([np.linspace(-2, 2, 1001), np.linspace(-0.1, 0.1, 1001)])
    log = Dataset(t=t, q=np.cumsum(dq, axis=0) * 0.01, dq=dq, tau=np.zeros_like(dq))
    quiet = dead_band(log)
    np.testing.assert_allclose(quiet, DEAD_BAND_FRACTION * np.abs(dq).max(axis=0), rtol=0.02)
    noisy = dataclasses.replace(
        log, dq=dq + 0.05 * np.random.default_rng(1).standard_normal(dq.shape))
    assert dead_band(noisy)[1] < 0.01  # the slow joint's noisy velocity keeps its samples
    # a prepared file keeps it for the fits that read it as it is
    written = read_dataset(prepare_to_file(noisy, tmp_path / "ready.npz", cutoff=5.0))
    np.testing.assert_allclose(written.metadata["dead_band"], dead_band(noisy))


def test_a_log_without_velocities_is_read_and_differentiated_from_its_positions(twin, tmp_path):
    _, raw = twin
    path = write_dataset(tmp_path / "log.csv", raw)
    header, *rows = path.read_text().splitlines()
    keep = [k for k, name in enumerate(header.split(",")) if not name.startswith("dq")]
    path.write_text("\n".join(",".join(line.split(",")[k] for k in keep)
                              for line in [header, *rows]) + "\n")
    read = read_dataset(path)
    assert read.metadata["velocity"] == "derived from positions"
    ready = prepare(read)
    assert "dq and ddq from q" in ready.metadata["preprocessing"]
    forced = prepare(raw, velocity="positions")
    assert forced.metadata["preprocessing"] == ready.metadata["preprocessing"]
    rows = np.searchsorted(raw.t, ready.t)
    error = np.abs(ready.dq - raw.dq[rows]).max(axis=0) / np.abs(raw.dq).max(axis=0)
    assert (error < 0.05).all(), error
    with pytest.raises(ValueError, match="`velocity`"):
        prepare(raw, velocity="encoder")


def test_a_lagging_torque_channel_is_found_and_undone(twin):
    truth, raw = twin
    ready = prepare(raw)
    template = linear_template(truth, truth.friction)
    own = estimate_delay(template, ready).found  # the twin's hold: about half a period
    lag = 0.004
    late = dataclasses.replace(raw, tau=np.column_stack(
        [np.interp(raw.t - lag, raw.t, raw.tau[:, j]) for j in range(3)]))
    found = estimate_delay(template, prepare(late))
    assert found.seconds == pytest.approx(own + lag, abs=3e-4)
    assert "compensated" in found.note() and found.significant
    full = np.concatenate([truth.parameters.ravel(), truth.friction.coefficients])
    fixed = identify(truth, shift_torques(prepare(late), found.seconds))
    error = np.abs(fixed.friction_parameters - truth.friction.coefficients)
    assert (error[3:6] < 0.05 * 0.3).all(), fixed.friction_parameters  # Coulomb within 5 %
    ignored = identify(truth, prepare(late))
    truth_base = fixed.base.base(full)
    assert (np.linalg.norm(fixed.coefficients - truth_base)
            < 0.5 * np.linalg.norm(ignored.coefficients - truth_base))


def test_a_shift_longer_than_the_log_is_refused(twin):
    _, raw = twin
    with pytest.raises(ValueError, match="`delay`"):
        shift_torques(raw, 100.0)
    with pytest.raises(ValueError, match="`delay`"):
        shift_torques(raw, float("nan"))
    assert shift_torques(raw, 0.0) is raw


def test_identify_reports_the_lag_it_compensated_and_validate_pairs_as_identified(
        twin, tmp_path, capsys):
    import json

    from dynid.cli import main
    from dynid.model import load_model

    _, raw = twin
    lag = 0.004
    late = dataclasses.replace(raw, tau=np.column_stack(
        [np.interp(raw.t - lag, raw.t, raw.tau[:, j]) for j in range(3)]))
    log = write_dataset(tmp_path / "log.csv", late)
    model = tmp_path / "model.yaml"
    assert main(["identify", "arm3", str(log), "--friction", "viscous-coulomb", "-o",
                 str(model), "--json"]) == 0
    steps = json.loads(capsys.readouterr().out)["preprocessing"]
    assert any("behind the positions, estimated and compensated" in step for step in steps)
    delay = load_model(model).report["torque_delay_s"]
    assert 0.003 < delay < 0.0045
    assert main(["validate", str(model), str(log), "--json"]) == 0
    as_identified = json.loads(capsys.readouterr().out)
    assert main(["validate", str(model), str(log), "--json", "--delay", "0"]) == 0
    unaligned = json.loads(capsys.readouterr().out)
    assert (np.mean(as_identified["rmse"]) < np.mean(unaligned["rmse"]))
    assert main(["identify", "arm3", str(log), "--delay", "0", "--json"]) == 0
    steps = json.loads(capsys.readouterr().out)["preprocessing"]
    assert not any("behind the positions" in step for step in steps)


def test_the_lags_error_joins_the_standard_deviations_of_what_it_moves(twin):
    from dynid.identification.delay import with_delay_std

    truth, raw = twin
    ready = prepare(raw)
    found = estimate_delay(linear_template(truth, truth.friction), ready)
    assert 0 < found.std < 1e-3
    model = identify(truth, shift_torques(ready, found.seconds))
    wider = with_delay_std(model, found)
    assert (wider.std >= model.std).all()
    fv2 = model.base.base_names.index("fv2")  # the shoulder's viscous term reads the lag
    assert wider.std[fv2] > 1.2 * model.std[fv2]
    other = identify(truth, ready, rotor_inertia=True)  # another structure: left alone
    assert with_delay_std(other, found) is other
