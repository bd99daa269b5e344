"""NLS on motor-current logs: the drive gains fitted jointly with the physical parameters and
the friction, the scale fixed by a payload log with a known mass or by a known gain."""

from __future__ import annotations

import numpy as np
import pytest

from dynid.excitation.optimize import random_fourier
from dynid.friction.models import Stribeck
from dynid.identification.drive_gains import KnownPayload
from dynid.identification.nonlinear.nls import identify_nls
from dynid.robot import load_robot
from dynid.robot.inertia import from_com, transform_parameters
from dynid.simulate.twin import SensorModel, simulate_open_loop

N = 7
GAINS = np.linspace(0.6, 1.8, N)
MASS, COM = 3.0, np.array([0.05, 0.0, 0.04])
STRIBECK = Stribeck(fc=np.linspace(0.2, 0.6, N), fs=np.linspace(0.1, 0.3, N),
                    vs=np.linspace(0.02, 0.1, N), ks=np.linspace(0.8, 2.0, N),
                    fv=np.linspace(0.05, 0.3, N))


def _current_logs(friction):
    """An arm log and a payload log (3 kg on the flange) of the Panda twin in currents."""
    arm = load_robot("panda")
    if friction is not None:
        arm = arm.with_friction(friction)
    link = transform_parameters(from_com(MASS, COM, np.diag([2e-3, 2e-3, 1e-3])),
                                arm.tool[:3, :3], arm.tool[:3, 3])
    loaded = arm.with_parameters(arm.parameters + np.vstack([np.zeros((N - 1, 10)), link]))
    logs = [simulate_open_loop(robot, random_fourier(robot, seed=seed), duration=20.0,
                               rate=100.0, seed=seed,
                               sensor=SensorModel(torque_noise_std=0.01, drive_gains=GAINS))
            for seed, robot in ((4, arm), (5, loaded))]
    return arm, logs


@pytest.mark.parametrize("friction", [None, STRIBECK], ids=["sigmoid", "stribeck"])
def test_drive_gains_from_a_payload_log(friction):
    robot, (data, payload_data) = _current_logs(friction)
    assert data.effort == "current"
    name = "sigmoid" if friction is None else "stribeck"
    result = identify_nls(robot, data, friction=name, payload_data=payload_data,
                          payload=KnownPayload(MASS, COM))
    assert result.success, result.status
    gains = result.model.drive_gains
    assert np.abs(gains / GAINS - 1).max() < 0.01
    assert (result.model.drive_gains_std > 0).all()
    # each joint's gain within 5 of its own standard deviations
    assert (np.abs(gains - GAINS) < 5 * result.model.drive_gains_std + 1e-3).all()
    report = result.model.report
    assert report["kind"] == "current"
    np.testing.assert_allclose(report["drive_gains"]["value"], gains)
    assert report["drive_gains"]["known"] == {}
    assert report["payload"]["mass"] == MASS and report["payload"]["identified"]
    assert result.consistency.consistent and result.consistency.within_bounds
    # in N m: the currents times the fitted gains against the model, at the noise level
    assert result.rmse.max() < 0.05


def test_a_known_gain_fixes_the_scale():
    robot, (data, _) = _current_logs(STRIBECK)
    result = identify_nls(robot, data, friction="stribeck", gains={3: GAINS[2]})
    assert result.success, result.status
    gains, spread = result.model.drive_gains, result.model.drive_gains_std
    assert gains[2] == GAINS[2] and spread[2] == 0.0
    # one gain fixes the others through the dynamics: tightly where the joints carry much
    # (joints 1-6), to a few of its own standard deviations at the wrist (joint 7)
    assert np.abs(gains / GAINS - 1)[:6].max() < 0.01
    assert (np.abs(gains - GAINS) < 4 * spread + 1e-12).all(), (gains / GAINS - 1, spread)
    assert result.model.report["drive_gains"]["known"] == {robot.joint_names[2]: GAINS[2]}


def test_currents_without_a_scale_are_refused_by_name():
    robot, (data, payload_data) = _current_logs(None)
    with pytest.raises(ValueError, match=r"only up to a scale.*payload log with its known mass"):
        identify_nls(robot, data, friction="sigmoid")
    with pytest.raises(ValueError, match="`payload_data` and `payload` come together"):
        identify_nls(robot, data, payload_data=payload_data)
    torques = simulate_open_loop(robot, random_fourier(robot, seed=4), duration=2.0,
                                 rate=100.0, seed=4)
    with pytest.raises(ValueError, match="are for motor-current logs"):
        identify_nls(robot, torques, gains={1: 1.0})
    with pytest.raises(ValueError, match="one kind in all logs"):
        identify_nls(robot, [torques, data], gains={1: 1.0})


def test_the_robot_files_gain_range_bounds_the_nls_gains():
    """A stated range that excludes joint 1's true gain holds it at the range's edge (h = 1/K
    is bounded as in the consistent methods); the other joints stay free."""
    robot, (data, payload_data) = _current_logs(None)
    ranges = np.column_stack([0.5 * GAINS, 2.0 * GAINS])
    ranges[0] = [1.1 * GAINS[0], 2.0 * GAINS[0]]
    robot = robot.with_drive_gains(None, ranges)
    result = identify_nls(robot, data, friction="sigmoid", payload_data=payload_data,
                          payload=KnownPayload(MASS, COM))
    gains = result.model.drive_gains
    assert gains[0] == pytest.approx(1.1 * GAINS[0], rel=1e-9)
    assert ((gains >= ranges[:, 0] * (1 - 1e-12)) & (gains <= ranges[:, 1] * (1 + 1e-12))).all()
