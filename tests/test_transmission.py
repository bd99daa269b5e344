"""Transmissions (``dynid.robot.Transmission``): the convention theta = G q, tau = G^T tau_m,
the motors' rotor inertia and friction through a coupling, motor-side logs, robot files and
URDF ``<transmission>`` elements, and a coupled-wrist twin identified from a motor-side log.

The twin's truth is built here, independently of the library's coupled terms: motor-side
quantities (``theta = G q`` with the full matrix G, motor rotor inertias ``I_m`` and motor
friction in motor units) and ``tau = rnea_rigid + G^T (I_m theta'' + f_m(theta'))``."""

from __future__ import annotations

import numpy as np
import pytest

from dynid.data import Dataset, to_joint_side
from dynid.dynamics import (
    forward_dynamics,
    friction_regressor,
    mass_matrix,
    rnea,
    rotor_regressor,
)
from dynid.friction.models import ViscousCoulomb
from dynid.identification import identify
from dynid.robot import Transmission, load_robot, robot_from_dict, robot_to_dict

RATE = 200.0
# the TX40's reductions as signed motor turns per joint turn (one motor reversed), and its
# wrist: joint 5 also turns motor 6, theta_6 = r_6 (q_6 + C q_5)
REDUCTIONS = np.array([32.0, 32.0, 45.0, -48.0, 45.0, 32.0])
WRIST = 0.5
ROTOR_MOTOR = np.array([3.0e-4, 3.0e-4, 1.5e-4, 4.0e-5, 4.0e-5, 4.0e-5])  # kg m^2, motor side
VISCOUS_MOTOR = np.array([4e-3, 4e-3, 2e-3, 1e-3, 1e-3, 1.2e-3])  # N m s/rad, motor side
COULOMB_MOTOR = np.array([0.10, 0.10, 0.06, 0.04, 0.04, 0.05])  # N m, motor side
NOISE_MOTOR = 2e-3  # N m on each motor torque


def _coupled(n: int = 6) -> Transmission:
    coupling = np.eye(n)
    coupling[5, 4] = WRIST
    return Transmission(REDUCTIONS[:n], coupling)


def _trajectory(seed: int, seconds: float = 20.0, n: int = 6, rate: float = RATE):
    """Sum-of-sines joint motion and its exact derivatives, ``(N, n)`` each."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, seconds, 1.0 / rate)
    omega = 2 * np.pi * 0.1 * np.arange(1, 6)
    a = rng.normal(0.0, 0.35, (5, n)) / np.arange(1, 6)[:, None]
    phase = rng.uniform(0, 2 * np.pi, (5, n))
    arg = omega[None, :, None] * t[:, None, None] + phase[None]
    q = np.einsum("tkj,kj->tj", np.sin(arg), a)
    dq = np.einsum("tkj,kj,k->tj", np.cos(arg), a, omega)
    ddq = -np.einsum("tkj,kj,k->tj", np.sin(arg), a, omega**2)
    return t, q, dq, ddq


def _truth():
    """The TX40 with other link parameters than its file's (what the estimator is told)."""
    robot = load_robot("tx40")
    rng = np.random.default_rng(7)
    params = robot.parameters.copy()
    params[:, 0] *= rng.uniform(0.8, 1.2, robot.n_joints)  # masses
    params[:, 1:4] *= rng.uniform(0.8, 1.2, (robot.n_joints, 3))
    params[:, 4:] *= rng.uniform(0.9, 1.1, (robot.n_joints, 6))
    return robot.with_parameters(params).with_friction(ViscousCoulomb.zeros(6)) \
        .with_rotor_inertia(None)


def _motor_log(truth, seed: int, rate: float = RATE) -> tuple[Dataset, np.ndarray]:
    """A motor-side log of ``truth`` with the coupled wrist (built from the motor side, the
    full G), and its joint-side noise ``G^T e_m``."""
    g = _coupled().matrix
    t, q, dq, ddq = _trajectory(seed, rate=rate)
    theta, dtheta, ddtheta = q @ g.T, dq @ g.T, ddq @ g.T
    motor = ROTOR_MOTOR * ddtheta + VISCOUS_MOTOR * dtheta + COULOMB_MOTOR * np.sign(dtheta)
    tau = rnea(truth, q, dq, ddq) + motor @ g  # G^T tau_m, row by row
    noise = np.random.default_rng(seed + 100).normal(0.0, NOISE_MOTOR, q.shape)
    tau_m = np.linalg.solve(g.T, tau.T).T + noise
    return Dataset(t=t, q=theta, dq=dtheta, ddq=ddtheta, tau=tau_m), noise @ g


def _rmse(model, log: Dataset) -> np.ndarray:
    error = log.tau - model.predict(log.q, log.dq, log.ddq)
    return np.sqrt(np.mean(error**2, axis=0))


# --- the convention ------------------------------------------------------------------------

def test_transmission_maps_positions_by_g_and_torques_by_its_transpose():
    transmission = _coupled()
    g = transmission.matrix
    assert g[5, 4] == REDUCTIONS[5] * WRIST and g[5, 5] == REDUCTIONS[5]
    q = np.random.default_rng(0).normal(size=(7, 6))
    theta = transmission.motor_positions(q)
    np.testing.assert_allclose(theta, q @ g.T, rtol=1e-14)
    np.testing.assert_allclose(transmission.joint_positions(theta), q, rtol=1e-12, atol=1e-14)
    tau_m = np.random.default_rng(1).normal(size=(7, 6))
    tau = transmission.joint_torques(tau_m)
    np.testing.assert_allclose(tau, tau_m @ g, rtol=1e-14)
    # power balance: tau . dq == tau_m . dtheta
    np.testing.assert_allclose(np.sum(tau * q, axis=1), np.sum(tau_m * theta, axis=1),
                               rtol=1e-12)


def test_coupled_rotor_and_friction_columns_are_the_motor_side_terms():
    """``C^T diag(I_a) C ddq`` with ``I_a = r^2 I_m`` is ``G^T diag(I_m) G ddq``; the friction
    columns with reflected coefficients (``r^2 fv_m``, ``|r| fc_m``, ``r fo_m``) give
    ``G^T f_m(G dq)``, whatever the coupled motor's sense of rotation."""
    rng = np.random.default_rng(2)
    dq, ddq = rng.normal(size=(5, 6)), rng.normal(size=(5, 6))
    offset_motor = rng.normal(0.0, 0.01, 6)
    for sign in (1.0, -1.0):
        reductions = REDUCTIONS * np.array([1, 1, 1, 1, 1, sign])
        transmission = Transmission(reductions, _coupled().coupling)
        g = transmission.matrix
        reflected = reductions**2 * ROTOR_MOTOR
        np.testing.assert_allclose(rotor_regressor(ddq, transmission) @ reflected,
                                   (ROTOR_MOTOR * (ddq @ g.T)) @ g, rtol=1e-12)
        friction = ViscousCoulomb(reductions**2 * VISCOUS_MOTOR,
                                  np.abs(reductions) * COULOMB_MOTOR, reductions * offset_motor)
        expected = (VISCOUS_MOTOR * (dq @ g.T) + COULOMB_MOTOR * np.sign(dq @ g.T)
                    + offset_motor) @ g
        np.testing.assert_allclose(friction_regressor(friction, dq, transmission)
                                   @ friction.coefficients, expected, rtol=1e-12)
    # the coupled wrist's extra entries: motor 6's rotor acts on joint 5's row
    assert np.count_nonzero(rotor_regressor(ddq, _coupled())[0, 4]) == 2


def test_rigid_dynamics_carry_the_coupled_rotors():
    robot = load_robot("tx40").with_rotor_inertia(REDUCTIONS**2 * ROTOR_MOTOR) \
        .with_transmission(_coupled())
    g = _coupled().matrix
    rng = np.random.default_rng(3)
    q, dq, ddq = (rng.normal(size=(4, 6)) for _ in range(3))
    rigid = robot.with_rotor_inertia(None)
    np.testing.assert_allclose(rnea(robot, q, dq, ddq),
                               rnea(rigid, q, dq, ddq) + (ROTOR_MOTOR * (ddq @ g.T)) @ g,
                               rtol=1e-12)
    rotors = g.T @ np.diag(ROTOR_MOTOR) @ g
    np.testing.assert_allclose(mass_matrix(robot, q), mass_matrix(rigid, q) + rotors,
                               rtol=1e-12)
    tau = rnea(robot, q, dq, ddq)
    np.testing.assert_allclose(forward_dynamics(robot, q, dq, tau), ddq, rtol=1e-9, atol=1e-9)


def test_uncoupled_transmission_is_todays_model_bit_for_bit():
    robot = load_robot("tx40").with_rotor_inertia(np.full(6, 0.1))
    geared = robot.with_transmission(Transmission.simple(REDUCTIONS))
    rng = np.random.default_rng(4)
    q, dq, ddq = (rng.normal(size=(9, 6)) for _ in range(3))
    assert np.array_equal(rnea(geared, q, dq, ddq), rnea(robot, q, dq, ddq))
    assert np.array_equal(mass_matrix(geared, q), mass_matrix(robot, q))
    assert np.array_equal(rotor_regressor(ddq, geared.transmission), rotor_regressor(ddq))
    friction = ViscousCoulomb(*rng.uniform(0.1, 1.0, (3, 6)))
    assert np.array_equal(friction_regressor(friction, dq, geared.transmission),
                          friction.regressor(dq))


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"reductions": [1.0, 0.0]}, "reduction 0"),
    ({"reductions": [1.0, 2.0], "coupling": [[1.0, 1.0], [1.0, 1.0]]}, "singular"),
    ({"reductions": [1.0, 2.0], "coupling": [[2.0, 0.0], [0.0, 1.0]]}, "unit diagonal"),
    ({"reductions": [1.0, 2.0], "coupling": np.eye(3)}, "shape"),
    ({"reductions": [1.0, np.nan]}, "reductions"),
    ({"reductions": [1.0, 2.0], "motor_names": ("a", "a")}, "distinct"),
])
def test_transmission_refuses_what_is_no_transmission(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Transmission(**kwargs)


def test_from_matrix_needs_each_motor_on_its_own_joint():
    with pytest.raises(ValueError, match="diagonal"):
        Transmission.from_matrix([[0.0, 1.0], [1.0, 0.0]])
    differential = Transmission.from_matrix([[50.0, 50.0], [-50.0, 50.0]])
    np.testing.assert_array_equal(differential.matrix, [[50.0, 50.0], [-50.0, 50.0]])


# --- robot files ---------------------------------------------------------------------------

def test_robot_file_round_trips_the_transmission():
    spec = robot_to_dict(load_robot("tx40"))
    spec["transmission"] = {"reductions": REDUCTIONS.tolist(), "motors": [f"m{k}" for k in
                                                                          range(6)],
                            "couplings": [{"motor": "joint6", "joint": 5, "ratio": WRIST}]}
    robot = robot_from_dict(spec)
    np.testing.assert_array_equal(robot.transmission.matrix, _coupled().matrix)
    again = robot_from_dict(robot_to_dict(robot))
    np.testing.assert_array_equal(again.transmission.matrix, robot.transmission.matrix)
    assert again.transmission.motor_names == tuple(f"m{k}" for k in range(6))
    assert "transmission" not in robot_to_dict(load_robot("tx40"))  # direct drive: unwritten


@pytest.mark.parametrize(("entry", "match"), [
    ({"reductions": [1.0] * 5}, "reductions"),
    ({"reductions": [1.0] * 6, "couplings": [{"motor": 6, "joint": 9, "ratio": 1.0}]},
     "no joint"),
    ({"reductions": [1.0] * 6, "couplings": [{"motor": 6, "joint": 6, "ratio": 1.0}]},
     "own joint"),
    ({"reductions": [1.0] * 6, "couplings": [{"motor": 6, "joint": 5}]}, "ratio"),
    ({"reductions": [1.0] * 6, "gears": 1}, "gears"),
])
def test_robot_file_transmission_errors_name_the_field(entry, match):
    spec = robot_to_dict(load_robot("tx40"))
    spec["transmission"] = entry
    with pytest.raises(ValueError, match=match):
        robot_from_dict(spec)


# --- motor-side logs -----------------------------------------------------------------------

def test_to_joint_side_maps_the_log_and_says_so():
    truth = _truth()
    log, _ = _motor_log(truth, seed=1)
    joint = to_joint_side(log, _coupled())
    _, q, dq, ddq = _trajectory(1)
    np.testing.assert_allclose(joint.q, q, atol=1e-12)
    np.testing.assert_allclose(joint.dq, dq, atol=1e-11)
    np.testing.assert_allclose(joint.ddq, ddq, atol=1e-10)
    assert "motor side to joint side" in joint.metadata["preprocessing"][-1]
    currents = Dataset(t=log.t, q=log.q, dq=log.dq, tau=log.tau, effort="current")
    with pytest.raises(ValueError, match="currents"):
        to_joint_side(currents, _coupled())
    kept = to_joint_side(currents, Transmission.simple(REDUCTIONS))
    np.testing.assert_array_equal(kept.tau, currents.tau)  # currents stay per motor


# --- the coupled-wrist twin ----------------------------------------------------------------

def coupled_wrist_errors() -> dict:
    """Held-out RMSE per joint over the noise floor, identified from a motor-side log of the
    coupled-wrist twin mapped to the joints through its coupling, by a model with the
    coupling's columns (``with``) and by one that takes each motor for its joint's alone
    (``without``: the reductions only)."""
    truth = _truth()
    told = load_robot("tx40")  # the file's link parameters, not the truth's
    fit_log, _ = _motor_log(truth, seed=11)
    check_log, noise = _motor_log(truth, seed=12)
    floor = np.sqrt(np.mean(noise**2, axis=0))
    fit, check = (to_joint_side(log, _coupled()) for log in (fit_log, check_log))
    out = {}
    for name, transmission in (("with", _coupled()),
                               ("without", Transmission.simple(REDUCTIONS))):
        model = identify(told.with_transmission(transmission), fit,
                         friction=ViscousCoulomb.zeros(6), rotor_inertia=True)
        out[name] = _rmse(model, check) / floor
    return out


def test_coupled_wrist_identified_at_the_noise_floor_only_with_its_coupling():
    errors = coupled_wrist_errors()
    assert errors["with"].max() < 1.1, errors["with"]
    # without the coupling's columns the wrist joints (5, 6) are far worse: coupled_wrist_gain
    assert errors["without"][4:].min() > 5.0 * errors["with"][4:].max(), errors


def test_motor_coordinates_diagonalise_the_motors_terms():
    """Mapped with the reductions alone, a coupled wrist's log is in motor coordinates
    ``q~ = C q`` (where its rotors and friction are per coordinate): its joint 6 is not the
    arm's joint 6, ``q~_6 = q_6 + c q_5``."""
    simple = Transmission.simple(REDUCTIONS)
    log = _motor_log(_truth(), seed=13)[0]
    joint, motor = to_joint_side(log, _coupled()), to_joint_side(log, simple)
    np.testing.assert_allclose(motor.q[:, 5], joint.q[:, 5] + WRIST * joint.q[:, 4],
                               atol=1e-12)


# --- URDF <transmission> -------------------------------------------------------------------

def _urdf(tmp_path, transmissions: str):
    parents, axes = ("base", "l0", "l1"), ("0 0 1", "0 1 0")
    links = '<link name="base"/>' + "".join(
        f'<link name="l{k}"><inertial><mass value="1"/><origin xyz="0 0 0.1"/><inertia '
        'ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>'
        f'<joint name="j{k}" type="revolute"><parent link="{parents[k]}"/>'
        f'<child link="l{k}"/><origin xyz="0 0 0.2"/><axis xyz="{axes[k % 2]}"/>'
        '<limit lower="-2" upper="2" effort="50" velocity="2"/></joint>' for k in range(3))
    path = tmp_path / "arm.urdf"
    path.write_text(f'<robot name="arm">{links}{transmissions}</robot>')
    return path


def test_urdf_simple_and_ros2_control_differential_transmissions(tmp_path):
    from dynid.robot import load_urdf

    path = _urdf(tmp_path, (
        '<transmission name="t0"><type>transmission_interface/SimpleTransmission</type>'
        '<joint name="j0"/><actuator name="m0"><mechanicalReduction>-100</mechanicalReduction>'
        "</actuator></transmission>"
        '<ros2_control name="arm" type="system"><transmission name="wrist">'
        "<plugin>transmission_interface/DifferentialTransmission</plugin>"
        '<actuator name="m2" role="actuator2"><mechanical_reduction>-50</mechanical_reduction>'
        "</actuator>"
        '<actuator name="m1" role="actuator1"><mechanical_reduction>50</mechanical_reduction>'
        "</actuator>"
        '<joint name="j1" role="joint1"><mechanical_reduction>2</mechanical_reduction></joint>'
        '<joint name="j2" role="joint2"><mechanical_reduction>-2</mechanical_reduction></joint>'
        "</transmission></ros2_control>"))
    robot = load_urdf(path)
    # ros2_control: a1 = ar1 (jr1 j1 + jr2 j2), a2 = ar2 (jr1 j1 - jr2 j2)
    np.testing.assert_array_equal(robot.transmission.matrix,
                                  [[-100, 0, 0], [0, 100, -100], [0, -100, -100]])
    assert robot.transmission.motor_names == ("m0", "m1", "m2")
    assert not robot.transmission.uncoupled
    spec = robot_to_dict(robot, folder=tmp_path)  # the URDF's own: read again, not written
    assert "transmission" not in spec


def test_uncoupled_urdf_robot_identifies_as_before(tmp_path):
    from dynid.robot import load_urdf

    plain = load_urdf(_urdf(tmp_path, ""))
    geared = load_urdf(_urdf(tmp_path, (
        '<transmission name="t0"><type>transmission_interface/SimpleTransmission</type>'
        '<joint name="j0"/><actuator name="m0"><mechanicalReduction>-100</mechanicalReduction>'
        "</actuator></transmission>")))
    assert plain.transmission.direct and not geared.transmission.direct
    t, q, dq, ddq = _trajectory(5, seconds=4.0, n=3)
    tau = rnea(plain, q, dq, ddq) + np.sign(dq) * 0.3
    log = Dataset(t=t, q=q, dq=dq, ddq=ddq, tau=tau)
    models = [identify(robot, log, friction=ViscousCoulomb.zeros(3), rotor_inertia=True)
              for robot in (plain, geared)]
    assert np.array_equal(models[0].coefficients, models[1].coefficients)


# --- a coupled model's files ---------------------------------------------------------------

def test_coupled_model_file_round_trips(tmp_path):
    from dynid.model.linear_model import load_model, save_model

    truth = _truth()
    log = to_joint_side(_motor_log(truth, seed=3)[0], _coupled())
    robot = load_robot("tx40").with_transmission(_coupled())
    model = identify(robot, log, friction=ViscousCoulomb.zeros(6), rotor_inertia=True)
    save_model(model, tmp_path / "model.yaml")
    again = load_model(tmp_path / "model.yaml")
    np.testing.assert_array_equal(again.robot.transmission.matrix, _coupled().matrix)
    np.testing.assert_allclose(again.predict(log.q, log.dq, log.ddq),
                               model.predict(log.q, log.dq, log.ddq), rtol=1e-12, atol=1e-12)


def test_generated_c_carries_the_coupled_rotors_and_friction(tmp_path):
    import ctypes
    import shutil
    import subprocess

    from dynid.codegen import generate

    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no system C compiler `cc` on PATH")
    truth = _truth()
    log = to_joint_side(_motor_log(truth, seed=4)[0], _coupled())
    robot = load_robot("tx40").with_transmission(_coupled())
    model = identify(robot, log, friction=ViscousCoulomb.zeros(6), rotor_inertia=True)
    code = generate(model, tmp_path / "wrist.h")
    library = tmp_path / "libwrist.so"
    subprocess.run([cc, "-O0", "-std=c99", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
                    str(tmp_path / "wrist.c"), "-o", str(library), "-lm"], check=True)
    lib = ctypes.CDLL(str(library))
    rng = np.random.default_rng(6)
    q, dq, ddq = rng.normal(size=(3, 6)), rng.normal(size=(3, 6)), rng.normal(size=(3, 6))

    def call(name, *arrays, size=6):
        out = np.zeros(size)
        pointers = [None if a is None else np.ascontiguousarray(a).ctypes.data_as(
            ctypes.c_void_p) for a in arrays]
        getattr(lib, f"{code.prefix}_{name}")(*pointers, out.ctypes.data_as(ctypes.c_void_p))
        return out

    for k in range(3):
        expected = model.predict(q[k:k + 1], dq[k:k + 1], ddq[k:k + 1])[0]
        np.testing.assert_allclose(call("inverse_dynamics", q[k], dq[k], ddq[k], None),
                                   expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())
        np.testing.assert_allclose(call("mass_matrix", q[k], size=36).reshape(6, 6),
                                   model.mass_matrix(q[k:k + 1])[0], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(call("friction", dq[k], None),
                                   model.friction_torque(dq[k:k + 1])[0], rtol=1e-12,
                                   atol=1e-14)
    # the coupling is in the code: motor 6's speed u[5] mixes joints 5 and 6
    assert "u[5] = 0.5 * dq[4] + dq[5];" in (tmp_path / "wrist.c").read_text()


def test_urdf_export_keeps_reductions_and_refuses_a_coupling(tmp_path):
    from dynid.export import to_mjcf, to_urdf
    from dynid.robot import load_urdf

    robot = load_robot("tx40").with_rotor_inertia(REDUCTIONS**2 * ROTOR_MOTOR)
    geared = robot.with_transmission(Transmission.simple(REDUCTIONS, [f"m{k}" for k in
                                                                      range(6)]))
    path = tmp_path / "tx40.urdf"
    path.write_text(to_urdf(geared))
    back = load_urdf(path)
    np.testing.assert_array_equal(back.transmission.matrix, geared.transmission.matrix)
    assert back.transmission.motor_names == geared.transmission.motor_names
    np.testing.assert_allclose(back.rotor_inertia, geared.rotor_inertia, rtol=1e-15)
    # a differential (ros2_control's form) is written as one and read back
    differential = np.diag(REDUCTIONS)
    differential[np.ix_([4, 5], [4, 5])] = [[45.0, 90.0], [-30.0, 60.0]]
    diff = robot.with_transmission(Transmission.from_matrix(differential))
    path.write_text(to_urdf(diff))
    back = load_urdf(path)
    np.testing.assert_allclose(back.transmission.matrix, differential, rtol=1e-15)
    np.testing.assert_allclose(back.rotor_inertia, robot.rotor_inertia, rtol=1e-15)
    coupled = robot.with_transmission(_coupled())
    for writer in (to_urdf, to_mjcf):
        with pytest.raises(ValueError, match="couples motors \\(motor6 with joint5\\)"):
            writer(coupled)


# --- the command line ------------------------------------------------------------------------

def test_identify_and_validate_a_motor_side_log_from_the_command_line(tmp_path, capsys):
    import json

    from dynid.cli import main
    from dynid.data import write_dataset
    from dynid.robot import save_robot

    truth = _truth()
    robot_file = tmp_path / "tx40.yaml"
    save_robot(load_robot("tx40").with_transmission(_coupled()), robot_file)
    for seed, name in ((21, "fit.npz"), (22, "check.npz")):
        write_dataset(tmp_path / name, _motor_log(truth, seed)[0])
    model = tmp_path / "model.yaml"
    assert main(["identify", str(robot_file), str(tmp_path / "fit.npz"), "--motor-side",
                 "--as-is", "--rotor-inertia", "--friction", "viscous-coulomb", "-o",
                 str(model), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert any("motor side to joint side" in step for step in report["preprocessing"])
    assert main(["validate", str(model), str(tmp_path / "check.npz"), "--motor-side", "--as-is",
                 "--json"]) == 0
    validated = json.loads(capsys.readouterr().out)
    _, noise = _motor_log(truth, 22)
    floor = np.sqrt(np.mean(noise**2, axis=0))
    assert (np.asarray(validated["rmse"]) < 1.1 * floor).all(), (validated["rmse"], floor)
    # without --motor-side the motor torques are read as joint torques: far off
    assert main(["validate", str(model), str(tmp_path / "check.npz"), "--as-is",
                 "--json"]) == 0
    wrong = json.loads(capsys.readouterr().out)
    assert (np.asarray(wrong["rmse"]) > 3 * floor).any()


def test_a_robots_own_friction_acts_through_its_coupling():
    from dynid.dynamics import friction_torque

    friction = ViscousCoulomb(REDUCTIONS**2 * VISCOUS_MOTOR, np.abs(REDUCTIONS) * COULOMB_MOTOR,
                              np.zeros(6))
    robot = load_robot("tx40").with_friction(friction)
    dq = np.random.default_rng(8).normal(size=(5, 6))
    assert np.array_equal(friction_torque(robot, dq), friction.torque(dq))
    g = _coupled().matrix
    expected = (VISCOUS_MOTOR * (dq @ g.T) + COULOMB_MOTOR * np.sign(dq @ g.T)) @ g
    np.testing.assert_allclose(friction_torque(robot.with_transmission(_coupled()), dq),
                               expected, rtol=1e-12)


def test_motor_side_needs_a_stated_transmission(tmp_path, capsys):
    from dynid.cli import main
    from dynid.data import write_dataset

    write_dataset(tmp_path / "log.npz", _motor_log(_truth(), 1)[0])
    assert main(["identify", "tx40", str(tmp_path / "log.npz"), "--motor-side",
                 "--as-is"]) == 2
    assert "`--motor-side`: 'tx40' states no transmission" in capsys.readouterr().err


def test_robot_show_lists_the_transmission(tmp_path, capsys):
    import json

    from dynid.cli import main
    from dynid.robot import save_robot

    path = tmp_path / "tx40.yaml"
    save_robot(load_robot("tx40").with_transmission(_coupled()), path)
    assert main(["robot", "show", str(path)]) == 0
    text = capsys.readouterr().out
    assert "motor6: joint6 x 32 (theta = 32 (joint6 + joint5 x 0.5))" in text
    assert main(["robot", "show", str(path), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["transmission"]
    assert shown["coupling"][5][4] == WRIST and shown["reductions"] == REDUCTIONS.tolist()


def test_per_log_offsets_through_a_coupling_are_the_joints():
    """Each motor-side log with its own motor torque offsets ``o_m``: the fit reports each
    log's joint-side offsets ``G^T o_m``."""
    truth = _truth()
    g = _coupled().matrix
    offsets = [np.linspace(-0.02, 0.03, 6), np.linspace(0.01, -0.01, 6)]
    logs = []
    for seed, offset in zip((31, 32), offsets, strict=True):
        log = _motor_log(truth, seed)[0]
        logs.append(to_joint_side(Dataset(t=log.t, q=log.q, dq=log.dq, ddq=log.ddq,
                                          tau=log.tau + offset), _coupled()))
    robot = load_robot("tx40").with_transmission(_coupled())
    model = identify(robot, logs, friction=ViscousCoulomb.zeros(6), rotor_inertia=True)
    for reported, offset in zip(model.report["log_offsets"], offsets, strict=True):
        np.testing.assert_allclose(reported["offsets"], offset @ g, atol=0.05)


@pytest.mark.parametrize(("element", "match"), [
    ('<joint name="j1"/><actuator name="a"/><actuator name="b"/>', "2 joints and 2 actuators"),
    ('<joint name="j1"/><joint name="nope"/><actuator name="a"/><actuator name="b"/>',
     "not all its joints are arm joints"),
])
def test_a_differential_dynid_cannot_read_is_named(tmp_path, element, match):
    from dynid.robot import URDFWarning, load_urdf

    path = _urdf(tmp_path, '<transmission name="d"><type>transmission_interface/'
                           f"DifferentialTransmission</type>{element}</transmission>")
    with pytest.warns(URDFWarning, match=match):
        robot = load_urdf(path)
    assert robot.transmission.direct


def test_a_urdf_differential_with_a_zero_reduction_is_refused_by_name(tmp_path):
    from dynid.robot import load_urdf

    path = _urdf(tmp_path, (
        '<transmission name="d"><type>transmission_interface/DifferentialTransmission</type>'
        '<joint name="j1"/><joint name="j2"/><actuator name="a"><mechanicalReduction>0'
        '</mechanicalReduction></actuator><actuator name="b"/></transmission>'))
    with pytest.raises(ValueError, match=r"arm\.urdf: the transmissions give no valid"):
        load_urdf(path)


def test_a_velocity_less_motor_side_coupled_wrist_log_is_identified(tmp_path, capsys):
    """What a real coupled-wrist arm logs: motor positions and torques, nothing else. Read,
    mapped through the coupling, its velocities and accelerations derived, identified: held
    out, every joint at the noise floor (a cutoff and no delay given: what the default command
    chooses from the log takes seconds, and is ``dynid.data.cutoff``'s and
    ``dynid.identification.delay``'s to test)."""
    import json

    from dynid.cli import main
    from dynid.robot import save_robot

    log, noise = _motor_log(_truth(), seed=41, rate=500.0)
    np.savez(tmp_path / "motors.npz", t=log.t, q=log.q, tau=log.tau)  # no dq, no ddq
    save_robot(load_robot("tx40").with_transmission(_coupled()), tmp_path / "tx40.yaml")
    assert main(["identify", str(tmp_path / "tx40.yaml"), str(tmp_path / "motors.npz"),
                 "--motor-side", "--rotor-inertia", "--friction", "viscous-coulomb",
                 "--validate", "0.3", "--json", "--cutoff", "50", "--delay", "0"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["preprocessing"][0].startswith("motor side to joint side: positions and "
                                                 "torques")
    floor = np.sqrt(np.mean(noise**2, axis=0))
    assert (np.asarray(report["validation"]["rmse"]) < 1.1 * floor).all(), \
        (report["validation"]["rmse"], floor)
