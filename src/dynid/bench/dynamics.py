"""The dynamics suite (``dynid bench --suite dynamics``): dynid's batched regressor, RNEA and
forward dynamics against pinocchio called in a Python loop, on the same random states in one
run; times are the best of ``repeat`` runs, both sides allocating their output."""

from __future__ import annotations

import os
import platform
import tracemalloc
from collections.abc import Callable, Sequence

import numpy as np
import pinocchio as pin

from dynid.bench._timing import best_time
from dynid.dynamics import forward_dynamics, regressor, rnea
from dynid.robot import load_robot, to_pinocchio

DEFAULT_SIZES = (1_000, 10_000, 100_000)
DEFAULT_REPEAT = 5


def pinocchio_loops(model: pin.Model, q, dq, ddq):
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


def run(*, robot: str = "panda", sizes: Sequence[int] = DEFAULT_SIZES,
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
        regressor_loop, rnea_loop, aba_loop = pinocchio_loops(model, q, dq, ddq)
        # both sides allocate their output in every timed call, as a user's call would
        ours_regressor = best_time(lambda q=q, dq=dq, ddq=ddq: regressor(model_robot, q, dq, ddq),
                               repeat)
        ours_rnea = best_time(lambda q=q, dq=dq, ddq=ddq: rnea(model_robot, q, dq, ddq), repeat)
        theirs_regressor = best_time(regressor_loop, repeat)
        theirs_rnea = best_time(rnea_loop, repeat)
        # forward dynamics with the same arrays, ddq read as torques
        ours_aba = best_time(lambda q=q, dq=dq, tau=ddq: forward_dynamics(model_robot, q, dq, tau),
                         repeat)
        theirs_aba = best_time(aba_loop, repeat)
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


def summary(result: dict) -> str:
    head = (f"dynid bench: {result['robot']}, best of {result['repeat']}, "
            f"{result['machine']['cpus']} CPUs, pinocchio {result['machine']['pinocchio']} "
            "called in a Python loop")
    return "\n".join([head, *(format_row(row) for row in result["by_size"])])
