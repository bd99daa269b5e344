"""The BIRDy robots (Leboutet et al. 2021; TUM-ICS/BIRDy's TX40.m and RV2SQ.m): published
numbers in, model out, checked against pinocchio built by hand from BIRDy's own table."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from conftest import assert_close

from dynid.dynamics import forward_kinematics, rnea
from dynid.robot import builtin_robots, load_robot
from dynid.robot.inertia import physical_margin, to_com

# BIRDy TX40.m: proximal (modified) DH; theta offset, d, a, alpha per joint
TX40_MDH = {"theta": [0, -np.pi / 2, np.pi / 2, 0, 0, np.pi], "d": [0, 0, 0.035, 0.225, 0, 0],
            "a": [0, 0, 0.225, 0, 0, 0], "alpha": [0, -np.pi / 2, 0, np.pi / 2, -np.pi / 2,
                                                   np.pi / 2], "base_z": 0.32}
TX40_MASS = [8.61, 4.85, 4.07, 3.62, 1.02, 0.2]
TX40_FIRST_MOMENT = [[0, 0, -0.05 * 8.61], [3.92e-1, -7.2e-3, 1.62e-1],
                     [3.26e-2, 2.44e-2, 2.65e-1], [1.45e-2, -7.24e-3, -5.86e-1],
                     [0, -3.06e-3, -1.02e-3], [0, 0, 8.4e-3]]
# InertiaDH (about the DH frame origin): xx, xy, xz, yy, yz, zz
TX40_INERTIA_DH = [[0.424, 0, 0, 0.424, 0, 0.352],
                   [1.63e-2, 7.85e-4, -1.57e-2, 8.81e-2, 3.24e-4, 8.28e-2],
                   [2.23e-2, -1.95e-4, -1.16e-3, 2.24e-2, -2.22e-3, 4.41e-3],
                   [1.09e-1, 2.9e-5, 1.35e-3, 1.08e-1, -1.17e-3, 4.07e-3],
                   [1.01e-3, 0, 0, 1.00e-3, -3.06e-6, 1.01e-3],
                   [3.53e-3, 0, 0, 3.53e-3, 0, 3.53e-4]]
TX40_IA = [0.362, 0.507, 0.0829, 0.0341, 0.0361, 0.0114]

# BIRDy RV2SQ.m
RV2SQ_MDH = {"theta": [0, -np.pi / 2, np.pi / 2, 0, 0, 0], "d": [0.295, 0, 0, 0.27, 0, 0.07],
             "a": [0, 0, 0.23, -0.05, 0, 0], "alpha": [0, -np.pi / 2, 0, np.pi / 2, -np.pi / 2,
                                                       np.pi / 2], "base_z": 0.0}
RV2SQ_MASS = [4, 5.3, 4.1, 2.8, 0.8, 0.7]
RV2SQ_COM = [[0, 0, -0.05], [0.06, -0.0076, 0], [0, -0.045, 0], [0.01, 0, -0.13],
             [-0.001, -0.001, 0.001], [0.001, 0, 0.0005]]
RV2SQ_INERTIA_COM = [[0.0424, 0, 0, 0.0424, 0, 0.0152],
                     [0.45, 2.03e-03, -2.03e-04, 5e-01, -5.56e-03, 0.85],
                     [0.177, -0.017, 0.001, 0.105, 0.006, 0.239],
                     [0.0492, -0.0013, 0.0042, 0.0424, 0.0003, 0.0457],
                     [0.0676, 0.0001, 0, 0.0274, 0, 0.0718],
                     [0.0076, 0, 0, 0.0074, 0, 0.0018]]
RV2SQ_IA = [1e-02, 5e-01, 0.3253, 0.0416, 0.0939, 0.0317]


def _matrix(six) -> np.ndarray:
    xx, xy, xz, yy, yz, zz = six
    return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]], dtype=float)


def _birdy_pinocchio(mdh: dict, masses, coms, inertias_com, armature) -> pin.Model:
    """Pinocchio from BIRDy's table: joint i placed by Rx(alpha) Tx(a) Rz(theta) Tz(d) (base
    lifted by base_z), revolute about its z; each link (m, c, I about the CoM)."""
    model = pin.Model()
    model.gravity.linear = np.array([0.0, 0.0, -9.81])
    parent = 0
    for i in range(6):
        ca, sa = np.cos(mdh["alpha"][i]), np.sin(mdh["alpha"][i])
        ct, st = np.cos(mdh["theta"][i]), np.sin(mdh["theta"][i])
        rx = np.array([[1, 0, 0], [0, ca, -sa], [0, sa, ca]])
        rz = np.array([[ct, -st, 0], [st, ct, 0], [0, 0, 1]])
        rotation = rx @ rz
        translation = np.array([mdh["a"][i], 0, 0]) + rx @ np.array([0, 0, mdh["d"][i]])
        if i == 0:
            translation = translation + np.array([0, 0, mdh["base_z"]])
        joint = model.addJoint(parent, pin.JointModelRZ(), pin.SE3(rotation, translation),
                               f"j{i + 1}")
        model.appendBodyToJoint(joint, pin.Inertia(float(masses[i]), np.asarray(coms[i], float),
                                                   _matrix(inertias_com[i])), pin.SE3.Identity())
        parent = joint
    model.armature = np.asarray(armature, dtype=float)
    return model


def _tx40_com_form():
    """BIRDy's inertiaTensorDH2COM: c = first moment / m, I_com = I_DH - m (c.c E - c c^T)."""
    coms, inertias = [], []
    for m, h, six in zip(TX40_MASS, TX40_FIRST_MOMENT, TX40_INERTIA_DH, strict=True):
        c = np.asarray(h, float) / m
        i_com = _matrix(six) - m * (c @ c * np.eye(3) - np.outer(c, c))
        coms.append(c)
        inertias.append(i_com[[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]])
    return coms, inertias


def test_birdy_robots_are_built_in():
    assert {"tx40", "rv2sq"} <= set(builtin_robots())
    for name in ("tx40", "rv2sq"):
        robot = load_robot(name)
        assert robot.convention == "mdh"
        assert "BIRDy" in robot.source.url
        assert (physical_margin(robot.parameters) >= 0).all(), name


def test_tx40_is_birdy_tx40m():
    """BIRDy TX40.m: masses, first moments, InertiaDH about the frame origins, Ia, Fv, Fc."""
    robot = load_robot("tx40")
    assert_close(robot.parameters[:, 0], TX40_MASS)
    assert_close(robot.parameters[:, 1:4], TX40_FIRST_MOMENT)
    assert_close(robot.parameters[:, 4:], TX40_INERTIA_DH)
    assert_close(robot.rotor_inertia, TX40_IA)
    assert_close(robot.friction.fv, [7.9379, 5.6948, 1.9804, 1.1141, 1.60, 0.6894])
    assert_close(robot.friction.fc, [6.9822, 7.8301, 6.1939, 2.4063, 3.4092, 1.8313])
    assert robot.total_mass == pytest.approx(22.37)
    assert_close(np.rad2deg(robot.limits.upper), [180, 125, 138, 270, 133.5, 270])
    assert_close(np.rad2deg(robot.limits.lower), [-180, -125, -138, -270, -120, -270])
    assert_close(np.rad2deg(robot.limits.velocity), [287, 287, 430, 410, 320, 700])


def test_rv2sq_is_birdy_rv2sqm_by_steiner():
    """BIRDy RV2SQ.m gives the inertia about the CoM: back from the link-frame 10-vector."""
    robot = load_robot("rv2sq")
    masses, coms, inertias = to_com(robot.parameters)
    assert_close(masses, RV2SQ_MASS)
    assert_close(coms, RV2SQ_COM)
    assert_close(inertias, np.array([_matrix(six) for six in RV2SQ_INERTIA_COM]))
    # Steiner, spelled out: the origin inertia of link 2
    m, c = RV2SQ_MASS[1], np.asarray(RV2SQ_COM[1])
    origin = _matrix(RV2SQ_INERTIA_COM[1]) + m * (c @ c * np.eye(3) - np.outer(c, c))
    assert_close(robot.parameters[1, 4:], origin[[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]])
    assert_close(robot.rotor_inertia, RV2SQ_IA)
    assert robot.total_mass == pytest.approx(17.7)


def test_tx40_at_zero_stands_upright():
    """The TX40 at q = 0 (BIRDy's offsets): shoulder 0.32 m, arm and forearm 0.225 m straight
    up, the 0.035 m elbow offset sideways: the wrist centre at (0, 0.035, 0.77) m."""
    poses = forward_kinematics(load_robot("tx40"), np.zeros(6))
    assert_close(poses[3, :3, 3], [0.0, 0.035, 0.77], atol=1e-12)
    assert_close(poses[5, :3, 3], poses[3, :3, 3], atol=1e-12)  # spherical wrist


@pytest.mark.parametrize("name", ["tx40", "rv2sq"])
def test_birdy_robots_match_pinocchio_built_from_birdys_table(name):
    robot = load_robot(name)
    if name == "tx40":
        coms, inertias = _tx40_com_form()
        model = _birdy_pinocchio(TX40_MDH, TX40_MASS, coms, inertias, TX40_IA)
    else:
        model = _birdy_pinocchio(RV2SQ_MDH, RV2SQ_MASS, RV2SQ_COM, RV2SQ_INERTIA_COM, RV2SQ_IA)
    data = model.createData()
    rng = np.random.default_rng(4)
    q, dq, ddq = (rng.uniform(-2, 2, size=(20, 6)) for _ in range(3))
    theirs = np.array([pin.rnea(model, data, *state) for state in zip(q, dq, ddq, strict=True)])
    assert_close(rnea(robot, q, dq, ddq), theirs, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", ["tx40", "rv2sq"])
def test_birdy_pd_loop_tracks_its_reference(name):
    """BIRDy's PD gains (dynid.benchmark.protocol) on the truth: a 2 s excitation tracked to
    within 0.02 rad, the log at BIRDy's sampling rate."""
    from dynid.benchmark.protocol import CONTROL, experiment

    run = experiment(load_robot(name), duration=2.0)
    reference = run.trajectory.sample(run.log.t)[0]
    assert np.abs(run.log.q - reference).max() < 0.02
    assert np.ptp(reference, axis=0).min() > 0.1  # it did move
    step = np.diff(run.log.t)
    assert_close(step, np.full(step.size, 1 / CONTROL[name].sample_rate), rtol=1e-9)
