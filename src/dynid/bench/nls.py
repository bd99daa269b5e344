"""Benchmark of the joint physical + friction NLS (``dynid.identification.nonlinear.nls``):
wall time of ``identify_nls`` per friction model on the Panda twin, whether each fit stopped on its
tolerances, and how its fit compares with the consistent linear start (cls3 with viscous +
Coulomb friction) on the same samples."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

__all__ = ["NLS_BENCH_MODELS", "run", "summary"]

NLS_BENCH_MODELS = ("sigmoid", "stribeck", "lugre")
TORQUE_NOISE_STD = 0.05  # N m, on every joint


def _panda_log(n_samples: int, seed: int):
    """``n_samples`` of the Panda twin at 1 kHz on a random Fourier trajectory, torque noise
    ``TORQUE_NOISE_STD``."""
    from dynid.excitation.optimize import random_fourier
    from dynid.robot import load_robot
    from dynid.simulate.twin import SensorModel, simulate_open_loop

    robot = load_robot("panda")
    data = simulate_open_loop(robot, random_fourier(robot, seed=seed + 1),
                              duration=(n_samples - 1) / 1000.0, rate=1000.0,
                              sensor=SensorModel(torque_noise_std=TORQUE_NOISE_STD),
                              seed=seed + 1)
    return robot, data


def run(*, robot: str = "panda", n_samples: int = 10_000, seed: int = 0,
        progress: Callable[[str], None] | None = None) -> dict:
    """Wall time of ``identify_nls`` on ``n_samples`` of the Panda twin (torque noise
    ``TORQUE_NOISE_STD``) for each of ``NLS_BENCH_MODELS``, after a warm-up fit of each on a
    short piece (numba compiles there, not in the timings).

    Keys: ``nls_seconds_<model>``; ``nls_converged`` (every fit stopped on its tolerances);
    ``nls_status``, ``nls_iterations``, ``nls_rmse`` (mean over the joints, N m) per model;
    ``nls_linear_rmse``, the mean RMSE of the linear start (cls3 with viscous + Coulomb +
    offset friction) on the same samples; ``n_samples``; and the drive gains a consistent method
    identifies from ``robot``'s twin currents (``gains_*``, ``consistent_gains_bench``)."""
    from dynid.bench.identification import consistent_gains_bench
    from dynid.friction.models import ViscousCoulomb
    from dynid.identification.constrained.cls import identify_constrained
    from dynid.identification.nonlinear.nls import identify_nls
    from dynid.metrics import rmse

    if not (isinstance(n_samples, int) and n_samples >= 200):
        raise ValueError(f"`n_samples` must be an integer >= 200, got {n_samples!r}")
    say = progress or (lambda _line: None)
    robot, data = _panda_log(n_samples, seed)
    warm = data.select(slice(0, min(data.n_samples, 1000)))
    for name in NLS_BENCH_MODELS:
        identify_nls(robot, warm, friction=name, max_iterations=5)
    linear = identify_constrained(robot, data, method="cls3",
                                  friction=ViscousCoulomb.zeros(robot.n_joints))
    linear_rmse = rmse(data.tau, linear.model.predict(data.q, data.dq, data.ddq))
    say(f"cls3 + viscous-Coulomb start: mean RMSE {linear_rmse.mean():.5f} N m")
    out: dict = {"n_samples": data.n_samples, "nls_status": {}, "nls_iterations": {},
                 "nls_rmse": {}, "nls_linear_rmse": float(linear_rmse.mean())}
    converged = True
    for name in NLS_BENCH_MODELS:
        clock = time.perf_counter()
        result = identify_nls(robot, data, friction=name)
        seconds = time.perf_counter() - clock
        out[f"nls_seconds_{name}"] = seconds
        out["nls_status"][name] = result.status
        out["nls_iterations"][name] = result.iterations
        out["nls_rmse"][name] = float(np.mean(result.rmse))
        converged = converged and result.success
        say(f"NLS {name}: {seconds:.2f} s, {result.iterations} iterations, {result.status}, "
            f"mean RMSE {np.mean(result.rmse):.5f} N m")
    out["nls_converged"] = converged
    out.update(consistent_gains_bench(robot))
    return out


def summary(result: dict) -> str:
    """A few readable lines of ``run``'s result."""
    lines = [f"NLS on {result['n_samples']} samples of the Panda twin "
             f"(linear start cls3 + viscous-Coulomb: mean RMSE "
             f"{result['nls_linear_rmse']:.5f} N m)"]
    for name in NLS_BENCH_MODELS:
        lines.append(f"  {name:<9} {result[f'nls_seconds_{name}']:7.2f} s  "
                     f"{result['nls_iterations'][name]:4d} iterations  mean RMSE "
                     f"{result['nls_rmse'][name]:.5f} N m  {result['nls_status'][name]}")
    lines.append(f"  converged on tolerances: {'yes' if result['nls_converged'] else 'no'}")
    if "gains_method" in result:
        lines.append(f"drive gains from motor currents by {result['gains_method']} "
                     f"({result['gains_n_samples']} samples of the twin, a payload log among "
                     f"them): within {100 * result['gains_max_relative_error']:.2f} %, "
                     f"{result['gains_seconds']:.2f} s, consistent: "
                     f"{'yes' if result['gains_consistent'] else 'no'}")
    return "\n".join(lines)
