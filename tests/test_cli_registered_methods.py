"""`dynid identify --method` with the methods the registry adds (robust, errors in variables,
penalised, and their consistent forms): each through the one contract, its options checked
against the method, its files written together or not at all."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dynid.cli import main
from dynid.data import write_dataset
from dynid.excitation import random_fourier
from dynid.model import check_consistency, load_model
from dynid.robot import load_robot
from dynid.simulate import SensorModel, simulate_open_loop


@pytest.fixture(scope="module")
def spiky_log(tmp_path_factory):
    """arm3 with 0.02 N m noise and 3 % spikes of 2 N m in its torques."""
    robot = load_robot("arm3")
    log = simulate_open_loop(robot, random_fourier(robot, seed=5), duration=6.0, rate=250.0,
                             sensor=SensorModel(torque_noise_std=0.02), seed=5)
    clean = simulate_open_loop(robot, random_fourier(robot, seed=5), duration=6.0,
                               rate=250.0).tau  # the noise-free torques
    rng = np.random.default_rng(5)
    tau = log.tau.copy()
    spikes = rng.random(tau.shape) < 0.03
    tau[spikes] += 2.0 * rng.choice([-1.0, 1.0], size=spikes.sum())
    path = tmp_path_factory.mktemp("spiky") / "log.csv"
    write_dataset(path, log.__class__(t=log.t, q=log.q, dq=log.dq, tau=tau, ddq=log.ddq))
    return robot, path, log, clean


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_robust_method_resists_spikes_that_move_ols(capsys, tmp_path, spiky_log):
    _, path, log, clean = spiky_log
    errors, kinds = {}, {}
    for method in ("ols", "irls-tukey"):
        out = tmp_path / f"{method}.yaml"
        kinds[method] = _json(capsys, ["identify", "arm3", str(path), "--method", method,
                                       "--json", "-o", str(out)])["std_kind"]
        predicted = load_model(out).predict(log.q, log.dq, log.ddq)
        errors[method] = np.sqrt(np.mean((predicted - clean) ** 2))
    assert errors["irls-tukey"] < 0.3 * errors["ols"], errors
    # what each std is, in the JSON and the model file (tests/test_sigma_coverage.py)
    assert kinds == {"ols": "covariance", "irls-tukey": "lower bound"}
    assert load_model(tmp_path / "irls-tukey.yaml").std_kind == "lower bound"


def test_the_summary_says_what_the_std_is(capsys, spiky_log):
    _, path, _, _ = spiky_log
    notes = {"tls": "std: the estimate's error covariance: it covers",
             "ridge": "std: a lower bound on the error: its formula leaves out"}
    for method, note in notes.items():
        assert main(["identify", "arm3", str(path), "--method", method]) == 0
        assert note in capsys.readouterr().out, method


def test_consistent_penalised_method_writes_a_consistent_body(capsys, tmp_path, spiky_log):
    _, path, _, _ = spiky_log
    params = tmp_path / "params.yaml"
    payload = _json(capsys, ["identify", "arm3", str(path), "--method", "pc-ridge",
                             "--alpha", "1e-6", "--json", "-o", str(tmp_path / "m.yaml"),
                             "--parameters-output", str(params)])
    assert payload["estimate"]["consistent"] and payload["estimate"]["converged"]
    assert payload["estimate"]["family"] == "constrained"
    assert check_consistency(load_robot(params).parameters).consistent


@pytest.mark.parametrize(("argv", "message"), [
    (["--method", "tls", "--alpha", "1"], "`--alpha` is for --method ridge|elastic-net|"
                                          "pc-ridge|pc-elastic-net, not tls"),
    (["--method", "ridge", "--l1-ratio", "0.5"], "`--l1-ratio` is for --method elastic-net|"
                                                 "pc-elastic-net, not ridge"),
    (["--method", "ml"], "`--method ml` needs the noise it assumes"),
    (["--method", "ml", "--regressor-noise", "1e-3", "--noise", "0.1", "0.1"],
     "`--method ml` needs the noise it assumes"),
    (["--method", "irls-huber", "--bootstrap", "10"], "`--bootstrap` refits ols, wls"),
    (["--method", "tls", "--parameters-output", "p.yaml"],
     "`--parameters-output` is for --method"),
])
def test_registered_method_options_are_checked(capsys, tmp_path, spiky_log, argv, message):
    _, path, _, _ = spiky_log
    out = tmp_path / "never.yaml"
    assert main(["identify", "arm3", str(path), *argv, "-o", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def _loop_log(tmp_path_factory, name: str, **law):
    """arm3 tracking an excitation in closed loop (``law``: the twin's keywords), 4 s at 1 kHz,
    0.05 N m of torque noise; the log and its reference written in a folder ``name``."""
    from dynid.excitation import save_trajectory
    from dynid.simulate import simulate_closed_loop

    robot = load_robot("arm3")
    reference = random_fourier(robot, seed=6)
    log = simulate_closed_loop(robot, reference, duration=4.0,
                               sensor=SensorModel(torque_noise_std=0.05), seed=6, **law)
    folder = tmp_path_factory.mktemp(name)
    write_dataset(folder / "log.csv", log)
    save_trajectory(folder / "traj.csv", reference, duration=4.0, rate=1000.0,
                    allow_moving_ends=True)
    return folder, log


@pytest.fixture(scope="module")
def closed_loop_log(tmp_path_factory):
    """Under computed torque (w = 30 rad/s)."""
    return _loop_log(tmp_path_factory, "loop", natural_frequency=30.0)


def test_didim_reads_the_log_as_recorded(capsys, closed_loop_log):
    folder, log = closed_loop_log
    payload = _json(capsys, ["identify", "arm3", str(folder / "log.csv"), "--method", "didim",
                             "--reference", str(folder / "traj.yaml"), "--natural-frequency",
                             "30", "--json"])
    assert payload["estimate"]["family"] == "simulation" and payload["estimate"]["converged"]
    assert payload["preprocessing"] == []  # no filter, no trim: one sample per period
    assert len(payload["rmse"]) == log.n_joints


@pytest.mark.parametrize(("argv", "message"), [
    (["--cutoff", "10"], "re-simulates the closed loop on the log as it was recorded"),
    (["--trim", "0.1"], "it excludes --trim"),
    (["--stiffness", "100", "--damping", "10", "--natural-frequency", "30"],
     "`--natural-frequency` sets a computed-torque controller"),
    (["--controller", "none"], "`--controller none` is a pure PD impedance"),
    (["--rotor-inertia"], "leave out --rotor-inertia"),
    (["--natural-frequency", "30", "30"], "`--natural-frequency` takes one value or one per "
                                          "joint (3 for"),
    (["--controller", "nowhere.yaml", "--natural-frequency", "30"], "`--controller`: "),
])
def test_closed_loop_options_are_checked(capsys, closed_loop_log, argv, message):
    folder, _ = closed_loop_log
    out = folder / "never.yaml"
    assert main(["identify", "arm3", str(folder / "log.csv"), "--method", "cloe",
                 "--reference", str(folder / "traj.yaml"), *argv, "-o", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


@pytest.fixture(scope="module")
def pd_loop_log(tmp_path_factory):
    """Under a pure PD loop (no model: BIRDy's TX40 loop)."""
    from dynid.simulate import Controller

    return _loop_log(tmp_path_factory, "pd", controller=Controller.impedance(400.0, 40.0))


def test_iv_and_simulate_take_the_one_controller_option_set(capsys, pd_loop_log, tmp_path):
    """IV re-simulates the loop that recorded the logs, whatever its law: a pure PD loop
    (--controller none with --stiffness/--damping) on a log resampled to 200 Hz
    (--control-rate: the loop ran at 1 kHz); `dynid simulate` reads the same options."""
    folder, _ = pd_loop_log
    loop = ["--controller", "none", "--stiffness", "400", "--damping", "40"]
    payload = _json(capsys, ["identify", "arm3", str(folder / "log.csv"), "--method", "iv",
                             "--reference", str(folder / "traj.yaml"), *loop, "--resample",
                             "200", "--control-rate", "1000", "--json"])
    assert payload["method"] == "iv" and payload["iterations"] >= 1
    assert payload["first_instruments"] == "ols" and payload["relative_error_percent"] < 5.0
    capsys.readouterr()
    out = tmp_path / "pd.csv"
    assert main(["simulate", "arm3", str(folder / "traj.yaml"), "-o", str(out), "--closed-loop",
                 *loop, "--duration", "1", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert "joint impedance" in summary["control_law"] and summary["controller"] == "none (PD)"
    assert main(["simulate", "arm3", str(folder / "traj.yaml"), "-o", str(tmp_path / "x.csv"),
                 "--closed-loop", "--controller", "none", "--duration", "1"]) == 2
    assert "pure PD impedance" in capsys.readouterr().err


@pytest.mark.parametrize("method", [["--method", "ml", "--regressor-noise", "1e-3", "--noise",
                                     "0.5"], ["--method", "tls"]])
def test_errors_in_variables_on_a_joint_that_does_not_move_say_so(capsys, tmp_path, method):
    """Issue 31: ML said "The leading minor of order 4 of B is not positive definite" (scipy's
    eigh on a singular [W tau]^T [W tau]): the same named error as least squares, with the
    method."""
    from dynid.excitation import FourierTrajectory

    robot = load_robot("arm3")
    trajectory = random_fourier(robot, seed=1)
    a, b = trajectory.a.copy(), trajectory.b.copy()
    a[2], b[2] = 0.0, 0.0  # joint 3 stays at q0
    log = simulate_open_loop(robot, FourierTrajectory(a, b, trajectory.q0, trajectory.omega_f),
                             duration=6.0, rate=100.0, sensor=SensorModel(torque_noise_std=0.3),
                             seed=1)
    write_dataset(tmp_path / "still.csv", log)
    # the fixed structure's count (auto leaves out terms the data do not support first)
    assert main(["identify", "arm3", str(tmp_path / "still.csv"), *method,
                 "--structure", "fixed"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("dynid: error: the data determine only 21 of 24 unknowns; not "
                            "excited: tau_s3, tau_sc3, tau_v3 (joint 3 does not move); "
                            f"`{method[1]}` (`--method {method[1]}`) needs them all"), error
