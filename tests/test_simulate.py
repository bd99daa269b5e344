"""The digital twin: closed-loop tracking, the sensor model, LuGre; the simulate command."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from _closed_loop_oracle import closed_loop_oracle
from conftest import assert_close, random_table_robot

from dynid.cli import main
from dynid.data.io import read_dataset
from dynid.excitation.optimize import random_fourier
from dynid.excitation.trajectory import save_trajectory
from dynid.friction.models import Arctan, LuGre, NoFriction, Sigmoid, Stribeck, ViscousCoulomb
from dynid.identification.linear.idim import identify
from dynid.robot import load_robot
from dynid.robot.inertia import PARAMETER_NAMES
from dynid.simulate._closed_loop import _cos_sin_near, _ldl_solve
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


# --- the compiled closed loop against the Python loop it replaced (tests/_closed_loop_oracle.py)

class _Sines:
    """A smooth reference for any robot: five harmonics per joint around ``q0``."""

    def __init__(self, n_joints: int, seed: int, q0=None, amplitude: float = 0.4,
                 period: float = 2.0, drift: float = 0.0) -> None:
        rng = np.random.default_rng(seed)
        self.n_joints = n_joints
        self.q0 = np.zeros(n_joints) if q0 is None else np.asarray(q0, dtype=float)
        self.drift = drift  # rad/s on every joint
        self.rates = 2 * np.pi / period * np.arange(1, 6)
        self.amplitude = amplitude * rng.uniform(-1, 1, (n_joints, 5)) / np.arange(1, 6)
        self.phase = rng.uniform(0, 2 * np.pi, (n_joints, 5))

    def sample(self, t):
        angle = self.rates * np.asarray(t)[:, None, None] + self.phase
        return (self.q0 + self.drift * np.asarray(t)[:, None]
                + (self.amplitude * np.sin(angle)).sum(-1),
                self.drift + (self.amplitude * self.rates * np.cos(angle)).sum(-1),
                (-self.amplitude * self.rates**2 * np.sin(angle)).sum(-1))


PANDA_HOME = [0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8]
PANDA_IMPEDANCE = {"stiffness": [600.0] * 4 + [250.0, 150.0, 50.0],
                   "damping": [30.0, 30.0, 20.0, 30.0, 8.0, 6.0, 2.0]}
ENCODERS = SensorModel(position_resolution=2 * np.pi / 2**20, velocity_from_positions=True)


def _same_log(compiled, oracle, substeps: int) -> None:
    """The logs agree to 1e-9, relative to each signal's size; the compiled one says it took
    ``substeps`` RK4 steps per period (the oracle's metadata predates the key)."""
    assert compiled.metadata["rk4_substeps"] == substeps
    compiled.metadata.pop("rk4_substeps")
    for name in ("q", "dq", "ddq", "tau"):
        expected = getattr(oracle, name)
        if expected is None:
            assert getattr(compiled, name) is None, name
            continue
        scale = np.abs(expected).max()
        assert_close(getattr(compiled, name), expected, rtol=1e-9, atol=1e-9 * scale)
    assert_close(compiled.t, oracle.t, rtol=0, atol=0)
    assert_close(compiled.metadata["tracking_rms"], oracle.metadata["tracking_rms"], rtol=1e-9)
    assert {**compiled.metadata, "tracking_rms": None} == {**oracle.metadata,
                                                           "tracking_rms": None}


@pytest.mark.parametrize("law", [{}, {"natural_frequency": [15.0] * 7}, PANDA_IMPEDANCE],
                         ids=["computed-torque", "computed-torque-w15", "joint-impedance"])
@pytest.mark.parametrize("sensor", [None, ENCODERS], ids=["exact", "encoders"])
def test_compiled_closed_loop_is_the_python_loop_on_the_panda(law, sensor):
    """The truth (Gaz's parameters, sigmoid friction) under a controller on Franka's CAD model,
    from quantised positions and encoder-difference velocities or the exact state."""
    truth, cad = load_robot("panda"), load_robot("panda-cad")
    reference = _Sines(7, seed=1, q0=PANDA_HOME)
    options = {"duration": 0.3, "rate": 1000.0, "controller": cad, "sensor": sensor,
               "seed": 3, "substeps": 2, **law}
    _same_log(simulate_closed_loop(truth, reference, **options),
              closed_loop_oracle(truth, reference, **options), 2)


def _arm3_friction() -> dict:
    one = np.ones(3)
    return {
        "none": NoFriction(3),
        "viscous-coulomb": ViscousCoulomb(0.2 * one, 0.3 * one, [-0.05, 0.02, 0.1]),
        "arctan": Arctan([0.3, 0.2, 0.1], [-0.1, -0.05, -0.02], 0.2 * one, 100 * one,
                         10 * one),
        "sigmoid": Sigmoid([0.5, 0.8, 0.6], [5.0, 9.0, 10.0], [0.04, -0.03, 0.0]),
        "stribeck": Stribeck(0.3 * one, 0.2 * one, 0.05 * one, [1.0, 2.0, 0.7], 0.1 * one,
                             [0.05, -0.1, 0.0]),
        "lugre": LuGre(1e3 * one, one, 0.1 * one, 0.3 * one, 0.5 * one, 0.05 * one,
                       [0.05, -0.1, 0.0]),
    }


@pytest.mark.parametrize("name", sorted(_arm3_friction()))
def test_compiled_closed_loop_is_the_python_loop_for_every_friction_model(name):
    """Each friction model (with its offset where it has one) on a truth with rotor inertias,
    tracked by a controller whose parameters and rotor inertias are 10 % off.

    The models with a Coulomb step (sign(dq)) follow a reference that never stops: a joint
    that sticks chatters across dq = 0, where the step makes the discrete loop amplify any
    rounding difference (1e-16 grows to 1e-6 in 0.2 s), so two correct implementations part."""
    truth = (load_robot("arm3").with_friction(_arm3_friction()[name])
             .with_rotor_inertia([0.02, 0.05, 0.01]))
    controller = (load_robot("arm3").with_parameters(1.1 * truth.parameters)
                  .with_rotor_inertia([0.0, 0.06, 0.008]))
    step = name in ("viscous-coulomb", "stribeck")
    reference = _Sines(3, seed=2, amplitude=0.1 if step else 0.4, drift=1.0 if step else 0.0)
    if step:  # the reference velocity stays above 0.3 rad/s
        assert np.abs(reference.sample(np.linspace(0, 0.4, 401))[1]).min() > 0.3
    for options in ({"natural_frequency": 12.0}, {"stiffness": 300.0, "damping": 15.0}):
        options.update(duration=0.4, rate=1000.0, controller=controller, substeps=3)
        _same_log(simulate_closed_loop(truth, reference, **options),
                  closed_loop_oracle(truth, reference, **options), 3)


@pytest.mark.parametrize("convention", ["mdh", "dh"])
def test_compiled_closed_loop_is_the_python_loop_with_prismatic_joints(convention):
    rng = np.random.default_rng(7 if convention == "mdh" else 8)
    truth = random_table_robot(rng, convention, 5, prismatic=0.4)
    assert "prismatic" in {joint.kind for joint in truth.joints}
    truth = truth.with_rotor_inertia(rng.uniform(0, 0.05, 5)).with_friction(
        ViscousCoulomb(*rng.uniform(0, 0.3, (3, 5))))
    reference = _Sines(5, seed=3, amplitude=0.1)
    options = {"duration": 0.3, "rate": 1000.0, "substeps": 2,
               "sensor": SensorModel(position_resolution=1e-5, velocity_from_positions=True)}
    _same_log(simulate_closed_loop(truth, reference, **options),
              closed_loop_oracle(truth, reference, **options), 2)


def test_closed_loop_blocks_do_not_change_the_log(monkeypatch):
    """The compiled loop runs in blocks between progress lines: their sizes are invisible."""
    from dynid.simulate import twin

    robot = load_robot("arm3").with_friction(_arm3_friction()["lugre"])
    reference = _Sines(3, seed=4)
    options = {"duration": 0.5, "rate": 1000.0, "sensor": ENCODERS, "substeps": 4}
    whole = simulate_closed_loop(robot, reference, **options)
    monkeypatch.setattr(twin, "_FIRST_BLOCK", 7)
    monkeypatch.setattr(twin, "_MAX_BLOCK", 13)
    lines = []
    pieces = simulate_closed_loop(robot, reference, progress=lines.append, **options)
    for name in ("q", "dq", "tau"):
        assert np.array_equal(getattr(pieces, name), getattr(whole, name)), name
    assert lines[-1].startswith("closed-loop simulation: 501/501 (100 %)")


@pytest.mark.parametrize("piece_samples", [1, 97, 250, 501, 10_000])
def test_closed_loop_pieces_are_the_whole_run(piece_samples):
    """A run longer than memory comes in pieces: joined, they are simulate_closed_loop's exact
    signals bit for bit (encoders and velocity differences across the piece boundaries, a
    LuGre state, a contact pulse)."""
    from dynid.simulate import Contact, closed_loop_pieces

    robot = load_robot("arm3").with_friction(_arm3_friction()["lugre"])
    reference = _Sines(3, seed=4)
    pulse = [Contact.pulse(0.2, [0.0, 0.0, -10.0])]
    options = {"duration": 0.5, "rate": 1000.0, "sensor": ENCODERS, "substeps": 4,
               "contacts": pulse}
    whole = simulate_closed_loop(robot, reference, **options)
    pieces = list(closed_loop_pieces(robot, reference, piece_samples=piece_samples, **options))
    assert len(pieces) == -(-501 // piece_samples)
    assert all(p.n_samples <= piece_samples for p in pieces)
    joined = {name: np.concatenate([getattr(p, name) for p in pieces])
              for name in ("t", "q", "dq", "ddq", "tau")}
    # the log's positions are the truth's, quantised by the sensor afterwards
    assert np.array_equal(np.round(joined["q"] / ENCODERS.position_resolution)
                          * ENCODERS.position_resolution, whole.q)
    for name in ("t", "tau"):
        assert np.array_equal(joined[name], getattr(whole, name)), name
    with pytest.raises(ValueError, match="`piece_samples`"):
        next(closed_loop_pieces(robot, reference, piece_samples=0, **options))


def test_closed_loop_block_sizes_follow_the_wall_time():
    from dynid.simulate.twin import _BLOCK_SECONDS, _MAX_BLOCK, _next_block

    assert _next_block(1000, _BLOCK_SECONDS) == 1000
    assert _next_block(1000, 10 * _BLOCK_SECONDS) == 100  # a slow block: smaller
    assert _next_block(1000, 0.0) == 4000  # at most 4x per step (compilation, a pause)
    assert _next_block(1000, 1e3) == 16
    assert _next_block(_MAX_BLOCK, 0.0) == _MAX_BLOCK


def test_closed_loop_divergence_is_reported_where_the_python_loop_reported_it():
    robot = load_robot("arm3")
    reference = _Sines(3, seed=5)
    options = {"duration": 0.5, "rate": 200.0, "stiffness": 1e9, "damping": 1.0, "substeps": 2}
    messages = []
    for run in (simulate_closed_loop, closed_loop_oracle):
        with pytest.raises(ValueError, match="the closed loop diverged at t = ") as error:
            run(robot, reference, **options)
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def test_closed_loop_truth_without_positive_definite_inertia_is_an_error():
    robot = load_robot("arm3")
    parameters = robot.parameters.copy()
    parameters[:, [PARAMETER_NAMES.index(name) for name in ("Ixx", "Iyy", "Izz")]] = -10.0
    negative = robot.with_parameters(parameters)
    with pytest.raises(ValueError, match=re.escape("M(q) of `robot` is not positive definite "
                                                   "at t = 0.000 s")):
        simulate_closed_loop(negative, _Sines(3, seed=6), duration=0.1, controller=robot)


def test_closed_loop_refuses_a_friction_model_it_cannot_compile():
    """A model the compiled loop has no formula for is refused, not simulated as its base."""

    class Doubled(ViscousCoulomb):
        def torque(self, dq):
            return 2 * super().torque(dq)

    robot = load_robot("arm3").with_friction(Doubled(*np.ones((3, 3))))
    with pytest.raises(TypeError, match="the compiled simulation knows the friction models"):
        simulate_closed_loop(robot, _Sines(3, seed=6), duration=0.1)


def test_ldl_solve_is_the_linear_solve_and_detects_indefinite_matrices():
    rng = np.random.default_rng(7)
    for n in (1, 2, 7, 12):
        factor = rng.standard_normal((n, n))
        matrix = factor @ factor.T + 0.1 * np.eye(n)
        rhs = rng.standard_normal(n)
        work, x = matrix.copy(), np.zeros((4, 3 * n))
        x[2, n:2 * n] = rhs
        assert _ldl_solve(work, x, 2, n)
        assert_close(x[2, n:2 * n], np.linalg.solve(matrix, rhs), rtol=1e-12, atol=0.0)
        assert not x[[0, 1, 3]].any() and not x[2, :n].any() and not x[2, 2 * n:].any()
    for bad in (np.diag([1.0, -1.0, 2.0]), np.diag([1.0, 0.0, 2.0]), np.diag([1.0, np.nan, 2.0])):
        assert not _ldl_solve(bad.copy(), np.zeros((1, 3)), 0, 0)


@pytest.mark.parametrize("x", [0.0, 0.7, -2.9, 3.1, 40.0])
def test_cos_sin_near_is_cos_and_sin_of_the_stage_angle(x):
    deltas = np.concatenate([-np.logspace(-12, 0, 40), [0.0], np.logspace(-12, 0, 40)])
    for delta in deltas:  # the series below |delta| = 0.05, the functions above
        c, s = _cos_sin_near(x, np.cos(x), np.sin(x), delta)
        # to the rounding of the functions and of the sum x + delta itself
        tolerance = 4e-16 + np.spacing(abs(x) + abs(delta))
        assert abs(c - np.cos(x + delta)) <= tolerance and abs(s - np.sin(x + delta)) <= tolerance


@pytest.mark.parametrize("law", ["impedance", "computed-torque"])
def test_resimulation_is_the_closed_loop_bit_for_bit(law):
    """``Resimulation`` (the reference sampled once, plant after plant) gives
    simulate_closed_loop's exact signals for each plant, with a controller's encoders and a
    start time; a diverging plant is a ClosedLoopError."""
    from dynid.simulate import ClosedLoopError, Controller
    from dynid.simulate.twin import Resimulation

    robot = load_robot("arm3").with_friction(_arm3_friction()["arctan"])
    reference = _Sines(3, seed=7)
    encoders = {"resolution": 1e-5, "velocity_from_positions": True}
    controller = (Controller.impedance([300.0] * 3, [20.0] * 3, **encoders)
                  if law == "impedance" else Controller.computed_torque(robot, 25.0, **encoders))
    loop = Resimulation(robot, reference, duration=0.4, controller=controller, start=0.25)
    rng = np.random.default_rng(0)
    for _ in range(2):
        plant = robot.with_parameters(robot.parameters * (1 + 0.1 * rng.standard_normal((3, 10))))
        substeps = loop.substeps(plant)
        run = loop.run(plant, substeps)
        whole = simulate_closed_loop(plant, reference, duration=0.4, start=0.25,
                                     controller=Controller(**{**controller.__dict__,
                                                              "substeps": substeps}))
        for name in ("t", "q", "dq", "ddq", "tau"):
            assert np.array_equal(getattr(run, name), getattr(whole, name)), name
    assert loop.substeps(plant, step_times_rate=2.0) <= loop.substeps(plant)
    stiff = Controller.impedance([1e9] * 3, [1.0] * 3, rate=200.0)
    with pytest.raises(ClosedLoopError, match="diverged"):
        Resimulation(robot, reference, duration=0.5, controller=stiff).run(robot, 2)
    with pytest.raises(ValueError, match="`substeps`"):
        loop.run(robot, 0)


def test_substeps_bound_is_checked_and_looser_bounds_take_fewer_steps():
    from dynid.simulate._substeps import RK4_STABILITY, rk4_substeps

    robot = load_robot("arm3").with_friction(_arm3_friction()["arctan"])
    options = {"duration": 0.5, "rate": 1000.0, "start": 0.0}
    counts = [rk4_substeps(robot, _Sines(3, seed=8), step_times_rate=bound, **options)
              for bound in (0.25, 0.5, 2.0)]
    assert counts[0] >= counts[1] >= counts[2] >= 1 and counts[0] > counts[2]
    for bad in (0.0, RK4_STABILITY + 0.1, True, "1"):
        with pytest.raises(ValueError, match="`step_times_rate`"):
            rk4_substeps(robot, _Sines(3, seed=8), step_times_rate=bad, **options)
