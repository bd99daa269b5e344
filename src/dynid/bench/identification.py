"""The identification suite (``dynid bench --suite identification``): OLS from 10^5 twin samples,
reverse engineering from M(q), g(q) at 1010 poses, and drive gains from motor currents."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from dynid.bench._timing import best_time, timed, twin_log
from dynid.bench.dynamics import pinocchio_loops
from dynid.robot import load_robot, to_pinocchio


def run(*, robot: str = "panda", n_samples: int = 100_000,
        n_poses: int = 1010, repeat: int = 3, seed: int = 0,
        progress: Callable[[str], None] | None = None) -> dict:
    """Wall time and peak memory of (a) OLS identification from ``n_samples`` twin samples
    (regressor + friction columns + base reduction + solve) and (b) reverse engineering from
    M(q), g(q) at ``n_poses`` random poses."""
    from dynid.data.dataset import StaticData
    from dynid.dynamics import gravity_torque, mass_matrix
    from dynid.identification.linear.idim import identify
    from dynid.identification.linear.reverse_engineering import identify_static

    say = progress or (lambda _line: None)
    model_robot = load_robot(robot)
    data = twin_log(model_robot, n_samples, seed)
    identify(model_robot, data.select(slice(0, 20_000)))  # compile and warm up
    ols_seconds, ols_memory = timed(lambda: identify(model_robot, data), repeat)
    say(f"OLS identification, {data.n_samples} samples: {ols_seconds:.2f} s, "
        f"peak {ols_memory:.0f} MB")
    rng = np.random.default_rng(seed)
    q = rng.uniform(model_robot.limits.lower, model_robot.limits.upper,
                    size=(n_poses, model_robot.n_joints))
    samples = StaticData(q=q, M=mass_matrix(model_robot, q), g=gravity_torque(model_robot, q))
    static_seconds, static_memory = timed(lambda: identify_static(model_robot, samples), repeat)
    say(f"reverse engineering, {n_poses} poses: {static_seconds:.2f} s, "
        f"peak {static_memory:.0f} MB")
    gains = _drive_gains_bench(model_robot, n_samples // 3, repeat, seed)
    say(f"drive gains from motor currents, 3 logs of {n_samples // 3} samples: "
        f"{gains['drive_gains_seconds']:.2f} s (pinocchio's regressor alone on the same samples: "
        f"{gains['drive_gains_pinocchio_regressor_seconds']:.2f} s)")
    return {
        "robot": model_robot.name,
        "identify_n_samples": data.n_samples,
        "identify_seconds": ols_seconds,
        "identify_peak_memory_mb": ols_memory,
        "identify_static_n_poses": n_poses,
        "identify_static_seconds": static_seconds,
        "identify_static_peak_memory_mb": static_memory,
        **gains,
    }


def current_logs(model_robot, n_samples: int, seed: int, rate: float = 1000.0):
    """The twin's motor-current logs of the drive-gain benches: two of the arm and one with a
    3 kg payload on the last link, ``n_samples`` each at ``rate``, 0.1 N m torque noise and
    offsets of up to 0.5 N m per log, gains drawn in 0.5-2 N m/A; ``(logs, payload log,
    KnownPayload, true gains)``."""
    from dynid.excitation.optimize import random_fourier
    from dynid.identification.drive_gains import KnownPayload
    from dynid.simulate.twin import SensorModel, simulate_open_loop, with_payload

    n = model_robot.n_joints
    rng = np.random.default_rng(seed)
    gains = rng.uniform(0.5, 2.0, n)
    mass, com = 3.0, np.array([0.05, 0.0, 0.04])
    loaded = with_payload(model_robot, mass, com)
    logs = [simulate_open_loop(
        robot, random_fourier(robot, seed=seed + k), duration=(n_samples - 1) / rate,
        rate=rate, seed=seed + k, sensor=SensorModel(
            torque_noise_std=0.1, torque_bias=rng.uniform(-0.5, 0.5, n), drive_gains=gains))
        for k, robot in enumerate((model_robot, model_robot, loaded))]
    return logs[:2], logs[2], KnownPayload(mass, com), gains


def _linear_friction(robot):
    """``robot`` with its friction as viscous + Coulomb + offset, least squares to its own
    model over +-2 rad/s: a twin whose friction the linear methods' columns hold exactly (a
    sigmoid twin fitted with linear columns biases the gains by its misfit: about 1 % on the
    Panda)."""
    from dynid.friction import ViscousCoulomb
    from dynid.friction.fit import friction_line

    speeds = np.repeat(np.linspace(-2.0, 2.0, 401)[:, None], robot.n_joints, axis=1)
    fv, fc, fo = friction_line(speeds, robot.friction.torque(speeds)).T
    return robot.with_friction(ViscousCoulomb(fv, fc, fo))


def consistent_gains_bench(robot: str = "panda", *, method: str = "cls3",
                           n_samples: int = 6_000, seed: int = 0) -> dict:
    """Drive gains inside a consistent method (``method``) from the twin's current logs
    (``current_logs`` at 200 Hz; the robot's friction made linear, ``_linear_friction``): the
    largest relative gain error, the time, and whether the parameters are consistent."""
    from dynid.identification import identify_constrained

    model_robot = _linear_friction(load_robot(robot))
    logs, payload_log, payload, gains = current_logs(model_robot, n_samples, seed, rate=200.0)
    start = time.perf_counter()
    result = identify_constrained(model_robot, logs, method=method, payload_data=payload_log,
                                  payload=payload)
    seconds = time.perf_counter() - start
    return {"gains_method": method, "gains_n_samples": 3 * n_samples,
            "gains_max_relative_error": float(np.abs(result.model.drive_gains / gains - 1)
                                              .max()),
            "gains_seconds": seconds, "gains_consistent": result.consistency.consistent}


def _drive_gains_bench(model_robot, n_samples: int, repeat: int, seed: int) -> dict:
    """The drive-gains fit (Gautier & Briot) on three current logs of ``n_samples`` — two of
    the arm, one with a 3 kg payload — beside pinocchio's regressor on the same samples in a
    Python loop (what the fit's regressor would cost through pinocchio)."""
    from dynid.identification.drive_gains import identify_drive_gains

    arm_logs, payload_log, payload, gains = current_logs(model_robot, n_samples, seed)
    logs = [*arm_logs, payload_log]

    def fit():
        return identify_drive_gains(model_robot, logs[:2], payload_data=logs[2],
                                    payload=payload)

    error = float(np.abs(fit().drive_gains / gains - 1).max())  # also compiles and warms up
    seconds = best_time(fit, repeat)
    model = to_pinocchio(model_robot)
    loops = [pinocchio_loops(model, log.q, log.dq, log.ddq)[0] for log in logs]
    theirs = best_time(lambda: [loop() for loop in loops], 1)
    return {"drive_gains_n_samples": 3 * n_samples, "drive_gains_seconds": seconds,
            "drive_gains_max_relative_error": error,
            "drive_gains_pinocchio_regressor_seconds": theirs}


def summary(result: dict) -> str:
    return (
        f"OLS identification of {result['robot']}, {result['identify_n_samples']} samples: "
        f"{result['identify_seconds']:.2f} s, peak {result['identify_peak_memory_mb']:.0f} MB\n"
        f"reverse engineering from M, g, {result['identify_static_n_poses']} poses: "
        f"{result['identify_static_seconds']:.2f} s, "
        f"peak {result['identify_static_peak_memory_mb']:.0f} MB\n"
        f"drive gains from motor currents, {result['drive_gains_n_samples']} samples in 3 logs: "
        f"{result['drive_gains_seconds']:.2f} s, gains within "
        f"{100 * result['drive_gains_max_relative_error']:.2f} % (pinocchio's regressor alone: "
        f"{result['drive_gains_pinocchio_regressor_seconds']:.2f} s)"
    )
