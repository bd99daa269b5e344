"""Contacts in the twin: tau_ext = J^T F against pinocchio's frame Jacobian, the open and the
closed loop with a contact, the closed loop unchanged without one, the --contact option."""

from __future__ import annotations

import json
import math

import numpy as np
import pinocchio as pin
import pytest
from conftest import assert_close, random_table_robot

from dynid.cli import main
from dynid.data import read_dataset
from dynid.dynamics import rnea
from dynid.dynamics._chain import chain_arrays
from dynid.dynamics._kernels import _poses
from dynid.excitation.optimize import random_fourier
from dynid.excitation.trajectory import save_trajectory
from dynid.friction.models import NoFriction, ViscousCoulomb
from dynid.robot import load_robot, to_pinocchio
from dynid.simulate import Contact, external_torques, parse_contact
from dynid.simulate.contacts import contact_table, external_torques_given_poses
from dynid.simulate.twin import simulate_closed_loop, simulate_open_loop
from dynid.workflow.demo import DAMPING, STIFFNESS


def _pinocchio_external(robot, q, link: int, point, wrench) -> np.ndarray:
    """J^T (force, moment) with pinocchio's LOCAL_WORLD_ALIGNED Jacobian of a frame at
    ``point`` on link ``link`` (0-based): an independent kinematics."""
    model = to_pinocchio(robot)
    parent = model.frames[model.getFrameId(robot.link_names[link])]
    placement = parent.placement * pin.SE3(np.eye(3), np.asarray(point, dtype=float))
    frame = model.addFrame(pin.Frame("contact", parent.parentJoint, placement,
                                     pin.FrameType.OP_FRAME))
    data = model.createData()
    out = np.empty((q.shape[0], robot.n_joints))
    for k in range(q.shape[0]):
        jacobian = pin.computeFrameJacobian(model, data, q[k], frame, pin.LOCAL_WORLD_ALIGNED)
        out[k] = jacobian.T @ wrench
    return out


def _compiled_external(robot, q, t, contacts) -> np.ndarray:
    """The closed loop's leaf, called on each sample's poses as ``run_block`` does."""
    chain = chain_arrays(robot)
    table = contact_table(robot, contacts)
    n = robot.n_joints
    rot, pos = np.empty((n, 3, 3)), np.empty((n, 3))
    frame_rot, frame_pos, out = np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((q.shape[0], n))
    rows = np.ascontiguousarray(q)
    for k in range(q.shape[0]):
        _poses(chain.revolute, chain.k0, chain.kc, chain.ks, chain.p0, chain.pc, chain.ps,
               chain.pl, rows, k, rot, pos)
        external_torques_given_poses(table, t[k], chain.zeta, chain.eta, rot, pos, frame_rot,
                                     frame_pos, out[k])
    return out


def _robots(rng):
    yield load_robot("panda")
    yield load_robot("jaco2")
    yield random_table_robot(rng, "mdh", 5, prismatic=0.4)
    yield random_table_robot(rng, "dh", 6, prismatic=0.4)


def test_external_torques_match_pinocchio_frame_jacobian(rng):
    for robot in _robots(rng):
        n = robot.n_joints
        q = rng.uniform(-np.pi, np.pi, (6, n))
        t = np.zeros(6)
        for link in (n - 1, n // 2, 0):
            point = rng.normal(scale=0.2, size=3)
            force, moment = rng.normal(size=3) * 10, rng.normal(size=3)
            contact = Contact(0.0, force=force, moment=moment, link=link + 1, point=point)
            expected = _pinocchio_external(robot, q, link, point, np.r_[force, moment])
            assert_close(external_torques(robot, q, t, [contact]), expected, atol=1e-12)
            assert_close(_compiled_external(robot, q, t, [contact]), expected, atol=1e-12)


def test_default_point_is_the_tool_and_contacts_add_up(rng):
    robot = load_robot("panda")
    q = rng.uniform(-2, 2, (4, 7))
    t = np.array([0.0, 0.5, 1.0, 2.0])
    force = np.array([0.0, 3.0, -10.0])
    expected = _pinocchio_external(robot, q, 6, robot.tool[:3, 3], np.r_[force, np.zeros(3)])
    pulse, push = Contact.pulse(0.5, force), Contact(1.0, force=-force, link=3)
    got = external_torques(robot, q, t, [pulse, push])
    assert_close(got[0], np.zeros(7))  # before both
    assert_close(got[1], expected[1])  # the pulse alone: 50 ms from 0.5 s
    pushed = _pinocchio_external(robot, q, 2, np.zeros(3), np.r_[-force, np.zeros(3)])
    assert_close(got[2:], pushed[2:])  # the pulse is over, the push lasts
    assert_close(_compiled_external(robot, q, t, [pulse, push]), got, atol=1e-12)


def test_open_loop_torque_difference_is_minus_jt_f():
    robot = load_robot("panda")
    trajectory = random_fourier(robot, seed=5)
    contacts = [Contact.pulse(0.2, (10.0, 0, 0)), Contact(0.5, 0.3, force=(0, 0, -20.0),
                                                          moment=(0.5, 0, 0), link=4)]
    plain = simulate_open_loop(robot, trajectory, duration=1.0)
    pushed = simulate_open_loop(robot, trajectory, duration=1.0, contacts=contacts)
    expected = external_torques(robot, plain.q, plain.t, contacts)
    assert np.abs(expected).max() > 1.0
    assert_close(pushed.tau - plain.tau, -expected, rtol=0, atol=1e-12)
    truth = pushed.metadata["contacts"]
    assert [c["link"] for c in truth] == [7, 4]
    assert truth[0]["stop"] == pytest.approx(0.25) and truth[0]["point"] == [0, 0, 0.107]


def test_closed_loop_without_contacts_is_unchanged_bit_for_bit():
    robot = load_robot("panda")
    trajectory = random_fourier(robot, seed=6)
    before = simulate_closed_loop(robot, trajectory, duration=0.5)
    for none in (None, []):
        again = simulate_closed_loop(robot, trajectory, duration=0.5, contacts=none)
        for name in ("q", "dq", "ddq", "tau"):
            assert np.array_equal(getattr(before, name), getattr(again, name)), name
        assert "contacts" not in again.metadata
    late = simulate_closed_loop(robot, trajectory, duration=0.5,
                                contacts=[Contact.pulse(5.0, (10, 0, 0))])  # after the log
    assert np.array_equal(before.q, late.q)


def test_closed_loop_torques_and_contacts_are_the_dynamics():
    """Each logged sample satisfies the truth's dynamics with the contact's torque:
    rnea(q, dq, ddq) + tau_f = tau + J^T F (the logged ddq is the first RK4 stage's)."""
    friction = ViscousCoulomb(np.full(7, 0.2), np.full(7, 0.3), np.zeros(7))
    robot = load_robot("panda").with_friction(friction)
    contacts = [Contact.pulse(0.3, (0.0, 10.0, 0.0)),
                Contact(0.6, force=(-5.0, 0, 8.0), moment=(0, 0.5, 0), link=3,
                        point=(0.05, 0, 0))]
    data = simulate_closed_loop(robot, random_fourier(robot, seed=3), duration=1.0,
                                natural_frequency=10.0, contacts=contacts)
    external = external_torques(robot, data.q, data.t, contacts)
    assert np.abs(external).max() > 1.0
    assert_close(rnea(robot, data.q, data.dq, data.ddq) + friction.torque(data.dq),
                 data.tau + external, rtol=1e-9, atol=1e-9)


def test_closed_loop_push_moves_the_arm_to_the_static_equilibrium():
    """A joint impedance holding a pose against a constant push settles where the stiffness
    balances the contact: K (q - q_d) = J(q)^T F (no friction, a perfect model: the
    feedforward cancels gravity exactly)."""
    robot = load_robot("panda").with_friction(NoFriction(7))
    q_d = np.array([0.0, -0.4, 0.0, -2.0, 0.0, 1.8, 0.8])
    trajectory = _constant(q_d)
    stiffness = np.array(STIFFNESS)
    force = np.array([0.0, 15.0, -10.0])
    data = simulate_closed_loop(robot, trajectory, duration=3.0, stiffness=stiffness,
                                damping=DAMPING, controller=robot,
                                contacts=[Contact(0.5, force=force)])
    q_end = data.q[-1]
    assert np.abs(data.dq[-1]).max() < 1e-6  # settled
    balance = external_torques(robot, q_end[None], np.array([1.0]), [Contact(0, force=force)])
    assert np.abs(q_end - q_d).max() > 1e-3
    assert_close(stiffness * (q_end - q_d), balance[0], rtol=1e-5, atol=1e-7)
    # before the push the arm holds the pose
    assert np.abs(data.q[data.t < 0.5] - q_d).max() < 1e-9


def _constant(q):
    """A trajectory that stays at ``q``."""

    class Still:
        n_joints = q.size

        def sample(self, t):
            zeros = np.zeros((t.size, q.size))
            return np.tile(q, (t.size, 1)), zeros, zeros

    return Still()


@pytest.mark.parametrize(("text", "start", "duration", "force", "link", "point"), [
    ("1.0+50ms:0,0,-10", 1.0, 0.05, (0, 0, -10), None, None),
    ("3:5,0,0:4", 3.0, math.inf, (5, 0, 0), 4, None),
    ("2500ms+1.5s:0,1,2,0.1,0.2,0.3:link3@0,0,0.1", 2.5, 1.5, (0, 1, 2), "link3",
     (0, 0, 0.1)),
])
def test_contact_specifications(text, start, duration, force, link, point):
    contact = parse_contact(text)
    assert (contact.start, contact.duration, contact.link) == (start, duration, link)
    assert_close(contact.force, np.array(force, dtype=float))
    assert (contact.point is None) == (point is None)
    if text.endswith("0.1"):
        assert_close(contact.moment, np.array([0.1, 0.2, 0.3]))


@pytest.mark.parametrize(("kwargs", "match", "error"), [
    ({"start": 0.0, "duration": 0.0, "force": (1, 0, 0)}, "`duration`", ValueError),
    ({"start": np.nan, "force": (1, 0, 0)}, "`start`", ValueError),
    ({"start": 0.0, "force": (1, 0)}, "`force`", ValueError),
    ({"start": 0.0}, "nonzero `force` or `moment`", ValueError),
    ({"start": 0.0, "force": (1, 0, 0), "point": (0, np.inf, 0)}, "`point`", ValueError),
    ({"start": 0.0, "force": (1, 0, 0), "link": 0}, "`link`", TypeError),
    ({"start": 0.0, "force": (1, 0, 0), "link": 1.5}, "`link`", TypeError),
])
def test_bad_contacts_name_the_argument(kwargs, match, error):
    with pytest.raises(error, match=match):
        Contact(**kwargs)


def test_contacts_are_checked_against_the_robot():
    robot = load_robot("panda")
    trajectory = random_fourier(robot, seed=1)
    with pytest.raises(ValueError, match=r"`link` must be 1\.\.7"):
        simulate_open_loop(robot, trajectory, duration=0.1, contacts=[Contact(0, force=(1, 0, 0),
                                                                            link=9)])
    with pytest.raises(ValueError, match="`link`: 'hand' is no link"):
        simulate_closed_loop(robot, trajectory, duration=0.1,
                             contacts=[Contact(0, force=(1, 0, 0), link="hand")])
    with pytest.raises(TypeError, match="`contacts` must be a sequence"):
        simulate_open_loop(robot, trajectory, duration=0.1, contacts="1:0,0,1")
    for bad in ("1.0:0,0", "x:1,2,3", "1.0+:1,2,3", "1:1,2,3:0", "1:1,2,3,4"):
        with pytest.raises(ValueError):
            parse_contact(bad)


def test_simulate_command_injects_contacts(tmp_path, capsys):
    robot = load_robot("panda")
    trajectory_file = tmp_path / "traj.yaml"  # the parameters written beside traj.csv
    save_trajectory(tmp_path / "traj.csv", random_fourier(robot, seed=2), duration=2.0,
                    rate=100.0, allow_moving_ends=True)
    log, pushed = tmp_path / "log.npz", tmp_path / "pushed.npz"
    base = ["simulate", "panda", str(trajectory_file), "--duration", "1.0"]
    assert main([*base, "-o", str(log)]) == 0
    capsys.readouterr()
    assert main([*base, "-o", str(pushed), "--contact", "0.2+50ms:10,0,0",
                 "--contact", "0.5:0,0,-5:link4", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert [c["link_name"] for c in summary["contacts"]] == ["link7", "link4"]
    assert summary["contacts"][1]["stop"] == pytest.approx(1.001)  # the log ends at 1 s
    plain, contact = read_dataset(log), read_dataset(pushed)
    contacts = [parse_contact("0.2+50ms:10,0,0"), parse_contact("0.5:0,0,-5:link4")]
    assert_close(contact.tau - plain.tau, -external_torques(robot, plain.q, plain.t, contacts),
                 rtol=0, atol=1e-9)
    status = main([*base, "-o", str(tmp_path / "bad.npz"), "--contact", "1.0:10N"])
    assert status == 2
    error = capsys.readouterr().err
    assert "`--contact`" in error and len(error.strip().splitlines()) == 1
    assert main([*base, "-o", str(tmp_path / "bad.npz"), "--contact", "1.0:1,0,0:12"]) == 2
    assert "`--contact`: `link` must be 1..7" in capsys.readouterr().err
