"""Motor currents all the way (issue 23): the twin logs currents and payload logs, validate and
the report give errors in A and in N m, codegen writes currents, bootstrap and compare resample
and refit current logs."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess

import numpy as np
import pinocchio as pin
import pytest
from conftest import assert_close

from dynid.cli import main
from dynid.data.io import read_dataset, write_dataset
from dynid.dynamics import rnea
from dynid.excitation.optimize import random_fourier
from dynid.excitation.trajectory import save_trajectory
from dynid.friction.models import ViscousCoulomb
from dynid.identification.drive_gains import KnownPayload, identify_drive_gains
from dynid.identification.linear.idim import robot_model
from dynid.robot import load_robot, to_pinocchio
from dynid.robot.inertia import from_com, transform_parameters
from dynid.simulate.twin import (
    PAYLOAD_RADIUS,
    SensorModel,
    simulate_closed_loop,
    simulate_open_loop,
    with_payload,
)

GAINS = np.array([1.7, -0.8, 1.2])  # N m/A; a drive may count its current the other way
ROTOR = np.array([0.05, 0.08, 0.03])  # kg m^2 reflected
PAYLOAD_MASS, PAYLOAD_COM = 2.0, np.array([0.03, -0.02, 0.05])


@pytest.fixture(scope="module")
def arm():
    friction = ViscousCoulomb(fv=np.full(3, 0.1), fc=np.full(3, 0.2), fo=np.full(3, 0.05))
    return load_robot("arm3").with_friction(friction).with_rotor_inertia(ROTOR)


def _log(robot, seed, *, noise=0.0, duration=6.0, rate=100.0, gains=GAINS):
    sensor = SensorModel(torque_noise_std=noise, drive_gains=gains)
    return simulate_open_loop(robot, random_fourier(robot, seed=seed), duration=duration,
                              rate=rate, sensor=sensor, seed=seed)


# --- the twin logs currents ------------------------------------------------------------------

def test_currents_times_the_gains_are_the_truths_torque_with_rotors_and_friction(arm):
    """K i == rnea (rotor inertias included) + friction, to round-off, against pinocchio's
    RNEA with armature and against the truth's own model; neither term may be missing."""
    data = _log(arm, 1)
    assert data.effort == "current" and data.metadata["sensor"]["drive_gains"] == GAINS.tolist()
    torque = data.tau * GAINS
    assert_close(torque, robot_model(arm).predict(data.q, data.dq, data.ddq, data.t),
                 rtol=1e-12, atol=1e-12)
    model, pdata = to_pinocchio(arm), None
    pdata = model.createData()
    oracle = np.array([pin.rnea(model, pdata, q, dq, ddq)
                       for q, dq, ddq in zip(data.q, data.dq, data.ddq, strict=True)])
    assert_close(torque, oracle + arm.friction.torque(data.dq), rtol=1e-10, atol=1e-10)
    rotor = ROTOR * data.ddq
    friction = arm.friction.torque(data.dq)
    assert np.abs(rotor).max() > 0.1 and np.abs(friction).max() > 0.1  # both matter here
    bare = rnea(arm.with_rotor_inertia(None), data.q, data.dq, data.ddq)
    assert not np.allclose(torque, bare + friction, atol=1e-3)
    assert not np.allclose(torque, bare + rotor, atol=1e-3)


def test_closed_loop_currents_are_the_applied_torque_over_the_gains(arm):
    data = simulate_closed_loop(arm, random_fourier(arm, seed=2), duration=0.5, rate=500.0,
                                sensor=SensorModel(drive_gains=GAINS))
    expected = rnea(arm, data.q, data.dq, data.ddq) + arm.friction.torque(data.dq)
    assert data.effort == "current"
    assert_close(data.tau * GAINS, expected, rtol=1e-9, atol=1e-9)


def test_the_payload_is_a_sphere_at_its_centre_of_mass_in_the_tool_frame(arm):
    carried = with_payload(arm, PAYLOAD_MASS, PAYLOAD_COM)
    sphere = np.eye(3) * 0.4 * PAYLOAD_MASS * PAYLOAD_RADIUS**2
    link = transform_parameters(from_com(PAYLOAD_MASS, PAYLOAD_COM, sphere),
                                arm.tool[:3, :3], arm.tool[:3, 3])
    assert_close(carried.parameters[:-1], arm.parameters[:-1], rtol=0, atol=0)
    assert_close(carried.parameters[-1], arm.parameters[-1] + link)
    assert carried.name == arm.name
    at_tool = with_payload(arm, PAYLOAD_MASS)
    mass, first = at_tool.parameters[-1, 0], at_tool.parameters[-1, 1:4]
    expected = arm.parameters[-1, 1:4] + PAYLOAD_MASS * arm.tool[:3, 3]
    assert mass == pytest.approx(arm.parameters[-1, 0] + PAYLOAD_MASS)
    assert_close(first, expected)
    for bad in (0.0, -1.0, float("nan"), True):
        with pytest.raises(ValueError, match="`mass` must be a number > 0 kg"):
            with_payload(arm, bad)
    with pytest.raises(ValueError, match="com"):
        with_payload(arm, 1.0, [0.1, 0.2])


@pytest.fixture(scope="module")
def written(arm, tmp_path_factory):
    """The CLI flow's files: the robot, a trajectory, two current logs and a payload log."""
    from dynid.robot import save_robot

    folder = tmp_path_factory.mktemp("currents")
    save_robot(arm, folder / "arm.yaml")
    for seed in (1, 2, 3):
        save_trajectory(folder / f"traj{seed}.csv", random_fourier(arm, seed=seed),
                        duration=6.0, rate=100.0, allow_moving_ends=True)
    gains = [str(k) for k in GAINS]
    for name, seed, extra in (("c1", 1, []), ("c2", 2, []),
                              ("pay", 3, ["--payload-mass", str(PAYLOAD_MASS),
                                          "--payload-com", *map(str, PAYLOAD_COM)])):
        assert main(["simulate", str(folder / "arm.yaml"), str(folder / f"traj{seed}.csv"),
                     "-o", str(folder / f"{name}.csv"), "--rate", "100", "--noise", "0.02",
                     "--seed", str(seed), "--drive-gains", *gains, *extra, "--quiet",
                     "--json"]) == 0
    return folder


def test_simulate_writes_current_logs_that_read_back_as_currents(arm, written, tmp_path, capsys):
    data = read_dataset(written / "c1.csv")
    assert data.effort == "current"
    header = (written / "c1.csv").read_text().splitlines()[0]
    assert "current1" in header and "tau1" not in header
    # one gain for every joint, NPZ: read back as currents too
    trajectory = str(written / "traj1.csv")
    assert main(["simulate", str(written / "arm.yaml"), trajectory, "-o",
                 str(tmp_path / "one.npz"), "--rate", "100", "--drive-gains", "2",
                 "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["effort"] == "current" and summary["drive_gains"] == [2.0, 2.0, 2.0]
    back = read_dataset(tmp_path / "one.npz")
    exact = simulate_open_loop(arm, random_fourier(arm, seed=1), duration=6.0, rate=100.0)
    assert back.effort == "current"
    assert_close(back.tau * 2.0, exact.tau, rtol=1e-12, atol=1e-12)
    # the payload log holds the currents of the arm carrying the payload
    assert main(["simulate", str(written / "arm.yaml"), trajectory, "-o",
                 str(tmp_path / "pay.npz"), "--rate", "100", "--drive-gains", "2",
                 "--payload-mass", "1.5"]) == 0
    assert "payload on the last link: 1.5 kg" in capsys.readouterr().out
    carried = simulate_open_loop(with_payload(arm, 1.5), random_fourier(arm, seed=1),
                                 duration=6.0, rate=100.0)
    assert_close(read_dataset(tmp_path / "pay.npz").tau * 2.0, carried.tau, rtol=1e-12,
                 atol=1e-12)


def test_identify_recovers_the_gains_from_the_simulated_payload_log(arm, written, capsys):
    model = written / "model.yaml"
    assert main(["identify", str(written / "arm.yaml"), str(written / "c1.csv"),
                 str(written / "c2.csv"), "--payload-log", str(written / "pay.csv"),
                 "--payload-mass", str(PAYLOAD_MASS), "--payload-com",
                 *map(str, PAYLOAD_COM), "-o", str(model), "--json", "--quiet"]) == 0
    gains = np.array(json.loads(capsys.readouterr().out)["drive_gains"]["value"])
    assert np.abs(gains / GAINS - 1).max() < 0.02


@pytest.mark.parametrize(("arguments", "message"), [
    (["--drive-gains", "0"], "--drive-gains: expected a finite nonzero gain"),
    (["--drive-gains", "nan"], "--drive-gains: expected a finite nonzero gain"),
    (["--drive-gains", "inf"], "--drive-gains: expected a finite nonzero gain"),
    (["--drive-gains", "one"], "--drive-gains: expected a number"),
    (["--drive-gains", "1e300"], "--drive-gains: expected a finite nonzero gain"),
    (["--drive-gains", "1e-300"], "--drive-gains: expected a finite nonzero gain"),
    (["--payload-mass", "0"], "--payload-mass"),
    (["--payload-mass", "kg"], "--payload-mass"),
    (["--payload-mass", "2", "--payload-com", "0.1", "0"], "--payload-com"),
    (["--payload-mass", "2", "--payload-com", "0.1", "0", "x"], "--payload-com"),
    (["--payload-mass", "2", "--payload-com", "0.1", "0", "nan"], "--payload-com"),
])
def test_bad_gains_and_payloads_name_the_option(written, tmp_path, capsys, arguments, message):
    with pytest.raises(SystemExit):
        main(["simulate", str(written / "arm.yaml"), str(written / "traj1.csv"), "-o",
              str(tmp_path / "x.csv"), *arguments])
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()


def test_a_payload_com_without_its_mass_is_refused(written, tmp_path, capsys):
    assert main(["simulate", str(written / "arm.yaml"), str(written / "traj1.csv"), "-o",
                 str(tmp_path / "x.csv"), "--payload-com", "0", "0", "0.1"]) == 2
    assert "`--payload-com` places the payload of `--payload-mass KG`" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()


def test_a_wrong_count_of_gains_names_the_option(written, tmp_path, capsys):
    assert main(["simulate", str(written / "arm.yaml"), str(written / "traj1.csv"), "-o",
                 str(tmp_path / "x.csv"), "--drive-gains", "1", "2"]) == 2
    assert "`--drive-gains` takes one value for every joint or one per joint (3" in \
        capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()


# --- errors in A and in N m ------------------------------------------------------------------

@pytest.fixture(scope="module")
def current_logs(arm):
    logs = [_log(arm, seed, noise=0.02) for seed in (1, 2)]
    payload_log = _log(with_payload(arm, PAYLOAD_MASS, PAYLOAD_COM), 3, noise=0.02)
    check = _log(arm, 4, noise=0.02)
    return logs, payload_log, check


@pytest.fixture(scope="module")
def current_model(arm, current_logs):
    logs, payload_log, _ = current_logs
    return identify_drive_gains(arm, logs, payload_data=payload_log,
                                payload=KnownPayload(PAYLOAD_MASS, PAYLOAD_COM))


def test_validation_on_a_current_log_gives_errors_in_amperes_and_newton_metres(
        current_model, current_logs):
    from dynid.evaluation.validate import validate_model

    _, _, check = current_logs
    report = validate_model(current_model, check, n_poses=50)
    gains = current_model.drive_gains
    predicted = current_model.predict(check.q, check.dq, check.ddq, check.t)
    amperes = check.tau - predicted / gains  # the residual in current units, computed here
    assert_close(report.rmse, np.sqrt(np.mean((check.tau * gains - predicted) ** 2, axis=0)))
    assert_close(report.currents["rmse_current"], np.sqrt(np.mean(amperes**2, axis=0)))
    assert_close(report.currents["mae_current"], np.mean(np.abs(amperes), axis=0))
    assert_close(report.currents["rms_current"], np.sqrt(np.mean(check.tau**2, axis=0)))
    # signed, also on joint 2 whose gain is negative
    assert_close(report.currents["residual_mean_current"], np.mean(amperes, axis=0),
                 rtol=1e-9, atol=1e-12)
    assert_close(report.currents["rmse_current"], 0.02 / np.abs(GAINS), rtol=0.25)  # the noise
    payload = json.loads(json.dumps(report.to_json()))
    assert payload["effort"] == "current"
    for key in ("rmse_current", "mae_current", "rmse_rigid_current", "rms_current"):
        assert len(payload[key]) == 3
    assert_close(payload["drive_gains"]["value"], gains)
    text = "\n".join(report.lines())
    assert "errors in N m and in A" in text
    for label in ("RMSE [N m]", "RMSE [A]", "MAE [A]", "drive gain K [N m/A]"):
        assert label in text
    scored = validate_model(current_model, check, n_poses=10, joints=[2])
    assert_close(scored.currents["rmse_current"], report.currents["rmse_current"][1:2])


def test_a_torque_log_has_no_errors_in_amperes(arm, current_model):
    from dynid.evaluation.validate import validate_model

    torques = simulate_open_loop(arm, random_fourier(arm, seed=4), duration=6.0, rate=100.0)
    report = validate_model(current_model, torques, n_poses=10)
    assert report.currents is None and "rmse_current" not in report.to_json()
    assert "[A]" not in "\n".join(report.lines())


def test_a_torque_model_on_a_current_log_says_it_has_no_gains(arm, current_logs, tmp_path,
                                                               capsys):
    from dynid.evaluation.validate import validate_model
    from dynid.identification.linear.idim import identify
    from dynid.model.linear_model import save_model

    _, _, check = current_logs
    model = identify(arm, [simulate_open_loop(arm, random_fourier(arm, seed=seed),
                                              duration=6.0, rate=100.0) for seed in (1, 2)])
    with pytest.raises(ValueError, match=r"`data` holds motor currents \[A\], and the model "
                                         r"has no drive gains"):
        validate_model(model, check, n_poses=10)
    save_model(model, tmp_path / "torque.yaml")
    write_dataset(tmp_path / "check.csv", check)
    assert main(["validate", str(tmp_path / "torque.yaml"), str(tmp_path / "check.csv")]) == 2
    err = capsys.readouterr().err
    assert "torque.yaml" in err and "the model has no drive gains" in err
    assert main(["report", str(tmp_path / "torque.yaml"), str(tmp_path / "check.csv"), "-o",
                 str(tmp_path / "r.html"), "--poses", "10"]) == 2
    assert "the model has no drive gains" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


def test_validate_and_report_commands_on_a_current_log(current_model, current_logs, tmp_path,
                                                       capsys):
    from dynid.model.linear_model import save_model

    _, _, check = current_logs
    save_model(current_model, tmp_path / "model.yaml")
    write_dataset(tmp_path / "check.csv", check)
    common = [str(tmp_path / "model.yaml"), str(tmp_path / "check.csv"), "--poses", "20"]
    assert main(["validate", *common, "--as-is", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["effort"] == "current" and len(payload["rmse_current"]) == 3
    assert main(["validate", *common, "--as-is"]) == 0
    text = capsys.readouterr().out
    assert "RMSE [A]" in text and "RMSE [N m]" in text
    assert main(["report", *common, "--as-is", "-o", str(tmp_path / "r.html")]) == 0
    html = (tmp_path / "r.html").read_text()
    for label in ("K [N m/A]", "σ [N m/A]", "RMSE [A]", "RMSE [N m]", "RMS i [A]",
                  "A motor-current log"):
        assert label in html
    for value in current_model.drive_gains:
        assert f"{value:.6g}" in html


# --- codegen: currents or torques ------------------------------------------------------------

def _compiled(code_dir, name, model, tmp_path, **options):
    import ctypes

    from dynid.codegen import generate

    compiler = shutil.which("cc")
    if compiler is None:
        pytest.skip("no system C compiler `cc` on PATH")
    code = generate(model, tmp_path / f"{name}.h", effort="current", **options)
    library = tmp_path / f"lib{name}.so"
    subprocess.run([compiler, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic",
                    "-shared", "-fPIC", "-O0", str(tmp_path / f"{name}.c"), "-o",
                    str(library), "-lm"], check=True, capture_output=True, text=True)
    return code, ctypes.CDLL(str(library))


def _call(lib, function, *arrays, n):
    import ctypes

    fn = getattr(lib, function)
    fn.restype = None
    rows = arrays[0].shape[0]
    out = np.zeros((rows, n))
    for k in range(rows):
        row = [None if a is None else np.ascontiguousarray(a[k], dtype=float) for a in arrays]
        fn(*[None if r is None else r.ctypes.data_as(ctypes.c_void_p) for r in row],
           out[k].ctypes.data_as(ctypes.c_void_p))
    return out


def test_generated_inverse_dynamics_in_currents_is_the_models_torque_over_its_gains(
        current_model, tmp_path):
    from dynid.friction.models import NoFriction
    from dynid.identification.linear.idim import linear_template

    rng = np.random.default_rng(3)
    q, dq, ddq = rng.uniform(-2, 2, (3, 10, 3))
    dq[0, 0] = 0.0
    code, lib = _compiled(tmp_path, "arm", current_model, tmp_path, prefix="arm")
    assert code.effort == "current"
    assert {"inverse_dynamics_current", "gravity_current"} <= set(code.functions)
    assert "#define ARM_HAS_CURRENT_DYNAMICS 1" in code.files["arm.h"]
    gains = current_model.drive_gains
    expected = current_model.predict(q, dq, ddq) / gains
    scale = np.abs(expected).max()
    assert np.abs(current_model.friction_torque(dq)).max() > 0.1  # friction is in it
    assert_close(_call(lib, "arm_inverse_dynamics_current", q, dq, ddq, None, n=3), expected,
                 rtol=1e-12, atol=1e-12 * scale)
    assert_close(_call(lib, "arm_gravity_current", q, n=3),
                 current_model.gravity_torque(q) / gains, rtol=1e-12, atol=1e-12 * scale)
    # a model without friction: no state argument
    robot = load_robot("arm3")
    template = linear_template(robot, NoFriction(3))
    bare = dataclasses.replace(template, coefficients=template.base.regrouping
                               @ robot.parameters.ravel(), drive_gains=GAINS,
                               drive_gains_std=GAINS / 100)
    code, lib = _compiled(tmp_path, "bare", bare, tmp_path, prefix="bare")
    assert_close(_call(lib, "bare_inverse_dynamics_current", q, dq, ddq, n=3),
                 bare.predict(q, dq, ddq) / GAINS, rtol=1e-12,
                 atol=1e-12 * np.abs(bare.predict(q, dq, ddq) / GAINS).max())


def test_torque_code_has_no_current_dynamics_and_a_torque_model_is_refused(
        current_model, arm, tmp_path, capsys):
    from dynid.codegen import generate
    from dynid.identification.linear.idim import robot_model
    from dynid.model.linear_model import save_model

    torques = generate(current_model)
    assert torques.effort == "torque" and "inverse_dynamics_current" not in torques.functions
    torque_model = robot_model(arm)
    with pytest.raises(ValueError, match="`effort`: 'current' needs a model with drive gains"):
        generate(torque_model, tmp_path / "x.h", effort="current")
    with pytest.raises(ValueError, match="`effort` must be 'torque' or 'current', got 'amps'"):
        generate(current_model, effort="amps")
    assert not list(tmp_path.iterdir())  # nothing written
    save_model(torque_model, tmp_path / "torque.yaml")
    assert main(["codegen", str(tmp_path / "torque.yaml"), "-o", str(tmp_path / "t.c"),
                 "--effort", "current"]) == 2
    err = capsys.readouterr().err
    assert "`--effort current`" in err and "has no drive gains" in err
    assert not (tmp_path / "t.c").exists() and not (tmp_path / "t.h").exists()
    save_model(current_model, tmp_path / "current.yaml")
    assert main(["codegen", str(tmp_path / "current.yaml"), "-o", str(tmp_path / "c.hpp"),
                 "--effort", "current", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["effort"] == "current"
    assert any(name.endswith("::inverse_dynamics_current") for name in payload["functions"])
    assert "constexpr bool has_current_dynamics = true;" in (tmp_path / "c.hpp").read_text()
    compiler = shutil.which("c++")
    if compiler is not None:  # the header-only C++ compiles, warnings as errors
        subprocess.run([compiler, "-std=c++11", "-Wall", "-Wextra", "-Werror", "-pedantic",
                        "-fsyntax-only", "-x", "c++", str(tmp_path / "c.hpp")], check=True)


# --- bootstrap and compare with currents -----------------------------------------------------

def _short_logs(arm, noise):
    logs = [_log(arm, seed, noise=noise, duration=4.0) for seed in (1, 2)]
    return logs, _log(with_payload(arm, PAYLOAD_MASS, PAYLOAD_COM), 3, noise=noise,
                      duration=4.0)


def test_noise_free_current_replicates_are_the_point_estimate(arm):
    """Residuals of every log, the payload log included (its payload's torque rebuilt from the
    fit), are zero on noise-free currents: every replicate refits the point estimate. Also when
    the fit reports no identified payload part (it is then fitted on the payload log)."""
    import dataclasses as dc

    from dynid.identification.bootstrap import _current_residuals, bootstrap

    logs, payload_log = _short_logs(arm, 0.0)
    payload = KnownPayload(PAYLOAD_MASS, PAYLOAD_COM)
    spread = bootstrap(arm, logs, method="ols", replicates=3, seed=2, payload_data=payload_log,
                       payload=payload)
    model = spread.model
    assert model.report["kind"] == "current" and spread.drive_gains.shape == (3, 3)
    assert_close(spread.drive_gains, np.tile(model.drive_gains, (3, 1)), rtol=1e-7, atol=0)
    assert_close(spread.coefficients, np.tile(model.coefficients, (3, 1)), rtol=1e-6,
                 atol=1e-7 * np.abs(model.coefficients).max())
    assert_close(model.drive_gains, GAINS, rtol=1e-7)
    _, residuals = _current_residuals(model, arm, logs, payload_log, payload)
    assert len(residuals) == 3
    assert max(np.abs(e).max() for e in residuals) < 1e-8
    bare = dc.replace(model, report={k: v for k, v in model.report.items() if k != "payload"})
    _, residuals = _current_residuals(bare, arm, logs, payload_log, payload)
    assert max(np.abs(e).max() for e in residuals) < 1e-8
    wrong = KnownPayload(PAYLOAD_MASS / 2, PAYLOAD_COM)  # the check can fail
    _, residuals = _current_residuals(model, arm, logs, payload_log, wrong)
    assert np.abs(residuals[2]).max() > 1e-3


def test_bootstrap_of_current_logs_gives_the_gains_spread(arm, tmp_path):
    from dynid.identification.bootstrap import bootstrap
    from dynid.model import bootstrap_table
    from dynid.model.linear_model import load_model, save_model

    logs, payload_log = _short_logs(arm, 0.02)
    spread = bootstrap(arm, logs, method="ols", replicates=16, seed=5,
                       payload_data=payload_log, payload=KnownPayload(PAYLOAD_MASS, PAYLOAD_COM))
    model = spread.model
    ratio = spread.gain_std / model.drive_gains_std  # white noise: the formula holds
    assert ((ratio > 0.4) & (ratio < 2.5)).all(), ratio
    low, high = spread.gain_interval(0.9)
    assert (low < high).all() and (low <= np.median(spread.drive_gains, axis=0)).all()
    assert (np.abs(model.drive_gains - GAINS) < 5 * spread.gain_std).all()
    entry = spread.to_report()
    assert set(entry["drive_gains"]) == {"std", "lower", "upper"}
    back = load_model(save_model(spread.annotate(), tmp_path / "m.yaml"))
    assert_close(back.report["bootstrap"]["drive_gains"]["std"], spread.gain_std)
    assert bootstrap_table(back) is not None
    # known gains instead of a payload log, and the same seed: the same replicates
    known = {1: float(GAINS[0])}
    first = bootstrap(arm, logs, method="ols", replicates=2, seed=7, gains=known)
    again = bootstrap(arm, logs, method="ols", replicates=2, seed=7, gains=known)
    np.testing.assert_array_equal(first.drive_gains, again.drive_gains)
    assert (first.drive_gains[:, 0] == GAINS[0]).all()  # a known gain stays known


def test_bootstrap_of_current_logs_refuses_what_cannot_work(arm):
    from dynid.identification.bootstrap import bootstrap

    logs, payload_log = _short_logs(arm, 0.02)
    payload = KnownPayload(PAYLOAD_MASS)
    torques = simulate_open_loop(arm, random_fourier(arm, seed=1), duration=4.0, rate=100.0)
    with pytest.raises(ValueError, match=r"`method`: wls identifies no drive gains"):
        bootstrap(arm, logs, method="wls", replicates=2, gains={1: 1.0})
    with pytest.raises(ValueError, match=r"only up to a scale: give a payload log .* only "
                                         "ratios"):
        bootstrap(arm, logs, replicates=2)
    with pytest.raises(ValueError, match="`payload_data` and `payload` come together"):
        bootstrap(arm, logs, replicates=2, payload_data=payload_log)
    with pytest.raises(ValueError, match="`payload_data` must be a motor-current Dataset"):
        bootstrap(arm, logs, replicates=2, payload_data=torques, payload=payload)
    with pytest.raises(ValueError, match="`payload`, `gains`: these fix the drive gains"):
        bootstrap(arm, torques, replicates=2, payload=payload, gains={1: 1.0})
    with pytest.raises(ValueError, match="mixes joint-torque and motor-current logs"):
        bootstrap(arm, [logs[0], torques], replicates=2, gains={1: 1.0})


def test_compare_current_logs_with_ols(arm):
    from concurrent.futures import ThreadPoolExecutor

    from dynid.identification.compare import compare_methods

    logs, payload_log = _short_logs(arm, 0.02)
    payload = KnownPayload(PAYLOAD_MASS, PAYLOAD_COM)
    with ThreadPoolExecutor(2) as pool:
        table = compare_methods(arm, logs, methods=["ols"], payload_data=payload_log,
                                payload=payload, bootstrap=4, seed=1, executor=pool)
    assert table.effort == "current"
    for i in range(len(logs)):
        model = table.models[("ols", i)]
        assert np.abs(model.drive_gains / GAINS - 1).max() < 0.02
        for j, other in enumerate(logs):  # errors in N m: K i of the model's own gains
            predicted = model.predict(other.q, other.dq, other.ddq, other.t)
            error = other.tau * model.drive_gains - predicted
            assert table.w[i, j, 0] == pytest.approx(np.linalg.norm(error) / other.n_samples,
                                                     rel=1e-10)
    assert table.w[0, 1, 0] < 0.02 * 2 * np.sqrt(3) / np.sqrt(logs[1].n_samples)
    payload_json = json.loads(json.dumps(table.to_json()))
    assert payload_json["effort"] == "current"
    fits = payload_json["drive_gains"]["ols"]
    assert [fit["identification"] for fit in fits] == table.names
    assert_close(fits[1]["value"], table.models[("ols", 1)].drive_gains)
    assert "drive_gains" in payload_json["bootstrap"]["fits"][0]
    assert (table.w_r_std[..., 0] > 0).all()
    assert "drive gains K [N m/A]" in "\n".join(table.lines())
    assert "Motor-current logs" in table.to_markdown()
    with pytest.raises(ValueError, match="`methods`: cad, wls identify no drive gains"):
        compare_methods(arm, logs, methods=["cad", "ols", "wls"], payload_data=payload_log,
                        payload=payload)
    with pytest.raises(ValueError, match="only up to a scale"):
        compare_methods(arm, logs, methods=["ols"])
