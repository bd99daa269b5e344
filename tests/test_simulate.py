"""The digital twin: closed-loop tracking, the sensor model, LuGre; the simulate command."""

from __future__ import annotations

import json

import numpy as np
from conftest import assert_close

from dynid.cli import main
from dynid.data.io import read_dataset
from dynid.excitation.optimize import random_fourier
from dynid.excitation.trajectory import save_trajectory
from dynid.friction.models import LuGre, NoFriction, ViscousCoulomb
from dynid.identification.linear import identify
from dynid.robot import load_robot
from dynid.simulate.twin import SensorModel, simulate_closed_loop, simulate_open_loop


def test_tracking_error_falls_with_gain():
    robot = load_robot("panda")
    trajectory = random_fourier(robot, seed=1)
    errors = [np.mean(simulate_closed_loop(robot, trajectory, duration=1.0, rate=500.0,
                                           natural_frequency=w).metadata["tracking_rms"])
              for w in (5.0, 20.0, 80.0)]
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 0.05 * errors[0]


def test_perfect_model_without_friction_tracks_up_to_the_torque_hold():
    """Only the zero-order hold of the torque separates the motion from the reference: the
    error shrinks with the control rate (first order)."""
    robot = load_robot("arm3").with_friction(NoFriction(3))
    trajectory = random_fourier(robot, seed=2)
    errors = [max(simulate_closed_loop(robot, trajectory, duration=1.0,
                                       rate=rate).metadata["tracking_rms"])
              for rate in (500.0, 2000.0)]
    assert errors[1] < 1e-4 and errors[1] < 0.4 * errors[0]


def test_closed_loop_torques_are_the_dynamics():
    """The logged torque and the logged motion satisfy the truth's inverse dynamics."""
    friction = ViscousCoulomb(np.full(3, 0.2), np.full(3, 0.3), np.zeros(3))
    robot = load_robot("arm3").with_friction(friction)
    data = simulate_closed_loop(robot, random_fourier(robot, seed=3), duration=1.0, rate=500.0,
                                natural_frequency=10.0)
    from dynid.dynamics import rnea

    expected = rnea(robot, data.q, data.dq, data.ddq) + friction.torque(data.dq)
    assert_close(data.tau, expected, rtol=1e-9, atol=1e-9)


def test_joint_impedance_tracks_despite_a_poor_inertia_model():
    """Computed torque scales its stiffness by the controller's M^; with Franka's CAD wrist
    inertia (25x too light) the last joint drifts by a radian. A joint impedance in torque units
    tracks to millimetres of a radian, and its torques are still the truth's dynamics."""
    from dynid.dynamics import rnea

    truth, cad = load_robot("panda"), load_robot("panda-cad")
    trajectory = random_fourier(cad, omega_f=2 * np.pi / 10, seed=1)
    common = {"duration": 2.0, "rate": 1000.0, "controller": cad}
    computed = simulate_closed_loop(truth, trajectory, **common)
    impedance = simulate_closed_loop(truth, trajectory, stiffness=[600] * 4 + [250, 150, 50],
                                     damping=[30, 30, 20, 30, 8, 6, 2], **common)
    assert computed.metadata["tracking_rms"][6] > 0.1
    assert max(impedance.metadata["tracking_rms"]) < 0.01
    assert "joint impedance" in impedance.metadata["source"]
    assert impedance.metadata["stiffness"][6] == 50
    expected = (rnea(truth, impedance.q, impedance.dq, impedance.ddq)
                + truth.friction.torque(impedance.dq))
    assert_close(impedance.tau, expected, rtol=1e-9, atol=1e-9)


def test_closed_loop_gain_options_are_checked():
    robot = load_robot("arm3")
    trajectory = random_fourier(robot, seed=2)
    cases = [({"natural_frequency": 10.0, "stiffness": 100.0, "damping": 10.0}, "not both"),
             ({"stiffness": 100.0}, "needs both"),
             ({"stiffness": [100.0, -1.0, 1.0], "damping": 1.0}, "must be > 0")]
    for options, message in cases:
        try:
            simulate_closed_loop(robot, trajectory, duration=0.1, **options)
        except ValueError as error:
            assert message in str(error)
        else:
            raise AssertionError(f"{options} accepted")


def test_lugre_state_settles_to_its_steady_state():
    model = LuGre(sigma0=[1e3], sigma1=[1.0], sigma2=[0.1], fc=[0.3], fs=[0.5], vs=[0.05])
    z = np.zeros(1)
    dq = np.array([0.02])
    for _ in range(10_000):  # explicit Euler, 1e-4 s steps: 1 s, 40 time constants
        z = z + 1e-4 * model.state_derivative(dq, z)
    assert_close(model.torque_with_state(dq, z), model.torque(dq[None])[0], rtol=1e-6)
    robot = load_robot("arm3").with_friction(LuGre(
        sigma0=np.full(3, 1e3), sigma1=np.full(3, 1.0), sigma2=np.full(3, 0.1),
        fc=np.full(3, 0.3), fs=np.full(3, 0.5), vs=np.full(3, 0.05)))
    data = simulate_closed_loop(robot, random_fourier(robot, seed=4), duration=0.5,
                                rate=1000.0, substeps=4)
    assert np.isfinite(data.tau).all()


def test_sensor_model():
    robot = load_robot("arm3")
    trajectory = random_fourier(robot, seed=5)
    sensor = SensorModel(torque_noise_std=[0.5, 0.3, 0.7], torque_bias=0.1,
                         position_resolution=1e-3, velocity_from_positions=True,
                         jitter_std=1e-5, drop_probability=0.05)
    exact = simulate_open_loop(robot, trajectory, duration=10.0)
    logged = simulate_open_loop(robot, trajectory, duration=10.0, sensor=sensor, seed=1)
    steps = np.diff(logged.t)
    assert (steps > 0).all() and (steps > 1.5e-3).sum() > 100  # gaps from dropped samples
    assert 0.9 * exact.n_samples < logged.n_samples < exact.n_samples
    assert np.allclose(logged.q / 1e-3, np.round(logged.q / 1e-3))  # quantised
    assert logged.ddq is None
    kept = np.searchsorted(exact.t, logged.t - 3e-5)  # the nearest exact samples
    residual = logged.tau - exact.tau[kept]
    assert_close(residual.mean(axis=0), [0.1, 0.1, 0.1], atol=0.05)
    assert_close(residual.std(axis=0), [0.5, 0.3, 0.7], rtol=0.1)


def test_noise_free_twin_recovers_the_truth_to_1e_8():
    friction = ViscousCoulomb(fv=np.full(7, 0.1), fc=np.full(7, 0.2), fo=np.full(7, -0.05))
    robot = load_robot("panda").with_friction(friction)
    data = simulate_open_loop(robot, random_fourier(robot, seed=1), duration=14.0, rate=200.0)
    model = identify(robot, data)
    truth = model.base.base(np.concatenate([robot.parameters.ravel(), friction.coefficients]))
    assert np.abs(model.coefficients - truth).max() <= 1e-8 * np.abs(truth).max()


def test_simulate_command(capsys, tmp_path):
    robot = load_robot("arm3")
    trajectory = random_fourier(robot, seed=6)
    save_trajectory(tmp_path / "traj.csv", trajectory, duration=2.0, rate=200.0,
                    allow_moving_ends=True)
    out = tmp_path / "log.csv"
    assert main(["simulate", "arm3", str(tmp_path / "traj.yaml"), "-o", str(out), "--noise",
                 "0.1", "--duration", "2", "--closed-loop", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["n_samples"] == 2001 and len(payload["tracking_rms"]) == 3
    assert read_dataset(out).n_samples == 2001
    assert main(["simulate", "arm3", str(tmp_path / "traj.csv"), "-o",
                 str(tmp_path / "open.npz"), "--rate", "200"]) == 0
    assert read_dataset(tmp_path / "open.npz").n_samples == 401
    assert main(["simulate", "arm3", str(tmp_path / "traj.csv"), "-o", str(tmp_path / "x.csv"),
                 "--duration", "5"]) == 2
    assert "`t` must lie in" in capsys.readouterr().err  # beyond the sampled trajectory
    impedance = tmp_path / "impedance.npz"
    assert main(["simulate", "arm3", str(tmp_path / "traj.yaml"), "-o", str(impedance),
                 "--duration", "1", "--closed-loop", "--stiffness", "400", "--damping", "20",
                 "--controller", "arm3", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert "joint impedance" in payload["control_law"] and payload["controller"] == "arm3"
    assert read_dataset(impedance).n_samples == 1001
    assert main(["simulate", "arm3", str(tmp_path / "traj.yaml"), "-o",
                 str(tmp_path / "y.npz"), "--stiffness", "400"]) == 2
    assert "`--stiffness` need --closed-loop" in capsys.readouterr().err
    assert main(["simulate", "arm3", str(tmp_path / "traj.yaml"), "-o", str(tmp_path / "z.npz"),
                 "--closed-loop", "--controller", "nosuchrobot"]) == 2
    assert "`--controller`:" in capsys.readouterr().err
    assert main(["simulate", "arm3", str(tmp_path / "traj.yaml"), "-o", str(tmp_path / "z.npz"),
                 "--closed-loop", "--stiffness", "1e9", "--damping", "1"]) == 2
    assert "the closed loop diverged" in capsys.readouterr().err
    assert not (tmp_path / "z.npz").exists()
