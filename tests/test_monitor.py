"""Collision detection on the Panda twin: the momentum observer with an identified model
detects every 10 N tool pulse of 50 ms within 20 ms and raises no false alarm on a minute of
collision-free motion; the CAD model, at the same thresholds, alarms again and again; the
residual is the external torque J^T F; the detect command and its refusals."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from conftest import assert_close

from dynid.cli import main
from dynid.data import Dataset, write_dataset
from dynid.data.preprocess import prepare
from dynid.excitation.optimize import random_fourier
from dynid.friction.models import ViscousCoulomb
from dynid.identification import identify, robot_model
from dynid.model import save_model
from dynid.monitor import (
    Detection,
    FrictionlessModelWarning,
    NoVelocityWarning,
    calibrate_thresholds,
    detect_collisions,
    detection_figure,
    find_events,
    momentum_residual,
    observer,
    score_detection,
)
from dynid.robot import load_robot
from dynid.simulate import Contact, SensorModel, external_torques, simulate_closed_loop
from dynid.simulate.twin import simulate_open_loop
from dynid.workflow.demo import DAMPING, ENCODER_RESOLUTION, STIFFNESS, user_robot

# ten 10 N pulses of 50 ms at the tool, along the base axes and diagonals, 1.5 s apart
DIRECTIONS = [(1, 0, 0), (0, 1, 0), (0, 0, 1), (-1, 0, 0), (0, -1, 0), (0, 0, -1), (1, 1, 0),
              (0, 1, -1), (-1, 1, 1), (1, -1, -1)]
PULSES = [Contact.pulse(1.0 + 1.5 * k, 10.0 * np.array(d) / np.linalg.norm(d))
          for k, d in enumerate(DIRECTIONS)]


@pytest.fixture(scope="module")
def twin():
    """The demo's twin (truth ``panda``, joint impedance on the CAD model, 20-bit encoders,
    velocities from position differences, 0.1 N m torque noise), an OLS model with viscous +
    Coulomb + offset friction identified on a 20 s log, and three more logs on other
    trajectories: 30 s collision-free (calibration), 60 s collision-free, 16 s with pulses."""
    truth = load_robot("panda")
    user = user_robot(truth)
    cad = load_robot("panda-cad")
    sensor = SensorModel(torque_noise_std=0.1, position_resolution=ENCODER_RESOLUTION,
                         velocity_from_positions=True)

    def log(seed, duration, contacts=None):
        trajectory = random_fourier(user, omega_f=2 * np.pi / 10, seed=seed)
        return simulate_closed_loop(truth, trajectory, duration=duration, stiffness=STIFFNESS,
                                    damping=DAMPING, controller=cad, sensor=sensor,
                                    seed=seed + 100, contacts=contacts)

    model = identify(user, prepare(log(1, 20.0)), friction=ViscousCoulomb.zeros(7))
    return {"truth": truth, "user": user, "model": model, "calibration": log(2, 30.0),
            "free": log(3, 60.0), "pulses": log(4, 16.0, PULSES)}


@pytest.fixture(scope="module")
def identified(twin):
    """Detection on the pulse log with thresholds calibrated on the calibration log."""
    return detect_collisions(twin["model"], twin["pulses"], calibration=twin["calibration"])


def _cad_model(twin):
    """Franka's CAD inertials with the identified friction: only the rigid body differs."""
    friction = twin["model"].friction.with_coefficients(twin["model"].friction_parameters)
    return robot_model(dataclasses.replace(load_robot("panda-cad"), name="panda",
                                           friction=friction))


def test_every_10_N_tool_pulse_is_detected_within_20_ms(twin, identified):
    score = score_detection(identified, twin["pulses"].metadata["contacts"])
    assert len(score.delays) == len(PULSES) == 10
    assert score.missed == ()
    assert 0 <= min(score.delays) and score.max_delay <= 0.020, score.delays
    assert score.false_alarms == 0
    for event, pulse in zip(identified.events, PULSES, strict=True):
        assert pulse.start <= event.start <= pulse.stop + 0.1
        assert event.joints and max(event.peak) > 0


def test_no_false_alarm_on_a_minute_of_collision_free_motion(twin, identified):
    free = detect_collisions(twin["model"], twin["free"], thresholds=identified.thresholds)
    assert free.duration >= 60.0
    assert free.events == ()
    score = score_detection(free, [])
    assert score.false_alarms == 0 and score.false_alarms_per_minute == 0.0
    # not by thresholds out of reach: the free log's residual comes within a factor 2 of them
    assert (np.abs(free.residual).max(axis=0) > 0.5 * identified.thresholds).any()


def test_cad_model_alarms_far_more_at_the_same_sensitivity(twin, identified):
    """The same thresholds [N m] mean the same smallest detectable external torque: the CAD
    model, at the identified model's thresholds, alarms several times a minute on the
    collision-free log; calibrated on its own residual instead, its thresholds rise and it
    misses pulses or detects them late."""
    cad = _cad_model(twin)
    same = detect_collisions(cad, twin["free"], thresholds=identified.thresholds)
    rate = score_detection(same, []).false_alarms_per_minute
    assert rate >= 3.0, rate
    own = detect_collisions(cad, twin["pulses"], calibration=twin["calibration"])
    assert (own.thresholds > identified.thresholds).sum() >= 5
    score = score_detection(own, twin["pulses"].metadata["contacts"])
    assert len(score.missed) >= 2 or score.max_delay > 0.020


def test_residual_is_the_external_torque_at_steady_state():
    """Known truth model, no noise: an arm held by a joint impedance is pushed at the tool
    from 0.5 s on; once settled, r = J(q)^T F."""
    truth = load_robot("panda")
    q_d = np.array([0.0, -0.4, 0.0, -2.0, 0.0, 1.8, 0.8])

    class Still:
        n_joints = 7

        def sample(self, t):
            zeros = np.zeros((t.size, 7))
            return np.tile(q_d, (t.size, 1)), zeros, zeros

    force = np.array([0.0, 15.0, -10.0])
    data = simulate_closed_loop(truth, Still(), duration=2.5, stiffness=STIFFNESS,
                                damping=DAMPING, controller=truth,
                                contacts=[Contact(0.5, force=force)])
    residual = momentum_residual(robot_model(truth), data)
    expected = external_torques(truth, data.q, data.t, [Contact(0.5, force=force)])
    assert np.abs(expected[-1]).max() > 2.0
    assert_close(residual[-1], expected[-1], rtol=1e-4, atol=1e-4)
    assert np.abs(residual[data.t < 0.5]).max() < 1e-3  # no contact, no residual
    # the rise: a first-order lag of 1 / K = 20 ms
    k = np.searchsorted(data.t, 0.52)
    ratio = residual[k] / expected[k]
    assert_close(ratio[np.abs(expected[k]) > 1], np.full((np.abs(expected[k]) > 1).sum(),
                                                         1 - np.exp(-1)), rtol=0.05)


def test_residual_follows_the_contact_along_a_moving_arm():
    """Open loop, known model, no noise: the residual is the external torque through the
    observer's first-order lag, applied here to the exact J^T F."""
    truth = load_robot("panda")
    push = Contact(0.3, 0.6, force=(5.0, -8.0, 3.0), link=5, point=(0.0, 0.05, 0.0))
    data = simulate_open_loop(truth, random_fourier(truth, seed=3), duration=1.2,
                              contacts=[push])
    gain = 80.0
    residual = momentum_residual(robot_model(truth), data, gain=gain)
    expected = external_torques(truth, data.q, data.t, [push])
    lagged = np.zeros_like(expected)
    a = np.exp(-gain * 1e-3)
    for k in range(1, data.n_samples):  # the exact first-order filter of the trapezoid mean
        lagged[k] = a * lagged[k - 1] + (1 - a) * 0.5 * (expected[k] + expected[k - 1])
    assert np.abs(expected).max() > 1.0
    assert np.abs(residual - lagged).max() < 2e-3 * np.abs(expected).max()


def test_chunks_carry_the_observer_state(twin, monkeypatch):
    data = twin["pulses"].select(slice(0, 3000))
    whole = momentum_residual(twin["model"], data)
    monkeypatch.setattr(observer, "CHUNK", 700)
    assert_close(momentum_residual(twin["model"], data), whole, rtol=1e-12, atol=1e-12)


def test_thresholds_and_events():
    rng = np.random.default_rng(0)
    quiet = rng.normal(size=(10_000, 2)) * [1.0, 0.1]
    levels = calibrate_thresholds(quiet, quantile=0.99, margin=2.0)
    assert_close(levels, 2 * np.quantile(np.abs(quiet), 0.99, axis=0))
    t = np.arange(1000) * 1e-3
    r = np.zeros((1000, 2))
    r[100:120, 1] = 1.0   # one event on joint 2 ...
    r[140:150, 1] = -1.0  # ... continued 20 ms later (within the hold)
    r[500:510, 0] = 3.0   # another on joint 1
    events = find_events(t, r, np.array([2.0, 0.5]), hold=0.05)
    assert [(e.start, e.stop, e.joints) for e in events] == [(0.1, 0.149, (2,)),
                                                            (0.5, 0.509, (1,))]
    assert events[0].peak == (0.0, 1.0)
    assert len(find_events(t, r, np.array([2.0, 0.5]), hold=0.01)) == 3
    with pytest.raises(ValueError, match="`quantile`"):
        calibrate_thresholds(quiet, quantile=0.1)
    with pytest.raises(ValueError, match="`margin`"):
        calibrate_thresholds(quiet, margin=0.5)
    with pytest.raises(ValueError, match="`residual`"):
        calibrate_thresholds(np.zeros((10, 2)))


def test_scoring_counts_delays_misses_and_false_alarms():
    t = np.arange(60_001) * 1e-3
    r = np.zeros((t.size, 1))
    r[[1010, 5000, 30_000]] = 5.0  # a detection 10 ms late, and two alarms
    detection = Detection(t=t, residual=r, thresholds=np.ones(1), gain=np.ones(1),
                          events=tuple(find_events(t, r, np.ones(1))), robot="x")
    score = score_detection(detection, [{"start": 1.0, "stop": 1.05},
                                        Contact.pulse(10.0, (1, 0, 0))])
    assert score.delays[0] == pytest.approx(0.010) and score.delays[1] is None
    assert score.missed == (1,) and score.false_alarms == 2
    assert score.false_alarms_per_minute == pytest.approx(2.0)
    with pytest.raises(ValueError, match=r"`contacts\[0\]`"):
        score_detection(detection, [{"start": 1.0}])


def test_detection_figure_has_a_panel_per_joint(twin, identified):
    figure = detection_figure(identified, twin["pulses"].metadata["contacts"])
    assert len(figure.axes) == 7
    assert "event" in figure._suptitle.get_text()


def test_refusals_name_the_reason(twin):
    model, data = twin["model"], twin["pulses"]
    # a model without friction monitors, warned: its residual holds the arm's friction
    with pytest.warns(FrictionlessModelWarning, match="no friction"):
        cad = detect_collisions(robot_model(load_robot("panda-cad")), data, thresholds=1.0)
    assert any("no friction" in note for note in cad.notes)
    other = Dataset(t=data.t[:100], q=data.q[:100, :6], dq=data.dq[:100, :6],
                    tau=data.tau[:100, :6])
    with pytest.raises(ValueError, match="6 joints"):
        detect_collisions(model, other, thresholds=1.0)
    renamed = dataclasses.replace(data, metadata={**data.metadata, "robot": "kuka"})
    with pytest.raises(ValueError, match="'kuka'"):
        detect_collisions(model, renamed, thresholds=1.0)
    with pytest.raises(ValueError, match="needs `calibration`"):
        detect_collisions(model, data)
    with pytest.raises(ValueError, match="`thresholds` must be > 0"):
        detect_collisions(model, data, thresholds=[1.0] * 6 + [0.0])
    with pytest.raises(ValueError, match="`gain` must be > 0"):
        momentum_residual(model, data, gain=-1.0)


def test_log_without_velocities_uses_identify_preprocessing(twin, identified):
    data = twin["pulses"]
    blind = Dataset(t=data.t, q=data.q, dq=np.zeros_like(data.dq), tau=data.tau,
                    metadata={"source": "blind.csv"})
    with pytest.warns(NoVelocityWarning, match="blind.csv has no velocities"):
        detection = detect_collisions(twin["model"], blind, thresholds=identified.thresholds)
    assert any("identify's preprocessing" in note for note in detection.notes)
    assert detection.t[0] == pytest.approx(0.5)  # trimmed as identify trims
    assert len(detection.events) >= 5  # offline velocities: most pulses still seen


def test_detect_command(twin, tmp_path, capsys):
    model_file = tmp_path / "model.yaml"
    save_model(twin["model"], model_file)
    for name in ("calibration", "pulses"):
        write_dataset(tmp_path / f"{name}.npz", twin[name])
    specs = [f"{c.start:g}+50ms:{','.join(f'{v:g}' for v in c.force)}" for c in PULSES]
    plot = tmp_path / "detection.png"
    argv = ["detect", str(model_file), str(tmp_path / "pulses.npz"), "--calibration",
            str(tmp_path / "calibration.npz"), "--plot", str(plot), "--json"]
    for spec in specs:
        argv += ["--contact", spec]
    assert main(argv) == 0
    payload = json.loads(capsys.readouterr().out)
    assert len(payload["events"]) == 10 and payload["score"]["missed"] == []
    assert payload["score"]["max_delay"] <= 0.020 and payload["score"]["false_alarms"] == 0
    assert plot.stat().st_size > 10_000
    assert main(["detect", str(model_file), str(tmp_path / "pulses.npz"), "--threshold",
                 *(f"{v:.6g}" for v in payload["thresholds"])]) == 0
    assert "10 event(s)" in capsys.readouterr().out
    for argv, message in (
            (["model.yaml", "pulses.npz"], "`--threshold auto` needs `--calibration"),
            (["model.yaml", "pulses.npz", "--threshold", "x"], "`--threshold` must be auto"),
            (["model.yaml", "pulses.npz", "--threshold", "1", "--contact", "1:2"],
             "`--contact`")):
        status = main(["detect", *(str(tmp_path / a) if a.endswith((".npz", ".yaml")) else a
                                   for a in argv)])
        error = capsys.readouterr().err
        assert status == 2 and message in error and len(error.strip().splitlines()) == 1, error
    # the CAD model has no friction: it monitors, with one line that says what that costs
    assert main(["detect", "panda-cad", str(tmp_path / "pulses.npz"), "--threshold", "1"]) == 0
    warned = [line for line in capsys.readouterr().err.splitlines() if "no friction" in line]
    assert len(warned) == 1 and "FrictionlessModelWarning" in warned[0], warned


def test_report_gains_the_detection_and_the_bootstrap_intervals(twin, tmp_path):
    """`dynid report --collisions` adds the detection's section (thresholds, events, score,
    plot); a model with a bootstrap shows its intervals beside the formula's sigma."""
    from dynid.identification import bootstrap

    model = twin["model"]
    data = prepare(twin["free"].select(slice(0, 6000)))
    boot = bootstrap(twin["user"], data, method="ols", replicates=20, seed=1,
                     friction=ViscousCoulomb.zeros(7))
    model_file = tmp_path / "model.yaml"
    save_model(boot.annotate(model), model_file)
    for name in ("calibration", "pulses", "free"):
        write_dataset(tmp_path / f"{name}.npz", twin[name])
    specs = [f"{c.start:g}+50ms:{','.join(f'{v:g}' for v in c.force)}" for c in PULSES]
    report = tmp_path / "report.html"
    argv = ["report", str(model_file), str(tmp_path / "free.npz"), "--poses", "50",
            "--collisions", str(tmp_path / "pulses.npz"), "--calibration",
            str(tmp_path / "calibration.npz"), "-o", str(report)]
    for spec in specs:
        argv += ["--contact", spec]
    assert main(argv) == 0
    text = report.read_text()
    assert "<h2>Collision detection</h2>" in text and "10 event(s)" in text
    assert "10 of 10 contact(s) detected" in text and "0 false alarm(s)" in text
    assert "σ (bootstrap)" in text and "interval low" in text
    # the detection plot beside the report's parameters, torques and friction figures
    assert text.count("src='data:image/png;base64,") == 4
    assert "alt='collision detection'" in text
    assert main(["report", str(model_file), str(tmp_path / "free.npz"), "--collisions",
                 str(tmp_path / "pulses.npz"), "-o", str(tmp_path / "r.html")]) == 2
    assert not (tmp_path / "r.html").exists()
