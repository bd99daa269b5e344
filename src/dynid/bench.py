"""Benchmarks: dynid's batched regressor, RNEA and forward dynamics against pinocchio called in
a Python loop, and the wall time of the identification, consistency, pipeline, comparison and
demo steps.

Both sides of the dynamics bench produce the same arrays (``(N, n, 10 n)`` regressor, ``(N, n)``
torques or accelerations) from the same random states on the same machine in one run; times
are the best of ``repeat`` runs.
"""

from __future__ import annotations

import os
import platform
import time
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pinocchio as pin

from dynid.dynamics import forward_dynamics, regressor, rnea
from dynid.robot import load_robot, to_pinocchio

__all__ = [
    "DEFAULT_REPEAT",
    "DEFAULT_SIZES",
    "format_bench",
    "format_compare",
    "format_consistency",
    "format_identification",
    "format_pipeline",
    "run_bench",
    "run_compare_bench",
    "run_consistency_bench",
    "run_identification_bench",
    "run_pipeline_bench",
]

DEFAULT_SIZES = (1_000, 10_000, 100_000)
DEFAULT_REPEAT = 5


def _best(function: Callable[[], object], repeat: int) -> float:
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def _pinocchio_loops(model: pin.Model, q, dq, ddq):
    """Pinocchio's regressor, RNEA and ABA per sample, stored as they come (pinocchio's
    order; the ABA reads ``ddq`` as the joint torques)."""
    data = model.createData()
    n_samples = q.shape[0]

    def regressor_loop():
        out = np.empty((n_samples, q.shape[1], 10 * q.shape[1]))
        for k in range(n_samples):
            out[k] = pin.computeJointTorqueRegressor(model, data, q[k], dq[k], ddq[k])
        return out

    def rnea_loop():
        out = np.empty_like(q)
        for k in range(n_samples):
            out[k] = pin.rnea(model, data, q[k], dq[k], ddq[k])
        return out

    def aba_loop():
        out = np.empty_like(q)
        for k in range(n_samples):
            out[k] = pin.aba(model, data, q[k], dq[k], ddq[k])
        return out

    return regressor_loop, rnea_loop, aba_loop


def run_bench(*, robot: str = "panda", sizes: Sequence[int] = DEFAULT_SIZES,
              repeat: int = DEFAULT_REPEAT, seed: int = 0,
              progress: Callable[[str], None] | None = None) -> dict:
    """Microseconds per sample for both implementations at each size; the largest size's
    figures are repeated at the top level of the result."""
    if not sizes or any(int(s) < 1 for s in sizes):
        raise ValueError(f"`sizes` must be positive sample counts, got {sizes}")
    if repeat < 1:
        raise ValueError(f"`repeat` must be >= 1, got {repeat}")
    say = progress or (lambda _line: None)
    model_robot = load_robot(robot)
    model = to_pinocchio(model_robot)
    rng = np.random.default_rng(seed)
    n = model_robot.n_joints
    warm = rng.standard_normal((3, 8, n))
    regressor(model_robot, *warm)
    rnea(model_robot, *warm)
    forward_dynamics(model_robot, *warm)
    rows = []
    for size in sorted(int(s) for s in sizes):
        q, dq, ddq = rng.standard_normal((3, size, n))
        regressor_loop, rnea_loop, aba_loop = _pinocchio_loops(model, q, dq, ddq)
        # both sides allocate their output in every timed call, as a user's call would
        ours_regressor = _best(lambda q=q, dq=dq, ddq=ddq: regressor(model_robot, q, dq, ddq),
                               repeat)
        ours_rnea = _best(lambda q=q, dq=dq, ddq=ddq: rnea(model_robot, q, dq, ddq), repeat)
        theirs_regressor = _best(regressor_loop, repeat)
        theirs_rnea = _best(rnea_loop, repeat)
        # forward dynamics with the same arrays, ddq read as torques
        ours_aba = _best(lambda q=q, dq=dq, tau=ddq: forward_dynamics(model_robot, q, dq, tau),
                         repeat)
        theirs_aba = _best(aba_loop, repeat)
        tracemalloc.start()
        regressor(model_robot, q, dq, ddq)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        row = {
            "n_samples": size,
            "regressor_us_per_sample": 1e6 * ours_regressor / size,
            "pinocchio_regressor_us_per_sample": 1e6 * theirs_regressor / size,
            "regressor_speedup": theirs_regressor / ours_regressor,
            "rnea_us_per_sample": 1e6 * ours_rnea / size,
            "pinocchio_rnea_us_per_sample": 1e6 * theirs_rnea / size,
            "rnea_speedup": theirs_rnea / ours_rnea,
            "forward_dynamics_us_per_sample": 1e6 * ours_aba / size,
            "pinocchio_aba_us_per_sample": 1e6 * theirs_aba / size,
            "forward_dynamics_speedup": theirs_aba / ours_aba,
            "regressor_peak_memory_mb": peak / 2**20,
        }
        rows.append(row)
        say(format_row(row))
    return {
        "robot": model_robot.name,
        "repeat": repeat,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version(), "pinocchio": pin.__version__},
        **rows[-1],
        "by_size": rows,
    }


def format_row(row: dict) -> str:
    return (
        f"N = {row['n_samples']:>7d}  regressor {row['regressor_us_per_sample']:7.3f} us/sample "
        f"(pinocchio {row['pinocchio_regressor_us_per_sample']:6.3f}, "
        f"x{row['regressor_speedup']:.1f})  rnea {row['rnea_us_per_sample']:7.3f} us/sample "
        f"(pinocchio {row['pinocchio_rnea_us_per_sample']:6.3f}, x{row['rnea_speedup']:.1f})  "
        f"forward dynamics {row['forward_dynamics_us_per_sample']:7.3f} us/sample "
        f"(pinocchio aba {row['pinocchio_aba_us_per_sample']:6.3f}, "
        f"x{row['forward_dynamics_speedup']:.1f})  "
        f"regressor memory {row['regressor_peak_memory_mb']:.0f} MB"
    )


def format_bench(result: dict) -> str:
    head = (f"dynid bench: {result['robot']}, best of {result['repeat']}, "
            f"{result['machine']['cpus']} CPUs, pinocchio {result['machine']['pinocchio']} "
            "called in a Python loop")
    return "\n".join([head, *(format_row(row) for row in result["by_size"])])


def _timed(function: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Best wall time over ``repeat`` runs, and the peak traced memory of one more run [MB]."""
    seconds = _best(function, repeat)
    tracemalloc.start()
    function()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return seconds, peak / 2**20


def _twin_log(model_robot, n_samples: int, seed: int):
    """``n_samples`` of the twin at 1 kHz on a random Fourier trajectory, 0.1 N m noise."""
    from dynid.excitation.optimize import random_fourier
    from dynid.simulate.twin import SensorModel, simulate_open_loop

    return simulate_open_loop(model_robot, random_fourier(model_robot, seed=seed),
                              duration=(n_samples - 1) / 1000.0, rate=1000.0,
                              sensor=SensorModel(torque_noise_std=0.1), seed=seed)


def run_identification_bench(*, robot: str = "panda", n_samples: int = 100_000,
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
    data = _twin_log(model_robot, n_samples, seed)
    identify(model_robot, data.select(slice(0, 20_000)))  # compile and warm up
    ols_seconds, ols_memory = _timed(lambda: identify(model_robot, data), repeat)
    say(f"OLS identification, {data.n_samples} samples: {ols_seconds:.2f} s, "
        f"peak {ols_memory:.0f} MB")
    rng = np.random.default_rng(seed)
    q = rng.uniform(model_robot.limits.lower, model_robot.limits.upper,
                    size=(n_poses, model_robot.n_joints))
    samples = StaticData(q=q, M=mass_matrix(model_robot, q), g=gravity_torque(model_robot, q))
    static_seconds, static_memory = _timed(lambda: identify_static(model_robot, samples), repeat)
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
    seconds = _best(fit, repeat)
    model = to_pinocchio(model_robot)
    loops = [_pinocchio_loops(model, log.q, log.dq, log.ddq)[0] for log in logs]
    theirs = _best(lambda: [loop() for loop in loops], 1)
    return {"drive_gains_n_samples": 3 * n_samples, "drive_gains_seconds": seconds,
            "drive_gains_max_relative_error": error,
            "drive_gains_pinocchio_regressor_seconds": theirs}


def format_identification(result: dict) -> str:
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


def run_pipeline_bench(*, robot: str = "panda", n_samples: int = 1_000_000, seed: int = 0,
                       progress: Callable[[str], None] | None = None) -> dict:
    """Wall time of (a) the excitation design of the issue's target (10 harmonics, 20 s,
    100 Hz grid, criterion cond) and (b) preprocessing ``n_samples`` of an irregular 7-joint
    log (resample, 4th-order Butterworth, differentiate, trim)."""
    from dynid.data.dataset import Dataset
    from dynid.data.preprocess import prepare
    from dynid.excitation.optimize import optimize_excitation

    say = progress or (lambda _line: None)
    model_robot = load_robot(robot)
    start = time.perf_counter()
    result = optimize_excitation(model_robot, harmonics=10, period=20.0, rate=100.0, seed=seed)
    excite_seconds = time.perf_counter() - start
    say(f"excitation design: cond {result.start_value:.4g} -> {result.condition_number:.4g} "
        f"in {excite_seconds:.1f} s")
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.uniform(0.0007, 0.0013, n_samples))
    signal = np.sin(np.outer(t, np.arange(1, 8))) + 1e-3 * rng.standard_normal((n_samples, 7))
    log = Dataset(t=t, q=signal, dq=signal, tau=signal)
    start = time.perf_counter()
    prepare(log)
    preprocess_seconds = time.perf_counter() - start
    say(f"preprocessing {n_samples} samples: {preprocess_seconds:.2f} s")
    return {"excitation_seconds": excite_seconds,
            "excitation_condition_number": result.condition_number,
            "excitation_start_condition_number": result.start_value,
            "preprocess_n_samples": n_samples, "preprocess_seconds": preprocess_seconds}


def format_pipeline(result: dict) -> str:
    return (
        f"excitation design (Panda, 10 harmonics, 20 s at 100 Hz): cond "
        f"{result['excitation_start_condition_number']:.4g} -> "
        f"{result['excitation_condition_number']:.4g} in {result['excitation_seconds']:.1f} s\n"
        f"preprocessing of {result['preprocess_n_samples']} samples: "
        f"{result['preprocess_seconds']:.2f} s"
    )


def run_consistency_bench(*, robot: str = "panda", n_samples: int = 100_000, restarts: int = 8,
                          stages: int = 10, seed: int = 0,
                          progress: Callable[[str], None] | None = None) -> dict:
    """Wall time of (a) CLS-3 from ``n_samples`` twin samples (regressor, compression, SDP),
    (b) the joint physical + sigmoid-friction NLS on them (decimated to its default 10^4), (c)
    SDP retrieval and (d) penalty retrieval (Q = ``restarts``, kappa = ``stages``) from the
    robot's own static base coefficients."""
    from dynid.identification.base_parameters import robot_base_parameters
    from dynid.identification.constrained.cls import identify_constrained
    from dynid.identification.nonlinear.nls import identify_nls
    from dynid.identification.retrieval.retrieve import retrieve_penalty, retrieve_sdp

    say = progress or (lambda _line: None)
    model_robot = load_robot(robot)
    data = _twin_log(model_robot, n_samples, seed)
    identify_constrained(model_robot, data.select(slice(0, 5_000)))  # compile and warm up
    start = time.perf_counter()
    cls3 = identify_constrained(model_robot, data, method="cls3")
    cls3_seconds = time.perf_counter() - start
    say(f"CLS-3, {data.n_samples} samples: {cls3_seconds:.2f} s ({cls3.status}, consistent "
        f"{cls3.consistency.consistent})")
    start = time.perf_counter()
    nls = identify_nls(model_robot, data, friction="sigmoid")
    nls_seconds = time.perf_counter() - start
    say(f"NLS with sigmoid friction, {data.n_samples} samples ({nls.n_samples_fitted} "
        f"fitted): {nls_seconds:.1f} s ({nls.status})")
    base = robot_base_parameters(model_robot, kind="static", drop_joint1_gravity=True)
    coefficients = base.base(model_robot.parameters.ravel())
    sdp = retrieve_sdp(model_robot, base, coefficients)
    say(f"SDP retrieval: {sdp.seconds:.2f} s, relative error {sdp.relative_error_percent:.2g} %")
    penalty = retrieve_penalty(model_robot, base, coefficients, restarts=restarts,
                               stages=stages, seed=seed, progress=say)
    say(f"penalty retrieval (Q = {restarts}, kappa = {stages}): {penalty.seconds:.1f} s, "
        f"relative error {penalty.relative_error_percent:.2g} %")
    return {
        "robot": model_robot.name,
        "cls3_n_samples": data.n_samples,
        "cls3_seconds": cls3_seconds,
        "cls3_consistent": cls3.consistency.consistent,
        "nls_seconds": nls_seconds,
        "nls_samples_fitted": nls.n_samples_fitted,
        "sdp_retrieval_seconds": sdp.seconds,
        "sdp_retrieval_relative_error_percent": sdp.relative_error_percent,
        "penalty_retrieval_restarts": restarts,
        "penalty_retrieval_stages": stages,
        "penalty_retrieval_seconds": penalty.seconds,
        "penalty_retrieval_relative_error_percent": penalty.relative_error_percent,
        "penalty_retrieval_consistent": penalty.consistent,
        "cpus": os.cpu_count(),
    }


def format_consistency(result: dict) -> str:
    return (
        f"CLS-3 of {result['robot']}, {result['cls3_n_samples']} samples: "
        f"{result['cls3_seconds']:.2f} s\n"
        f"NLS (physical + sigmoid friction), {result['nls_samples_fitted']} samples fitted: "
        f"{result['nls_seconds']:.1f} s\n"
        f"SDP retrieval: {result['sdp_retrieval_seconds']:.2f} s "
        f"({result['sdp_retrieval_relative_error_percent']:.2g} %)\n"
        f"penalty retrieval, Q = {result['penalty_retrieval_restarts']}, kappa = "
        f"{result['penalty_retrieval_stages']}, {result['cpus']} CPUs: "
        f"{result['penalty_retrieval_seconds']:.1f} s "
        f"({result['penalty_retrieval_relative_error_percent']:.2g} %)"
    )


def run_compare_bench(*, robot: str = "panda", n_logs: int = 5, n_samples: int = 20_001,
                      seed: int = 0, progress: Callable[[str], None] | None = None) -> dict:
    """Wall time of (a) ``dynid compare``'s work for ``robot``: ``n_logs`` twin logs of
    ``n_samples`` at 1 kHz, the eight default methods (those the robot's bounds allow), each
    log identifying in turn (fits in parallel processes; the prior is the built-in
    ``<robot>-cad`` where there is one), and (b) for the Panda, the whole ``dynid demo``."""
    import tempfile

    from dynid.demo import run_demo
    from dynid.evaluation.compare import DEFAULT_METHODS, compare_methods
    from dynid.robot import builtin_robots

    say = progress or (lambda _line: None)
    model_robot = load_robot(robot)
    prior = f"{robot}-cad" if f"{robot}-cad" in builtin_robots() else None
    methods = [m for m in DEFAULT_METHODS if model_robot.bounds is not None
               or m not in ("cls1", "cls2", "cls3", "log-cholesky")]
    logs = [_twin_log(model_robot, n_samples, seed + k) for k in range(n_logs)]
    start = time.perf_counter()
    comparison = compare_methods(model_robot, logs, methods=methods,
                                 prior=load_robot(prior) if prior else None)
    compare_seconds = time.perf_counter() - start
    say(f"compare, {n_logs} logs x {len(methods)} methods: {compare_seconds:.1f} s")
    result = {"robot": model_robot.name, "compare_n_logs": n_logs,
              "compare_n_samples": n_samples, "compare_methods": methods,
              "compare_prior": prior,
              "compare_seconds": compare_seconds,
              "compare_fit_seconds": dict(comparison.seconds), "cpus": os.cpu_count()}
    if robot == "panda":  # the demo's twin
        with tempfile.TemporaryDirectory() as folder:
            start = time.perf_counter()
            figures = run_demo(output=Path(folder) / "demo")
            result["demo_seconds"] = time.perf_counter() - start
        result["demo_stage_seconds"] = dict(figures.seconds)
        say(f"demo: {result['demo_seconds']:.1f} s")
    return result


def format_compare(result: dict) -> str:
    lines = [f"compare of {result['robot']}, {result['compare_n_logs']} logs of "
             f"{result['compare_n_samples']} samples x {len(result['compare_methods'])} "
             f"methods: {result['compare_seconds']:.1f} s wall on {result['cpus']} CPUs "
             "(fit time per method over all logs: "
             + ", ".join(f"{k} {v:.1f} s" for k, v in result["compare_fit_seconds"].items())
             + ")"]
    if "demo_seconds" in result:
        lines.append(f"demo: {result['demo_seconds']:.1f} s ("
                     + ", ".join(f"{k} {v:.1f}" for k, v in
                                 result["demo_stage_seconds"].items()) + ")")
    return "\n".join(lines)
