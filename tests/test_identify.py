"""Identification end to end on twin data with known truth; reverse engineering from M, g."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import assert_close, reference_path

from dynid.data.dataset import Dataset, StaticData
from dynid.dynamics import coriolis_torque, gravity_torque, mass_matrix, rnea
from dynid.excitation.optimize import random_fourier
from dynid.excitation.trajectory import FourierTrajectory
from dynid.friction.models import NoFriction, ViscousCoulomb
from dynid.identification.linear.estimators import OLS, WLS
from dynid.identification.linear.idim import identify
from dynid.identification.linear.reverse_engineering import identify_static
from dynid.model.linear_model import load_model, save_model
from dynid.robot import load_robot
from dynid.simulate.twin import SensorModel, simulate_open_loop


@pytest.fixture(scope="module")
def panda_linear_truth():
    """The Panda with linear friction of Gaz Table III's magnitude (known truth)."""
    friction = ViscousCoulomb(fv=np.full(7, 0.1), fc=np.full(7, 0.2), fo=np.full(7, -0.05))
    return load_robot("panda").with_friction(friction)


def _truth(model, robot) -> np.ndarray:
    return model.base.base(np.concatenate([robot.parameters.ravel(),
                                           robot.friction.coefficients]))


def test_noise_free_data_gives_the_true_base_parameters(panda_linear_truth):
    robot = panda_linear_truth
    data = simulate_open_loop(robot, random_fourier(robot, seed=1), duration=15.0, rate=200.0)
    model = identify(robot, data)
    assert model.base.rank == 43 + 21
    assert_close(model.coefficients, _truth(model, robot), rtol=1e-6, atol=1e-8)
    assert model.report["relative_error_percent"] < 1e-8


def test_a_negative_equivalent_mass_still_predicts(panda_linear_truth):
    """The equivalent parameter vector is a numerical device: a base parameter on a mass column
    that noise drives below zero must not stop the model from predicting (a Robot refuses
    negative masses; the dynamics take the vector as it is)."""
    import dataclasses

    robot = panda_linear_truth
    data = simulate_open_loop(robot, random_fourier(robot, seed=1), duration=10.0, rate=100.0)
    model = identify(robot, data)
    masses = [k for k, column in enumerate(model.base.independent) if column % 10 == 0]
    assert masses, "the Panda's base parameters include mass columns"
    coefficients = model.coefficients.copy()
    coefficients[masses[-1]] = -0.5
    negative = dataclasses.replace(model, coefficients=coefficients)
    expected = negative.base_regressor(data.q, data.dq, data.ddq) @ coefficients
    assert_close(negative.predict(data.q, data.dq, data.ddq), expected, rtol=1e-9, atol=1e-9)
    m = negative.mass_matrix(data.q[:3])
    assert m.shape == (3, 7, 7) and np.isfinite(m).all()


@pytest.mark.parametrize("estimator", [OLS, WLS])
def test_confidence_intervals_cover_the_truth(panda_linear_truth, estimator):
    """50 noise seeds: the 95 % intervals of the base parameters hold the truth >= 90 % of
    the time (joint noise levels differ: what WLS is for)."""
    robot = panda_linear_truth
    trajectory = random_fourier(robot, seed=4)
    sigma = np.array([0.2, 0.2, 0.1, 0.1, 0.05, 0.05, 0.02])
    inside = []
    for seed in range(50):
        data = simulate_open_loop(robot, trajectory, duration=14.0, rate=100.0,
                                  sensor=SensorModel(torque_noise_std=sigma), seed=seed)
        model = identify(robot, data, estimator=estimator())
        inside.append(np.abs(model.coefficients - _truth(model, robot)) <= 1.96 * model.std)
    coverage = np.mean(inside)
    assert coverage >= 0.90, coverage


def test_wls_beats_ols_on_the_panda_twin(panda_linear_truth):
    """Noise 50 x larger on the shoulder than on the wrist: weighting by joint shrinks the
    estimation error (squared errors scaled by one fixed OLS standard deviation each)."""
    robot = panda_linear_truth
    trajectory = random_fourier(robot, seed=4)
    sigma = np.array([1.0, 1.0, 0.5, 0.5, 0.02, 0.02, 0.02])
    errors = {"ols": [], "wls": []}
    scale = None
    for seed in range(10):
        data = simulate_open_loop(robot, trajectory, duration=14.0, rate=100.0,
                                  sensor=SensorModel(torque_noise_std=sigma), seed=seed)
        for name, estimator in (("ols", OLS()), ("wls", WLS())):
            model = identify(robot, data, estimator=estimator)
            scale = model.std if scale is None else scale
            errors[name].append(np.sum(((model.coefficients - _truth(model, robot)) / scale)**2))
    assert np.mean(errors["wls"]) < 0.8 * np.mean(errors["ols"])


# Szabó 2021 Table 2: parameter -> (exact, LS variance, WLS variance); rows in the paper's order
SZABO_TABLE2 = {
    "Ixx2": (0.059, 8.27e-4, 6.25e-4), "Ixx3": (0.059, 8.09e-4, 6.18e-4),
    "Ixy2": (0.0, 3.23e-4, 2.27e-4), "Ixy3": (0.0, 2.04e-4, 1.47e-4),
    "Iyy1": (-0.117, 5.25e-4, 4.30e-4), "Ixz2": (0.0, 2.06e-4, 1.50e-4),
    "Ixz3": (0.0, 1.60e-4, 1.14e-4), "Iyz2": (0.0, 1.32e-4, 1.06e-4),
    "Iyz3": (0.0, 7.56e-5, 5.49e-5), "Izz2": (-0.059, 3.68e-4, 2.68e-4),
    "Izz3": (-0.059, 3.30e-4, 2.21e-4), "m2": (1.414, 1.50e-4, 6.01e-5),
    "m3": (0.707, 3.82e-5, 1.42e-5), "tau_s1": (2.0, 7.97e-4, 7.80e-4),
    "tau_s2": (1.0, 1.42e-4, 1.41e-4), "tau_s3": (2.0, 2.36e-3, 2.34e-3),
    "tau_v1": (0.5, 8.26e-3, 7.89e-3), "tau_v2": (0.277, 9.26e-4, 8.08e-4),
    "tau_v3": (0.030, 1.60e-2, 1.54e-2), "tau_sc1": (-0.3, 1.45e-2, 1.39e-2),
    "tau_sc2": (-0.2, 1.67e-3, 1.65e-3), "tau_sc3": (-0.3, 3.56e-2, 3.45e-2),
    "my2": (0.0, 3.82e-6, 2.24e-6), "my3": (0.0, 4.67e-6, 2.37e-6),
}


def test_szabo2021_table2_ls_and_wls():
    """The paper's simulated setting: arctan friction, torque noise sigma = [0.5, 0.3, 0.7] N m.
    LS and WLS recover the exact values at least as well as Table 2 (within 3 of its standard
    deviations), WLS with the smaller spread."""
    robot = load_robot("arm3")
    data = simulate_open_loop(robot, random_fourier(robot, seed=2), duration=30.0, rate=1000.0,
                              sensor=SensorModel(torque_noise_std=[0.5, 0.3, 0.7]), seed=3)
    models = {"ls": identify(robot, data, estimator=OLS()),
              "wls": identify(robot, data, estimator=WLS())}
    for label, model in models.items():
        assert set(model.base.base_names) == set(SZABO_TABLE2)
        truth = _truth(model, robot)
        for k, name in enumerate(model.base.base_names):
            exact, var_ls, var_wls = SZABO_TABLE2[name]
            assert abs(truth[k] - exact) < 1e-3, name  # arm3 is Table 2's robot
            paper_std = np.sqrt(var_ls if label == "ls" else var_wls)
            assert abs(model.coefficients[k] - truth[k]) < 3 * paper_std, (label, name)
    assert_close(models["wls"].report["noise_std"], [0.5, 0.3, 0.7], rtol=0.1)
    assert np.mean(models["wls"].std) < np.mean(models["ls"].std)


def test_unexcited_joint_is_named(panda_linear_truth):
    robot = panda_linear_truth
    traj = random_fourier(robot, seed=1)
    a, b = traj.a.copy(), traj.b.copy()
    a[6], b[6] = 0.0, 0.0  # joint 7 never moves
    still = FourierTrajectory(a, b, traj.q0, traj.omega_f)
    data = simulate_open_loop(robot, still, duration=14.0, rate=100.0)
    with pytest.raises(ValueError, match=r"determine only \d+ of 64 .*; not excited: fv7"):
        identify(robot, data)


def test_too_few_samples(panda_linear_truth):
    data = simulate_open_loop(panda_linear_truth, random_fourier(panda_linear_truth),
                              duration=0.05, rate=100.0)
    with pytest.raises(ValueError, match=r"equations for 64 unknowns .*; record more"):
        identify(panda_linear_truth, data)


def test_rigid_body_only_and_bad_inputs(panda_linear_truth):
    robot = load_robot("arm3").with_friction(NoFriction(3))
    data = simulate_open_loop(robot, random_fourier(robot, seed=0), duration=14.0, rate=100.0)
    model = identify(robot, data, friction=NoFriction(3))
    assert model.base.rank == 15
    assert_close(model.predict(data.q, data.dq, data.ddq), data.tau, rtol=1e-8, atol=1e-8)
    no_acceleration = Dataset(t=data.t, q=data.q, dq=data.dq, tau=data.tau)
    with pytest.raises(ValueError, match="no accelerations"):
        identify(robot, no_acceleration)
    with pytest.raises(ValueError, match="`data` has 3 joints, `robot` 7"):
        identify(panda_linear_truth, data)
    with pytest.raises(ValueError, match="`friction` must be linear"):
        identify(robot, data, friction=load_robot("panda").friction)


def test_model_file_round_trip(panda_linear_truth, tmp_path):
    robot = panda_linear_truth
    data = simulate_open_loop(robot, random_fourier(robot, seed=1), duration=14.0, rate=100.0,
                              sensor=SensorModel(torque_noise_std=0.05))
    model = identify(robot, data, estimator=WLS())
    save_model(model, tmp_path / "model.yaml")
    loaded = load_model(tmp_path / "model.yaml")
    q, dq, ddq = data.q[:50], data.dq[:50], data.ddq[:50]
    assert_close(loaded.predict(q, dq, ddq), model.predict(q, dq, ddq), rtol=1e-12, atol=1e-12)
    assert loaded.report["method"] == "wls"
    assert loaded.base.base_names == model.base.base_names


def _static_samples(robot, q):
    return StaticData(q=q, M=mass_matrix(robot, q), g=gravity_torque(robot, q))


@pytest.mark.parametrize("name", ["panda", "panda-cad"])
def test_reverse_engineering_is_exact(name, rng):
    robot = load_robot(name)
    q = rng.uniform(robot.limits.lower, robot.limits.upper, size=(300, 7))
    model = identify_static(robot, _static_samples(robot, q))
    assert model.report["rank"] == 43
    assert model.report["joint1_gravity_dropped"] is True
    assert model.report["relative_error_percent"] < 1e-9
    assert_close(model.coefficients, model.base.base(robot.parameters.ravel()), rtol=1e-9,
                 atol=1e-12)
    # M^, g^, c^ and the inverse dynamics on a new motion
    q2, dq2, ddq2 = rng.standard_normal((3, 20, 7))
    assert_close(model.mass_matrix(q2), mass_matrix(robot, q2), atol=1e-12)
    assert_close(model.gravity_torque(q2), gravity_torque(robot, q2), atol=1e-11)
    assert_close(model.coriolis_torque(q2, dq2), coriolis_torque(robot, q2, dq2), atol=1e-11)
    assert_close(model.predict(q2, dq2, ddq2), rnea(robot, q2, dq2, ddq2), atol=1e-11)


def test_gaz2019_static_condition_number_49():
    """Gaz §VI: 1010 poses (GOOD_CONFS_1010), M and g without joint-1 gravity: rank 43 and a
    base regressor with condition number 49."""
    robot = load_robot("panda")
    q = np.loadtxt(reference_path("panda-gaz2019", "GOOD_CONFS_1010.txt"))
    model = identify_static(robot, _static_samples(robot, q))
    assert model.report["rank"] == 43
    assert round(model.report["condition_number"]) == 49


def test_static_bad_inputs(rng):
    robot = load_robot("panda")
    q = rng.uniform(-1, 1, size=(5, 7))
    samples = _static_samples(robot, q)
    skewed = np.array(samples.M)
    skewed[2, 0, 1] += 0.1
    with pytest.raises(ValueError, match="`M` must be symmetric: sample 2"):
        StaticData(q=q, M=skewed, g=samples.g)
    with pytest.raises(ValueError, match=r"`g` must have shape \(5, 7\)"):
        StaticData(q=q, M=samples.M, g=samples.g[:4])
    with pytest.raises(ValueError, match=r"not excited|equations for"):
        identify_static(robot, StaticData(q=q[:1], M=samples.M[:1], g=samples.g[:1]))


def test_sub_millimetre_offsets_keep_their_terms(rng):
    """a4 = 0.15 mm: its a4^2 m terms (1e-8 of a column) are real regroupings, not round-off,
    and the static and torque regressors agree on them."""
    import dataclasses

    from dynid.model.base_parameters import robot_base_parameters, structural_regressor
    from dynid.robot import Robot

    panda = load_robot("panda")
    rows = list(panda.table)
    rows[3] = dataclasses.replace(rows[3], a=1.5e-4)
    robot = Robot.from_mdh("offset", rows, panda.parameters, limits=panda.limits)
    base = robot_base_parameters(robot)
    w = structural_regressor(robot, seed=3)
    pi = robot.parameters.ravel()
    assert_close(base.reduce(w) @ base.base(pi), w @ pi, rtol=1e-12, atol=1e-12)
    q = rng.uniform(panda.limits.lower, panda.limits.upper, size=(200, 7))
    model = identify_static(robot, _static_samples(robot, q))
    assert model.report["relative_error_percent"] < 1e-9


def test_noisy_still_joint_warns_instead_of_a_silent_estimate():
    import warnings

    from dynid.identification.linear.estimators import IllConditionedWarning

    robot = load_robot("arm3")
    traj = random_fourier(robot, seed=1)
    a, b = traj.a.copy(), traj.b.copy()
    a[2], b[2] = 1e-4 * a[2], 1e-4 * b[2]  # joint 3 barely moves: encoder-noise level
    data = simulate_open_loop(robot, FourierTrajectory(a, b, traj.q0, traj.omega_f),
                              duration=14.0, rate=200.0,
                              sensor=SensorModel(torque_noise_std=[0.5, 0.3, 0.7]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            identify(robot, data)
        except ValueError as error:  # or refused outright, naming what is not excited
            assert "not excited" in str(error)
            return
    assert any(issubclass(w.category, IllConditionedWarning) for w in caught)


def test_repeated_poses_do_not_excite(rng):
    robot = load_robot("panda")
    q = np.repeat(rng.uniform(-1, 1, size=(1, 7)), 40, axis=0)
    with pytest.raises(ValueError, match=r"the static samples determine only .* poses must spread"):
        identify_static(robot, _static_samples(robot, q))


def test_model_files_round_trip_every_kind(tmp_path, rng):
    from conftest import random_urdf_robot

    from dynid.friction.models import Arctan

    # a static model
    robot = load_robot("panda")
    q = rng.uniform(robot.limits.lower, robot.limits.upper, size=(100, 7))
    static = identify_static(robot, _static_samples(robot, q))
    save_model(static, tmp_path / "static.yaml")
    q2, dq2, ddq2 = rng.standard_normal((3, 5, 7))
    assert_close(load_model(tmp_path / "static.yaml").predict(q2, dq2, ddq2),
                 static.predict(q2, dq2, ddq2), atol=1e-12)
    # arctan friction with its own shape constants, and a dropped coefficient
    arm = load_robot("arm3")
    friction = Arctan.template(3, k_v=[50.0, 60.0, 70.0], delta=[5.0, 6.0, 7.0])
    data = simulate_open_loop(arm, random_fourier(arm, seed=2), duration=14.0, rate=100.0,
                              sensor=SensorModel(torque_noise_std=0.3), seed=1)
    model = identify(arm, data, friction=friction, estimator=OLS(drop_above_percent=50))
    assert len(model.report["dropped"]) > 0
    save_model(model, tmp_path / "arm.yaml")
    loaded = load_model(tmp_path / "arm.yaml")
    assert_close(loaded.friction.k_v, [50.0, 60.0, 70.0])
    assert_close(loaded.predict(data.q, data.dq, data.ddq),
                 model.predict(data.q, data.dq, data.ddq), atol=1e-12)
    # a URDF robot (with a gravity of its own), loaded from another working directory
    urdf_robot, _ = random_urdf_robot(rng, 4, tmp_path)
    import dataclasses
    urdf_robot = dataclasses.replace(urdf_robot, gravity=np.array([0.0, -9.81, 0.0]))
    lower = np.where(np.isfinite(urdf_robot.limits.lower), urdf_robot.limits.lower, -1.0)
    upper = np.where(np.isfinite(urdf_robot.limits.upper), urdf_robot.limits.upper, 1.0)
    q = rng.uniform(lower, upper, size=(200, 4))
    urdf_model = identify_static(urdf_robot, _static_samples(urdf_robot, q),
                                 drop_joint1_gravity=False)
    save_model(urdf_model, tmp_path / "urdf.yaml")
    q3, dq3, ddq3 = rng.standard_normal((3, 5, 4))
    assert_close(load_model(tmp_path / "urdf.yaml").predict(q3, dq3, ddq3),
                 rnea(urdf_robot, q3, dq3, ddq3), atol=1e-9)


def _every_row(prepared: Dataset) -> Dataset:
    """``prepared`` without its dead band: every row counts in a fit, the sticking ones too
    (OLS's bias that IDIM-IV is for; prepare's dead band takes most of it away)."""
    return dataclasses.replace(prepared, metadata={
        key: value for key, value in prepared.metadata.items() if key != "dead_band"})


@pytest.mark.filterwarnings("ignore::dynid.identification.linear.idim.IVConvergenceWarning")
def test_iv_beats_ols_on_noisy_filtered_closed_loop_data():
    """Closed loop, encoder quantisation, velocity from position differences, torque noise;
    the regressor is built from filtered, differentiated measurements: OLS is biased (mostly
    friction), IDIM-IV (the simulated model's regressor as instruments) is not."""
    from dynid.data.preprocess import prepare
    from dynid.identification.linear.idim import identify_iv
    from dynid.simulate.twin import simulate_closed_loop

    friction = ViscousCoulomb(np.full(3, 0.5), np.full(3, 1.0), np.zeros(3))
    robot = load_robot("arm3").with_friction(friction)
    reference = random_fourier(robot, seed=3)
    sensor = SensorModel(torque_noise_std=0.2, position_resolution=2e-3,
                         velocity_from_positions=True)
    data = simulate_closed_loop(robot, reference, duration=14.0, rate=200.0,
                                natural_frequency=10.0, sensor=sensor, seed=1)
    prepared = prepare(data, cutoff=5.0)
    ready = _every_row(prepared)
    ols = identify(robot, ready)
    iv = identify_iv(robot, ready, reference, natural_frequency=10.0, iterations=3)
    truth = _truth(ols, robot)
    ols_error = np.abs(ols.coefficients - truth)
    iv_error = np.abs(iv.coefficients - truth)
    assert iv_error.max() < 0.5 * ols_error.max()
    assert np.linalg.norm(iv_error) < 0.6 * np.linalg.norm(ols_error)
    assert iv.report["method"] == "iv" and iv.report["iterations"] == 3
    # the dead band takes most of OLS's bias away (measured: 0.32 -> 0.039)
    banded = np.abs(identify(robot, prepared).coefficients - truth)
    assert banded.max() < 0.25 * ols_error.max()


def test_iv_that_does_not_converge_says_so():
    from dynid.data.preprocess import prepare
    from dynid.identification.linear.idim import IVConvergenceWarning, identify_iv
    from dynid.simulate.twin import simulate_closed_loop

    robot = load_robot("arm3")
    reference = random_fourier(robot, seed=3)
    data = simulate_closed_loop(robot, reference, duration=14.0, rate=200.0,
                                natural_frequency=10.0,
                                sensor=SensorModel(torque_noise_std=0.5,
                                                   position_resolution=2e-3,
                                                   velocity_from_positions=True))
    with pytest.warns(IVConvergenceWarning, match="did not converge in 1 iterations"):
        model = identify_iv(robot, prepare(data), reference, natural_frequency=10.0,
                            iterations=1, tolerance=1e-12)
    assert model.report["converged"] is False


@pytest.mark.filterwarnings("ignore::dynid.identification.linear.idim.IVConvergenceWarning")
def test_iv_on_two_closed_loop_logs_with_their_own_offsets():
    """Two closed-loop runs of different references, each with its own torque-sensor offsets:
    IDIM-IV on both at once (one reference per log) reads each log's offsets back, and its
    coefficients are closer to the truth than OLS on the same logs."""
    from dynid.data.preprocess import prepare
    from dynid.identification.linear.idim import identify_iv
    from dynid.simulate.twin import simulate_closed_loop

    friction = ViscousCoulomb(np.full(3, 0.5), np.full(3, 1.0), np.zeros(3))
    robot = load_robot("arm3").with_friction(friction)
    references = [random_fourier(robot, seed=3), random_fourier(robot, seed=4)]
    biases = [np.array([0.3, -0.2, 0.1]), np.array([-0.1, 0.25, -0.3])]
    logs = [_every_row(prepare(simulate_closed_loop(
        robot, path, duration=10.0, rate=200.0, natural_frequency=10.0, seed=k,
        sensor=SensorModel(torque_noise_std=0.2, position_resolution=2e-3,
                           velocity_from_positions=True, torque_bias=bias)), cutoff=5.0))
        for k, (path, bias) in enumerate(zip(references, biases, strict=True))]
    ols = identify(robot, logs)
    iv = identify_iv(robot, logs, references, natural_frequency=10.0, iterations=3)
    # the model's offset term is the logs' mean offset
    truth = _truth(ols, robot.with_friction(ViscousCoulomb(
        np.full(3, 0.5), np.full(3, 1.0), np.mean(biases, axis=0))))
    offsets = [row["offsets"] for row in iv.report["log_offsets"]]
    assert np.allclose(offsets, biases, atol=0.05)
    assert np.linalg.norm(iv.coefficients - truth) < 0.7 * np.linalg.norm(
        ols.coefficients - truth)
    assert len(iv.report["logs"]) == 2 and iv.report["offsets"] == "per-log"
    with pytest.raises(ValueError, match="one for all logs or one per log"):
        identify_iv(robot, logs, references[:1], natural_frequency=10.0)


class _HeldOutCurve:
    """A stand-in constrained problem whose held-out error is ``curve(weight)``."""

    def __init__(self, curve):
        self.curve = curve

    def solve(self, factor, weight, *, log_cholesky=True):
        return np.array([weight]), np.zeros(0), "optimal"

    def unknowns(self, parameters, linear):
        return np.array([np.sqrt(self.curve(parameters[0]))])


def test_prior_weight_auto_extends_its_grid_and_says_when_the_edge_wins():
    """Issue 22: `--prior-weight auto` chose the top of its grid (10) on 19 of 21 arms without
    a word. Now the grid grows by decades while its top wins, and a choice still at the top
    warns and is flagged."""
    from dynid.identification.constrained.cls import (
        AUTO_EXTENSION,
        AUTO_WEIGHTS,
        PriorWeightEdgeWarning,
        _auto_weight,
    )

    held = [np.array([[1.0, 0.0], [0.0, 0.0]])] * 4  # r = 1, z = 0, rho = 0: error = x^2
    # least at 1e3: found by extending the grid two decades, not at the edge
    curve = _HeldOutCurve(lambda w: 1.0 + (np.log10(w) - 3.0) ** 2)
    chosen, report = _auto_weight(curve, held, None)
    assert chosen == pytest.approx(1e3) and report["extended"] == 3
    assert report["at_edge"] is False
    # always falling: the extended top wins, with a warning that names the edge
    falling = _HeldOutCurve(lambda w: 1.0 / (1.0 + w))
    with pytest.warns(PriorWeightEdgeWarning, match="least at the largest weight tried"):
        chosen, report = _auto_weight(falling, held, None)
    assert chosen == pytest.approx(AUTO_WEIGHTS[-1] * 10.0 ** AUTO_EXTENSION)
    assert report["at_edge"] is True
    # an inner minimum: the grid as it was
    inner = _HeldOutCurve(lambda w: 1.0 + (np.log10(w) + 2.0) ** 2)
    chosen, report = _auto_weight(inner, held, None)
    assert chosen == pytest.approx(1e-2) and report["extended"] == 0
    assert report["weights"] == list(AUTO_WEIGHTS)


def test_identify_says_whether_the_estimate_is_a_body(tmp_path, capsys):
    """Issue 23: every estimate is checked for M(q) > 0 over sampled poses; one that is not a
    body says which command gives a consistent model."""
    import dataclasses
    import json

    from dynid.cli import main
    from dynid.cli.identify import _body_check, _body_line
    from dynid.data.io import write_dataset
    from dynid.evaluation import model_mass_matrix_check
    from dynid.identification.linear.idim import robot_model

    arm = load_robot("arm3")
    log = simulate_open_loop(arm, random_fourier(arm, seed=2), duration=4.0, rate=200.0)
    write_dataset(tmp_path / "log.csv", log)
    assert main(["identify", "arm3", str(tmp_path / "log.csv"), "--as-is"]) == 0
    assert "sampled poses (smallest eigenvalue" in capsys.readouterr().out
    assert main(["identify", "arm3", str(tmp_path / "log.csv"), "--as-is", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["mass_matrix"]["positive"] is True
    # an estimate whose M^ is negative everywhere: not a body, and the way out named
    model = robot_model(arm)
    negative = dataclasses.replace(model, coefficients=-model.coefficients)
    body = _body_check(negative)
    assert body == model_mass_matrix_check(negative, n_samples=body["n_samples"])
    assert not body["positive"] and body["positive_fraction"] == 0.0
    line = _body_line(body, type("Args", (), {"robot": "arm3"}))
    assert "NOT a body" in line and "--method cls3" in line and "dynid retrieve arm3" in line
