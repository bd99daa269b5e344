"""Iterative methods that say when they failed: `dynid identify` with a fit that diverged or
stopped before its tolerance exits with status 3 (``UNCONVERGED_STATUS``), says why on stderr
and writes no model, unless --keep-unconverged (then the model, `converged: false` and the
reason in its report); the Kalman filters' own divergence rules (a covariance that grows, an
estimate that is no body on the log's poses); SIGTERM ends a long EKF run between two chunks.

Truths differ from what the estimators are told: the robot file the fits start from has its
link parameters 15 % off the twin's that recorded the logs."""

from __future__ import annotations

import dataclasses
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import default_signals

from dynid.cli import main
from dynid.cli.identify import UNCONVERGED_STATUS
from dynid.data import write_dataset
from dynid.excitation import save_trajectory
from dynid.excitation.optimize import random_fourier
from dynid.excitation.trajectory import FourierTrajectory
from dynid.friction.models import ViscousCoulomb
from dynid.identification.recursive.kalman import (
    KalmanDivergedError,
    KalmanFilter,
    identify_kalman,
    log_poses_check,
)
from dynid.model import load_model
from dynid.robot import load_robot, save_robot
from dynid.simulate import simulate_closed_loop, simulate_open_loop

DYNID = str(Path(sys.executable).parent / "dynid")
FRICTION = ViscousCoulomb(np.array([0.5, 0.3, 0.1]), np.array([1.0, 0.5, 0.8]),
                          np.array([0.1, -0.1, 0.05]))


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    """arm3 with linear friction tracking a reference bent from its upright pose in closed
    loop (computed torque, 20 rad/s), 1 s at 1 kHz; the robot file given to the fits: its link
    parameters with 15 % errors (where the EKF's first corrections overshoot into an
    indefinite M(q): ``test_recursive``)."""
    robot = load_robot("arm3").with_friction(FRICTION)
    unit = random_fourier(robot, seed=3, omega_f=np.pi, harmonics=3)
    reference = FourierTrajectory(unit.a, unit.b, [0.0, 0.9, -1.2], unit.omega_f)
    log = simulate_closed_loop(robot, reference, duration=1.0, rate=1000.0,
                               natural_frequency=20.0)
    folder = tmp_path_factory.mktemp("twin")
    write_dataset(folder / "log.csv", log)
    save_trajectory(folder / "traj.csv", reference, duration=1.0, rate=1000.0,
                    allow_moving_ends=True)
    errors = np.random.default_rng(0).standard_normal((3, 10))
    for name, size in (("robot.yaml", 0.15), ("near.yaml", 0.03)):  # the second: a plant
        save_robot(dataclasses.replace(robot, parameters=robot.parameters * (1 + size * errors),
                                       name="arm3-off"), folder / name)
    return robot, log, folder


def _identify(capsys, folder, *argv, robot: str = "robot.yaml") -> tuple[int, str, str]:
    """The status, stderr and stdout of `dynid identify ROBOT LOG argv`."""
    # --delay 0: the log as simulated (a lag estimate would realign its states)
    status = main(["identify", str(folder / robot), str(folder / "log.csv"), "--delay", "0",
                   *argv])
    captured = capsys.readouterr()
    return status, captured.err, captured.out


def test_a_diverging_ekf_exits_non_zero_and_writes_no_model(capsys, twin, tmp_path):
    _, _, folder = twin
    out = tmp_path / "ekf.yaml"
    status, err, _ = _identify(capsys, folder, "--method", "ekf", "-o", str(out))
    assert status == UNCONVERGED_STATUS == 3, err
    assert "--method ekf did not converge: diverged" in err and "positive definiteness" in err
    assert "NOT written (--keep-unconverged writes it)" in err
    assert not out.exists() and list(tmp_path.iterdir()) == []
    status, err, _ = _identify(capsys, folder, "--method", "ekf", "-o", str(out),
                               "--keep-unconverged", "--json")
    assert status == UNCONVERGED_STATUS and "written all the same" in err
    report = load_model(out).report
    assert report["converged"] is False and report["convergence"].startswith("diverged")


def test_a_budget_stopped_nls_exits_non_zero_and_writes_no_model(capsys, twin, tmp_path):
    _, _, folder = twin
    out, params = tmp_path / "nls.yaml", tmp_path / "params.yaml"
    argv = ["--method", "nls", "--friction", "viscous-coulomb", "--max-iterations", "1",
            "-o", str(out), "--parameters-output", str(params)]
    status, err, out_text = _identify(capsys, folder, *argv, "--json")
    assert status == UNCONVERGED_STATUS, err
    assert "--method nls did not converge: stopped: the budget of 1 iterations" in err
    assert not out.exists() and not params.exists()
    payload = json.loads(out_text)  # the fit's figures all the same
    assert payload["model_file"] is None and payload["nls"]["parameters_file"] is None
    assert payload["nls"]["success"] is False and payload["converged"] is False
    status, err, _ = _identify(capsys, folder, *argv, "--keep-unconverged")
    assert status == UNCONVERGED_STATUS and out.exists() and params.exists()
    assert load_model(out).report["converged"] is False
    # the same fit with its budget: converged, status 0, the model written with the flag
    out.unlink()
    status, err, _ = _identify(capsys, folder, "--method", "nls", "--friction",
                               "viscous-coulomb", "-o", str(out))
    assert status == 0, err
    assert load_model(out).report["converged"] is True


def test_a_budget_stopped_didim_exits_non_zero_and_writes_no_model(capsys, twin, tmp_path):
    _, _, folder = twin
    out = tmp_path / "didim.yaml"
    argv = ["--method", "didim", "--reference", str(folder / "traj.yaml"),
            "--natural-frequency", "20", "-o", str(out)]
    status, err, _ = _identify(capsys, folder, *argv, "--max-iterations", "1",
                               robot="near.yaml")
    assert status == UNCONVERGED_STATUS, err
    assert "--method didim did not converge: stopped after max_iterations = 1" in err
    assert not out.exists()
    status, err, _ = _identify(capsys, folder, *argv, "--max-iterations", "1",
                               "--keep-unconverged", robot="near.yaml")
    report = load_model(out).report
    assert status == UNCONVERGED_STATUS and report["converged"] is False
    assert report["convergence"] == "stopped after max_iterations = 1"


def test_the_filter_checks_its_estimate_on_the_log_poses(twin):
    """The filter's estimate is checked on the log's own poses: the UKF's (from the twin's
    parameters, velocities to 1e-3 rad/s) is a body there, its negation on none of them."""
    robot, log, _ = twin
    estimate = identify_kalman(robot, log.select(slice(0, 300)), method="ukf",
                               velocity_std=1e-3)
    assert estimate.converged, estimate.status
    assert estimate.model.report["mass_matrix_on_log_poses"]["positive"]
    broken = dataclasses.replace(estimate.model, coefficients=-estimate.model.coefficients)
    check = log_poses_check(broken, [log])
    assert not check["positive"] and check["positive_fraction"] == 0.0
    assert check["n_samples"] == 1000  # spread over the log's 1001 samples


def test_a_growing_covariance_is_a_divergence(twin):
    """Without drift the parameters' covariance can only shrink; a filter whose variance grew
    past ``COVARIANCE_GROWTH`` times its start's (here: its start made tiny behind its back)
    says so, with the parameter, and keeps the samples before."""
    robot, log, _ = twin
    flt = KalmanFilter(robot, method="ekf", velocity_std=1e-3)
    flt.update(log.q[:50], log.dq[:50], None, log.tau[:50])
    flt._limit = flt._limit * 1e-12  # as if the start's std had been 1e-6 of what it was
    with pytest.raises(KalmanDivergedError, match=r"the covariance diverged by sample .*"
                                                  r"times its start's"):
        flt.update(log.q[50:100], log.dq[50:100], None, log.tau[50:100])


def _pump(stream, lines: queue.Queue) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


# waits that only catch a hang; no outcome depends on this machine's speed
STARTED_WITHIN_S = 600
STOPPED_WITHIN_S = 120


def test_sigterm_ends_a_long_ekf_run(tmp_path):
    """The filter runs in chunks of about 0.1 s: SIGTERM after its first progress line (2 s
    in, or the first chunk when compiling) ends it with status 143 long before the log's end
    (the last progress line far from 100 %), no model and no temporary file left."""
    n = 7  # the Panda with viscous friction (the filter's own columns), an open-loop log
    robot = load_robot("panda").with_friction(ViscousCoulomb(np.full(n, 0.2), np.zeros(n),
                                                             np.zeros(n)))
    save_robot(robot, tmp_path / "panda.yaml")
    rng = np.random.default_rng(2)
    trajectory = FourierTrajectory(a=0.2 * rng.standard_normal((n, 3)),
                                   b=0.2 * rng.standard_normal((n, 3)), q0=np.zeros(n),
                                   omega_f=2 * np.pi / 10.0)
    log = simulate_open_loop(robot, trajectory, duration=60.0 - 1e-3, rate=1000.0)
    write_dataset(tmp_path / "long.npz", log)
    work = tmp_path / "work"
    work.mkdir()
    process = subprocess.Popen(
        [DYNID, "identify", str(tmp_path / "panda.yaml"), str(tmp_path / "long.npz"),
         "--method", "ekf",
         "-o", "model.yaml"], cwd=work, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
        text=True, start_new_session=True, preexec_fn=default_signals)
    lines: queue.Queue = queue.Queue()
    reader = threading.Thread(target=_pump, args=(process.stderr, lines), daemon=True)
    reader.start()
    err: list[str] = []
    progress = re.compile(r"^ekf: samples filtered: (\d+)/(\d+)")
    try:
        while not (err and progress.search(err[-1])):
            line = lines.get(timeout=STARTED_WITHIN_S)
            assert line is not None, f"finished before the filter began: {''.join(err)}"
            err.append(line)
    except queue.Empty:
        os.killpg(process.pid, signal.SIGKILL)
        pytest.fail("no progress line from the EKF (a hang)")
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=STOPPED_WITHIN_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        pytest.fail(f"the EKF did not stop within {STOPPED_WITHIN_S} s of SIGTERM")
    reader.join()
    err.extend(line for line in iter(lines.get, None))
    text = "".join(err)
    assert process.returncode == 128 + signal.SIGTERM, text
    assert text.strip().splitlines()[-1] == "dynid: terminated (SIGTERM)", text
    counts = [(int(m.group(1)), int(m.group(2))) for m in map(progress.search, err) if m]
    done, total = counts[-1]
    assert total == log.n_samples and done < 0.5 * total, text
    assert list(work.iterdir()) == [], "a model or a temporary file left"
