"""The physically consistent methods from motor currents: drive gains inside CLS-1/2/3 and
log-Cholesky (Gautier & Briot's global system, refined in current units), on the twin."""

from __future__ import annotations

import time

import numpy as np
import pytest

from dynid.excitation import random_fourier
from dynid.friction import ViscousCoulomb
from dynid.identification import KnownPayload, identify_drive_gains
from dynid.identification.constrained.cls import CONSTRAINED_METHODS, identify_constrained
from dynid.robot import load_robot
from dynid.robot.inertia import from_com, transform_parameters
from dynid.simulate import SensorModel, simulate_open_loop

RNG = np.random.default_rng(23)
N = 3
GAINS = np.array([1.6, 0.7, 1.2])  # N m/A
OFFSETS = RNG.uniform(-0.3, 0.3, (3, N))  # N m, one row per identification log
NOISE = 0.05  # N m of torque noise (in amperes: over each joint's gain)
PAYLOAD_MASS, PAYLOAD_COM = 3.0, np.array([0.05, 0.0, 0.04])  # kg; m in the tool frame


def _friction(n):
    return ViscousCoulomb(fv=np.full(n, 0.1), fc=np.full(n, 0.2), fo=np.zeros(n))


def _with_payload(robot):
    n = robot.n_joints
    tool = from_com(PAYLOAD_MASS, PAYLOAD_COM, np.diag([2e-3, 2e-3, 1e-3]))
    link = transform_parameters(tool, robot.tool[:3, :3], robot.tool[:3, 3])
    return robot.with_parameters(robot.parameters + np.vstack([np.zeros((n - 1, 10)), link]))


def _log(robot, seed, offset, gains, *, duration, noise=NOISE, rate=200.0):
    sensor = SensorModel(torque_noise_std=noise, torque_bias=offset, drive_gains=gains)
    return simulate_open_loop(robot, random_fourier(robot, seed=seed), duration=duration,
                              rate=rate, sensor=sensor, seed=seed)


def _twin_logs(robot, gains, offsets, *, duration, noise=NOISE):
    """Two current logs of the arm, one with the payload, and a held-out torque log whose
    offset is the identification logs' mean (the model's offset term)."""
    logs = [_log(robot, seed, offsets[seed - 1], gains, duration=duration, noise=noise)
            for seed in (1, 2)]
    payload_log = _log(_with_payload(robot), 3, offsets[2], gains, duration=duration,
                       noise=noise)
    held_out = _log(robot, 11, offsets.mean(axis=0), None, duration=duration, noise=noise)
    return logs, payload_log, held_out


@pytest.fixture(scope="module")
def arm():
    return load_robot("arm3").with_friction(_friction(N))


@pytest.fixture(scope="module")
def twin(arm):
    return _twin_logs(arm, GAINS, OFFSETS, duration=8.0)


def _payload():
    return KnownPayload(PAYLOAD_MASS, PAYLOAD_COM)


def _held_out_rms(model, log, shift=0.0):
    """Each joint's RMS error [N m] of the model's torque (plus ``shift``: the held-out log's
    offset over the model's) on a held-out torque log."""
    error = model.predict(log.q, log.dq, log.ddq) + shift - log.tau
    return np.sqrt(np.mean(error**2, axis=0))


@pytest.mark.parametrize("method", CONSTRAINED_METHODS)
def test_every_consistent_method_identifies_the_drive_gains(arm, twin, method):
    logs, payload_log, held_out = twin
    result = identify_constrained(arm, logs, method=method, payload_data=payload_log,
                                  payload=_payload())
    model = result.model
    assert result.success, result.status
    assert np.abs(model.drive_gains / GAINS - 1).max() < 0.01
    assert (model.drive_gains_std > 0).all()
    assert (np.abs(model.drive_gains - GAINS) < 5 * model.drive_gains_std).all()
    # held-out torques at the noise floor
    assert (_held_out_rms(model, held_out) < 1.3 * NOISE).all()
    report = model.report
    assert report["kind"] == "current" and report["method"] == method
    assert report["drive_gains"]["value"] == model.drive_gains.tolist()
    assert report["drive_gains"]["std"] == model.drive_gains_std.tolist()
    assert report["drive_gains"]["known"] == {}
    assert report["payload"]["mass"] == PAYLOAD_MASS
    assert report["payload"]["com_tool"] == PAYLOAD_COM.tolist()
    assert set(report["payload"]["identified"]) and all(
        name.startswith("payload_") for name in report["payload"]["identified"])
    assert report["gauss_newton"]["converged"] and report["gauss_newton"]["steps"] >= 1
    # the relative error is in torque units (measured = K i) and at the noise level
    assert report["relative_error_percent"] == result.relative_error_percent
    assert 0 < result.relative_error_percent < 5
    assert len(report["log_offsets"]) == 3
    if method in ("cls3", "log-cholesky"):
        assert result.consistency.consistent


def test_the_estimate_minimises_the_cost_in_current_units(arm, twin):
    """Without a regulariser and with the bounds not binding, CLS-1's base parameters and
    gains are the unconstrained minimiser of the current-units cost: Gautier & Briot's
    Gauss-Newton estimate (identify_drive_gains), not the linear form's (biased) one."""
    logs, payload_log, _ = twin
    unconstrained = identify_drive_gains(arm, logs, payload_data=payload_log,
                                         payload=_payload())
    result = identify_constrained(arm, logs, method="cls1", payload_data=payload_log,
                                  payload=_payload(), weight=0.0)
    assert np.abs(result.model.drive_gains / unconstrained.drive_gains - 1).max() < 1e-5
    np.testing.assert_allclose(result.model.drive_gains_std, unconstrained.drive_gains_std,
                               rtol=1e-3)


def test_noisy_currents_need_the_current_units_refinement(arm):
    """Noisy currents on a joint with little torque (joint 1 turns about the vertical: no
    gravity) bias the linear form's gain towards zero (errors in variables: -8 % here); the
    fit in current units removes the bias."""
    logs, payload_log, _ = _twin_logs(arm, GAINS, OFFSETS, duration=6.0, noise=0.3)
    lines = []
    result = identify_constrained(arm, logs, method="cls3", payload_data=payload_log,
                                  payload=_payload(), progress=lines.append)
    steps = result.model.report["gauss_newton"]
    start = np.array(steps["linear_form_gains"])
    assert start[0] / GAINS[0] - 1 < -0.03
    error = np.abs(result.model.drive_gains / GAINS - 1)
    assert (error < 3 * result.model.drive_gains_std / GAINS).all(), error
    assert error[0] < 0.015
    assert steps["steps"] >= 2 and len(lines) == steps["steps"]


def test_a_known_gain_fixes_the_scale_without_a_payload(arm, twin):
    logs, _, held_out = twin
    result = identify_constrained(arm, logs, method="cls3", gains={1: GAINS[0]})
    model = result.model
    assert model.drive_gains[0] == GAINS[0] and model.drive_gains_std[0] == 0
    assert np.abs(model.drive_gains / GAINS - 1).max() < 0.01
    assert model.report["drive_gains"]["known"] == {arm.joint_names[0]: GAINS[0]}
    assert "payload" not in model.report
    assert result.consistency.consistent
    # the model's offsets are the mean of the two logs', the held-out log's of all three
    shift = OFFSETS.mean(axis=0) - OFFSETS[:2].mean(axis=0)
    assert (_held_out_rms(model, held_out, shift) < 1.3 * NOISE).all()


def test_currents_without_a_scale_are_refused(arm, twin):
    logs, payload_log, held_out = twin
    for method in CONSTRAINED_METHODS:
        with pytest.raises(ValueError, match=r"up to a scale.*payload log.*known gain.*ratios"):
            identify_constrained(arm, logs, method=method)
    with pytest.raises(ValueError, match=r"`payload_data` and `payload` come together"):
        identify_constrained(arm, logs, payload_data=payload_log)
    with pytest.raises(ValueError, match=r"`gains`: 9 is no joint"):
        identify_constrained(arm, logs, gains={9: 1.0})
    with pytest.raises(ValueError, match=r"`gains\[1\]` must be a nonzero number"):
        identify_constrained(arm, logs, gains={1: 0.0})
    with pytest.raises(ValueError, match=r"are for motor-current logs"):
        identify_constrained(arm, held_out, gains={1: 1.0})
    with pytest.raises(ValueError, match=r"every log of this fit must hold currents"):
        identify_constrained(arm, [logs[0], held_out], gains={1: 1.0})
    with pytest.raises(ValueError, match=r"`weight`: 'auto' is for torque logs"):
        identify_constrained(arm, logs, gains={1: 1.0}, weight="auto")
    with pytest.raises(ValueError, match=r"`gain_range` must be 3 pairs"):
        identify_constrained(arm, logs, gains={1: 1.0}, gain_range=[[0.5, 2.0]])
    with pytest.raises(ValueError, match=r"`gain_range`: joint 2 spans \[-1, 1\]"):
        identify_constrained(arm, logs, gains={1: 1.0},
                             gain_range=[[0.5, 2.0], [-1.0, 1.0], [0.5, 2.0]])


def test_the_robot_files_gain_range_bounds_the_gains(arm, twin):
    logs, payload_log, _ = twin
    # joint 2's range excludes its true gain (0.7): the estimate sits on the range's edge
    span = np.array([[1.0, 2.0], [0.75, 0.9], [0.5, 3.0]])
    bounded = arm.with_drive_gains(gain_range=span)
    for method in ("cls3", "log-cholesky"):
        result = identify_constrained(bounded, logs, method=method, payload_data=payload_log,
                                      payload=_payload())
        gains = result.model.drive_gains
        assert abs(gains[1] / 0.75 - 1) < 1e-6, (method, gains)
        assert (gains >= span[:, 0] * (1 - 1e-9)).all() and (gains <= span[:, 1]).all()
        assert result.consistency.consistent
    # the argument overrides the robot file's range
    free = identify_constrained(bounded, logs, method="cls3", payload_data=payload_log,
                                payload=_payload(), gain_range=[[1, 2], [0.5, 0.9], [0.5, 3]])
    assert np.abs(free.model.drive_gains / GAINS - 1).max() < 0.01


def panda_gains_error(*, method: str = "cls3", duration: float = 10.0, rate: float = 200.0,
                      seed: int = 5) -> dict:
    """The bench's figure: ``method`` (CLS-3 by default) on Panda twin currents (two arm logs
    and one with a known 3 kg payload, 0.1 N m of noise, offsets per log, gains drawn in
    [0.5, 2] N m/A) — ``gains_max_relative_error`` (max over the joints of |K^ / K - 1|), that
    of the linear form it starts from, the fit's seconds, its Gauss-Newton steps, whether the
    model is consistent, and the held-out torque RMS over the noise per joint."""
    robot = load_robot("panda").with_friction(_friction(7))
    rng = np.random.default_rng(seed)
    gains = rng.uniform(0.5, 2.0, 7)
    offsets = rng.uniform(-0.5, 0.5, (3, 7))
    noise = 0.1
    logs = [_log(robot, seed + k, offsets[k], gains, duration=duration, rate=rate, noise=noise)
            for k in range(2)]
    payload_log = _log(_with_payload(robot), seed + 2, offsets[2], gains, duration=duration,
                       rate=rate, noise=noise)
    held_out = _log(robot, seed + 3, offsets.mean(axis=0), None, duration=duration, rate=rate,
                    noise=noise)
    start = time.perf_counter()
    result = identify_constrained(robot, logs, method=method, payload_data=payload_log,
                                  payload=_payload())
    seconds = time.perf_counter() - start
    steps = result.model.report["gauss_newton"]
    return {"gains_max_relative_error": float(np.abs(result.model.drive_gains / gains - 1).max()),
            "linear_form_gains_max_relative_error": float(
                np.abs(np.array(steps["linear_form_gains"]) / gains - 1).max()),
            "seconds": seconds, "steps": steps["steps"], "n_samples": 3 * logs[0].n_samples,
            "consistent": result.consistency.consistent, "status": result.status,
            "held_out_rms_over_noise": (_held_out_rms(result.model, held_out) / noise).tolist()}


def test_panda_cls3_from_currents():
    figures = panda_gains_error()
    assert figures["gains_max_relative_error"] < 0.01, figures
    assert figures["consistent"] and figures["status"] == "optimal"
    assert max(figures["held_out_rms_over_noise"]) < 1.3, figures


def test_a_refinement_cut_short_warns(arm, twin, monkeypatch):
    import dynid.identification.constrained.cls as constrained

    logs, payload_log, _ = twin
    monkeypatch.setattr(constrained, "CURRENT_STEPS", 1)
    with pytest.warns(constrained.CurrentConvergenceWarning, match="after 1 Gauss-Newton"):
        result = identify_constrained(arm, logs, method="cls3", payload_data=payload_log,
                                      payload=_payload())
    assert not result.model.report["gauss_newton"]["converged"]


def test_a_consistent_model_from_currents_round_trips(arm, twin, tmp_path):
    from dynid.model import load_model, save_model

    logs, payload_log, _ = twin
    stated = arm.with_drive_gains([1.5, 0.8, 1.1], [[1.0, 2.0], [0.5, 1.0], [1.0, 2.0]])
    result = identify_constrained(stated, logs, method="log-cholesky",
                                  payload_data=payload_log, payload=_payload())
    save_model(result.model, tmp_path / "model.yaml")
    back = load_model(tmp_path / "model.yaml")
    np.testing.assert_array_equal(back.drive_gains, result.model.drive_gains)
    np.testing.assert_array_equal(back.drive_gains_std, result.model.drive_gains_std)
    np.testing.assert_array_equal(back.robot.drive_gain_range, stated.drive_gain_range)
    # a current log read as torques through the identified gains
    np.testing.assert_array_equal(back.measured_torque(logs[0]),
                                  logs[0].tau * result.model.drive_gains)
