"""Motor currents all the way (issue 23): the twin logs currents and payload logs, validate and
the report give errors in A and in N m, codegen writes currents, bootstrap and compare resample
and refit current logs."""

from __future__ import annotations

import json

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
from dynid.identification.linear import robot_model
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
                              ("pay", 3, ["--payload", f"{PAYLOAD_MASS}@"
                                          + ",".join(str(c) for c in PAYLOAD_COM)])):
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
                 "--payload", "1.5"]) == 0
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
    (["--payload", "0"], "--payload: expected a payload mass in (0, 1000]"),
    (["--payload", "kg"], "--payload: expected MASS[@CX,CY,CZ]"),
    (["--payload", "2@0.1,0"], "--payload: expected the centre of mass as three numbers"),
    (["--payload", "2@0.1,0,x"], "--payload: expected the centre of mass as three numbers"),
    (["--payload", "2@0.1,0,nan"], "--payload: expected the centre of mass as three numbers"),
])
def test_bad_gains_and_payloads_name_the_option(written, tmp_path, capsys, arguments, message):
    with pytest.raises(SystemExit):
        main(["simulate", str(written / "arm.yaml"), str(written / "traj1.csv"), "-o",
              str(tmp_path / "x.csv"), *arguments])
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()


def test_a_wrong_count_of_gains_names_the_option(written, tmp_path, capsys):
    assert main(["simulate", str(written / "arm.yaml"), str(written / "traj1.csv"), "-o",
                 str(tmp_path / "x.csv"), "--drive-gains", "1", "2"]) == 2
    assert "`--drive-gains` takes one value for every joint or one per joint (3" in \
        capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()
