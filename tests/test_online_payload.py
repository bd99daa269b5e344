"""Online payload estimation on the Panda twin: a 2 kg payload picked up mid-run is found
within 0.5 s to 5 % of its mass; blocks give the one-sample estimate; bad input refused.
(A shorter run than ``dynid.bench.online``'s, the same targets.)"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close

from dynid.bench.online import (
    PAYLOAD_COM,
    PAYLOAD_MASS,
    online_bench,
    payload_run,
    settle_time,
)
from dynid.identification.linear.idim import robot_model
from dynid.identification.recursive.payload import OnlinePayload
from dynid.robot import load_robot
from dynid.robot.inertia import from_com, transform_parameters
from dynid.simulate.twin import PAYLOAD_RADIUS


@pytest.fixture(scope="module")
def run():
    data, change = payload_run(before=1.0, after=1.5, seed=1)
    return load_robot("panda"), data, change


def test_a_payload_picked_up_is_tracked(run):
    robot, data, change = run
    estimator = OnlinePayload(robot, noise_std=0.05)
    masses, _ = estimator.update(data.q, data.dq, data.ddq, data.tau, every=1)
    mass = masses[:, 0]
    before = data.t < change
    assert np.abs(mass[before][200:]).max() < 0.05 * PAYLOAD_MASS  # no payload yet
    assert settle_time(data.t, mass, change, PAYLOAD_MASS) < 0.5
    steady = data.t >= change + 0.5
    assert np.mean(np.abs(mass[steady] - PAYLOAD_MASS)) < 0.05 * PAYLOAD_MASS
    # its CoM and inertia: the sphere of with_payload, 5 cm beyond the flange
    assert_close(estimator.com_tool, PAYLOAD_COM, rtol=0, atol=0.01)
    truth = transform_parameters(
        from_com(PAYLOAD_MASS, np.array(PAYLOAD_COM),
                 np.array([1, 0, 0, 1, 0, 1]) * 0.4 * PAYLOAD_MASS * PAYLOAD_RADIUS**2),
        robot.tool[:3, :3], robot.tool[:3, 3])
    first = slice(0, 4)  # mass and first moments: well determined over a 0.1 s memory
    assert_close(estimator.parameters[first], truth[first], rtol=0, atol=0.01)
    # the inertia about the link origin (0.05-0.3 kg m^2 here): weakly, to about 0.02
    assert_close(estimator.parameters[4:], truth[4:], rtol=0, atol=0.02)

def test_blocks_and_a_model_arm_give_the_one_sample_estimate(run):
    robot, data, _ = run
    rows = slice(900, 1200)
    q, dq, ddq, tau = (getattr(data, name)[rows] for name in ("q", "dq", "ddq", "tau"))
    one, block = OnlinePayload(robot), OnlinePayload(robot_model(robot))
    for k in range(300):
        one.update(q[k], dq[k], ddq[k], tau[k])
    for start in range(0, 300, 64):
        block.update(q[start:start + 64], dq[start:start + 64], ddq[start:start + 64],
                     tau[start:start + 64])
    assert one.n_samples == block.n_samples == 300
    assert_close(block.parameters, one.parameters, rtol=1e-8, atol=1e-10)


def test_online_payload_refuses_bad_input(run):
    robot, data, _ = run
    with pytest.raises(TypeError, match="`arm`"):
        OnlinePayload("panda")
    with pytest.raises(ValueError, match="`forgetting`"):
        OnlinePayload(robot, forgetting=0.0)
    with pytest.raises(ValueError, match="`noise_std`"):
        OnlinePayload(robot, noise_std=-1.0)
    estimator = OnlinePayload(robot)
    dq = data.dq[0].copy()
    dq[3] = np.nan
    with pytest.raises(ValueError, match="`dq`"):
        estimator.update(data.q[0], dq, data.ddq[0], data.tau[0])
    with pytest.raises(ValueError, match="`q`"):
        estimator.update(data.q[0, :6], data.dq[0], data.ddq[0], data.tau[0])
    assert estimator.n_samples == 0 and np.isnan(estimator.mass)


def test_the_bench_meets_the_targets():
    """Issue 24's targets on the bench's own run: settled within 0.5 s, mass within 5 %. Its
    speed (at least 1 kHz fed one sample at a time) is the bench's to report (`dynid bench
    --suite estimators`), not asserted here: a suite started beside other work would fail on
    the machine's load, not on dynid."""
    figures = online_bench()
    assert figures["online_payload_settle_seconds"] <= 0.5
    assert figures["online_payload_mass_error"] <= 0.05
    assert np.isfinite(figures["online_samples_per_second"])
    assert figures["online_payload_block_equals_one_by_one"]


def test_settle_time_reads_the_last_exit_from_the_band():
    t = np.arange(10) * 0.1
    mass = np.array([0.0, 0.0, 0.0, 1.5, 2.2, 1.99, 2.0, 2.2, 2.01, 2.0])
    assert_close(settle_time(t, mass, 0.2, 2.0), 0.6)  # last outside at 0.7 s
    assert settle_time(t, np.full(10, 2.0), 0.2, 2.0) == 0.0
    assert settle_time(t, np.r_[np.full(9, 2.0), 3.0], 0.2, 2.0) == np.inf
