"""The Kalman filters' speed on a long log (``dynid bench --suite filters``): ``ekf_seconds``.

The run: the robot (default the Panda, 7 joints) with viscous and Coulomb friction tracks a
random Fourier trajectory in closed loop for ``samples`` samples at 1 kHz (3*10^4: 30 s), its
torques with 0.05 N m of noise; the filter starts from the link parameters with 15 % Gaussian
errors, friction from zero, the torque held over each period (``torque_hold="zero"``: the
twin's staircase), ``torque_std`` the noise, velocities measured to 1e-3 rad/s. Figures:

- ``ekf_seconds``: ``identify_kalman(method="ekf")`` over the whole log, wall time, compiled
  beforehand (the kernels' compilation is numba's on-disk cache's business, not the
  filter's); dynid's own kernels only (no pinocchio in the loop);
- ``ekf_cpu_seconds``: the same run's CPU time (what a busy machine does not inflate);
- ``ekf_relative_error_percent``: the final estimate's relative error against the twin's
  base parameters, ``ekf_start_error_percent`` the start's, ``ekf_converged`` and its word;
- with ``ukf_samples`` > 0: ``ukf_seconds_per_sample`` on the first ``ukf_samples``.

Measured on the workplace's shared 2-core machine, Panda, L = 78 (2 x 7 states and 64 base
parameters): before the closed-form derivatives (central differences of the whole step over
every state, 158 + 14 steps a sample, F P F^T and Joseph's update in O(L^3)) 0.9 ms a sample:
27 s for 3*10^4 samples idle; after, 0.21 ms CPU a sample (see the report of the branch that
brought it for the figures beside busy loops).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

__all__ = ["filter_bench", "run", "summary"]


def filter_bench(*, robot: str = "panda", samples: int = 30_000, ukf_samples: int = 0,
                 torque_noise_std: float = 0.05, seed: int = 1,
                 progress: Callable[[str], None] | None = None) -> dict:
    """The figures of the module's run."""
    from dynid.excitation.optimize import random_fourier
    from dynid.friction.models import ViscousCoulomb
    from dynid.identification.recursive.kalman import identify_kalman
    from dynid.robot import load_robot
    from dynid.simulate.twin import SensorModel, simulate_closed_loop

    say = progress or (lambda line: None)
    body = load_robot(robot)
    n = body.n_joints  # viscous and Coulomb friction: the filter's own columns
    body = body.with_friction(ViscousCoulomb(np.linspace(0.3, 0.1, n), np.linspace(0.5, 0.2, n),
                                             np.zeros(n)))
    say(f"filters: the {body.name} twin, {samples} samples")
    log = simulate_closed_loop(body, random_fourier(body, seed=seed),
                               duration=(samples - 1) / 1000.0, rate=1000.0,
                               sensor=SensorModel(torque_noise_std=torque_noise_std), seed=seed)
    rng = np.random.default_rng(seed)
    start = body.parameters * (1 + 0.15 * rng.standard_normal(body.parameters.shape))
    options = {"start": start, "torque_std": torque_noise_std, "torque_hold": "zero",
               "velocity_std": 1e-3, "friction": ViscousCoulomb.zeros(n)}
    identify_kalman(body, log.select(slice(0, 50)), method="ekf", **options)  # compiled first
    say("filters: ekf")
    wall, cpu = time.perf_counter(), time.process_time()
    estimate = identify_kalman(body, log, method="ekf", progress=progress, **options)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    template = estimate.model

    def base(links) -> np.ndarray:  # the links, the rotors as the twin's, friction aside
        rotors = body.rotor_inertia if template.rotor_inertia else np.zeros(0)
        rest = len(template.base.names) - links.size - rotors.size
        return template.base.base(np.concatenate([links.ravel(), rotors, np.zeros(rest)]))

    truth, first = base(body.parameters), base(start)
    rigid = template.base.independent < 10 * body.n_joints

    def error(values) -> float:
        return float(100 * np.linalg.norm(values[rigid] - truth[rigid])
                     / np.linalg.norm(truth[rigid]))

    result = {"ekf_seconds": wall, "ekf_cpu_seconds": cpu,
              "ekf_relative_error_percent": error(estimate.model.coefficients),
              "ekf_start_error_percent": error(first), "ekf_converged": estimate.converged,
              "ekf_status": estimate.status, "robot": body.name, "samples": log.n_samples,
              "state_size": 2 * body.n_joints + template.base.rank}
    if ukf_samples > 0:
        part = log.select(slice(0, ukf_samples))
        identify_kalman(body, part.select(slice(0, 20)), method="ukf", **options)
        say(f"filters: ukf on {part.n_samples} samples")
        began = time.perf_counter()
        identify_kalman(body, part, method="ukf", **options)
        result["ukf_seconds_per_sample"] = (time.perf_counter() - began) / part.n_samples
    return result


def run(*, robot: str = "panda", progress: Callable[[str], None] | None = None) -> dict:
    """The suite's figures (see the module): 3*10^4 samples, the UKF on 1000."""
    return filter_bench(robot=robot, ukf_samples=1000, progress=progress)


def summary(result: dict) -> str:
    lines = [f"EKF on {result['samples']} samples of the {result['robot']} twin (L = "
             f"{result['state_size']}): {result['ekf_seconds']:.2f} s "
             f"({result['ekf_cpu_seconds']:.2f} s CPU), rigid-body error "
             f"{result['ekf_relative_error_percent']:.3g} % from "
             f"{result['ekf_start_error_percent']:.3g} %"
             + ("" if result["ekf_converged"] else f", NOT converged: {result['ekf_status']}")]
    if "ukf_seconds_per_sample" in result:
        lines.append(f"UKF: {1e3 * result['ukf_seconds_per_sample']:.3g} ms a sample")
    return "\n".join(lines)
