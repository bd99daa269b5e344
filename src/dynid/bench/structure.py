"""Benchmark of the right model by default (issue 32): what dynid's default path — a log without
accelerations, the cutoff chosen from its spectrum, the dead band, the torque lag estimated and
compensated, OLS — makes of twins whose truth is not what it is told.

- ``friction_bias_percent``: the largest error of a Coulomb or viscous coefficient, in percent
  of its true value, on a Panda twin with viscous + Coulomb friction at 0.1 N m torque noise and
  1e-5 rad encoders, under computed torque (so the joints reverse and stick as a real arm's do).
- ``coverage_95``: over ``draws`` twins of a 3-joint arm (torque noise, encoders, rotor
  inertias, friction), the fraction of the 95 % intervals (coefficient +- 1.96 std) of the base
  parameters that hold the truth, overall and per kind (rigid body, rotor, friction).
- ``coupled_wrist_gain``: a coupled-wrist TX40 twin's motor-side logs through the default path,
  the held-out wrist error of a model without the coupling over the one with it
  (``dynid.bench.transmission``).
- ``armature_floor_ratio``: a Panda with armature, damping and friction loss simulated by
  MuJoCo, identified by the default path with the structure chosen from the data, the
  largest held-out error over the noise floor (``dynid.bench.armature``; None without mujoco).
- ``ekf_seconds``: the EKF on 3e4 samples of the 7-joint Panda twin (``dynid.bench.filters``).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

import numpy as np

__all__ = ["run", "summary"]

TORQUE_NOISE_STD = 0.1  # N m
Z_95 = 1.959963984540054


def _default_path(truth, log, *, rotor_inertia: bool = False):
    """What `dynid identify` does by default to a log without accelerations, with the true
    structure: prepared, the lag compensated, OLS, the lag's error in the std."""
    from dynid.data import prepare
    from dynid.identification import identify
    from dynid.identification.delay import compensated, with_delay_std
    from dynid.identification.linear.idim import linear_template

    raw = dataclasses.replace(log, ddq=None)
    template = linear_template(truth, truth.friction, rotor_inertia=rotor_inertia)
    (ready,), delay = compensated(template, [prepare(raw)])
    model = identify(truth, ready, friction=truth.friction, rotor_inertia=rotor_inertia)
    return with_delay_std(model, delay), delay


def friction_bias(*, duration: float = 20.0, seed: int = 0) -> dict:
    """The Panda twin's friction through the default path (see the module)."""
    from dynid.excitation.optimize import random_fourier
    from dynid.friction.models import ViscousCoulomb
    from dynid.robot import load_robot
    from dynid.simulate import SensorModel, simulate_closed_loop

    robot = load_robot("panda")
    n = robot.n_joints
    fv, fc = np.full(n, 0.05), np.full(n, 0.2)
    truth = robot.with_friction(ViscousCoulomb(fv, fc, np.zeros(n)))
    log = simulate_closed_loop(truth, random_fourier(truth, seed=seed + 3), duration=duration,
                               seed=seed + 1, sensor=SensorModel(
                                   torque_noise_std=TORQUE_NOISE_STD,
                                   position_resolution=1e-5))
    model, delay = _default_path(truth, log)
    found = model.friction_parameters
    coulomb = 100 * np.abs(found[n:2 * n] - fc) / fc
    viscous = 100 * np.abs(found[:n] - fv) / fv
    return {"friction_bias_percent": float(max(coulomb.max(), viscous.max())),
            "coulomb_error_percent": coulomb.tolist(), "viscous_error_percent": viscous.tolist(),
            "torque_delay_ms": 1e3 * delay.seconds}


def coverage(*, draws: int = 200, duration: float = 10.0, seed: int = 0,
             progress: Callable[[str], None] | None = None) -> dict:
    """The 95 % intervals' coverage over ``draws`` 3-joint twins (see the module)."""
    from dynid.excitation.optimize import random_fourier
    from dynid.friction.models import ViscousCoulomb
    from dynid.robot import load_robot
    from dynid.simulate import SensorModel, simulate_closed_loop

    robot = load_robot("arm3").with_rotor_inertia([0.05, 0.03, 0.01])
    truth = robot.with_friction(ViscousCoulomb(np.full(3, 0.1), np.full(3, 0.3),
                                               np.full(3, 0.05)))
    reference = random_fourier(truth, seed=seed + 3)
    full = np.concatenate([truth.parameters.ravel(), truth.rotor_inertia,
                           truth.friction.coefficients])
    inside, kinds = [], None
    for draw in range(draws):
        log = simulate_closed_loop(truth, reference, duration=duration, seed=seed + 100 + draw,
                                   sensor=SensorModel(torque_noise_std=TORQUE_NOISE_STD,
                                                      position_resolution=1e-4))
        model, _ = _default_path(truth, log, rotor_inertia=True)
        error = np.abs(model.coefficients - model.base.base(full))
        inside.append(error <= Z_95 * model.std)
        if kinds is None:
            kinds = _kinds(model)
        if progress is not None and (draw + 1) % 10 == 0:
            progress(f"coverage: {draw + 1} of {draws} draws, "
                     f"{np.mean(inside):.3f} so far")
    held = np.array(inside)
    return {"coverage_95": float(held.mean()), "draws": draws,
            "coverage_by_kind": {kind: float(held[:, kinds == kind].mean())
                                 for kind in ("rigid", "rotor", "friction")
                                 if (kinds == kind).any()},
            "coverage_worst": {model.base.base_names[k]: float(held[:, k].mean())
                               for k in np.argsort(held.mean(axis=0))[:5]}}


def _kinds(model) -> np.ndarray:
    """Each base parameter's kind, by the full column it stands for."""
    first_rotor, first_friction = model.n_rigid, model.n_rigid + model.n_rotor
    column = model.base.independent
    return np.where(column < first_rotor, "rigid",
                    np.where(column < first_friction, "rotor", "friction"))


def run(*, draws: int = 200, seed: int = 0,
        progress: Callable[[str], None] | None = None) -> dict:
    """``friction_bias`` and ``coverage`` (``draws`` twins), with their wall times."""
    if not (isinstance(draws, int) and draws >= 2):
        raise ValueError(f"`draws` must be an integer >= 2, got {draws!r}")
    say = progress or (lambda _line: None)
    start = time.perf_counter()
    say("friction bias: the Panda twin through the default path")
    out = friction_bias(seed=seed)
    out["friction_seconds"] = time.perf_counter() - start
    start = time.perf_counter()
    out.update(coverage(draws=draws, seed=seed, progress=say))
    out["coverage_seconds"] = time.perf_counter() - start
    out.update(_coupled_wrist(seed, say))
    out.update(_armature(seed, say))
    out.update(_ekf(say))
    return out


def _ekf(say: Callable[[str], None]) -> dict:
    """``ekf_seconds`` of ``dynid.bench.filters``: the EKF on 3e4 Panda twin samples."""
    from dynid.bench.filters import filter_bench

    say("EKF: 3e4 samples of the Panda twin")
    found = filter_bench()
    return {"ekf_seconds": found["ekf_seconds"], "ekf_cpu_seconds": found["ekf_cpu_seconds"]}


def _armature(seed: int, say: Callable[[str], None]) -> dict:
    """``armature_floor_ratio`` of ``dynid.bench.armature`` (a Panda with armature simulated
    by MuJoCo, the default path), or None where MuJoCo is not installed."""
    try:
        import mujoco  # noqa: F401  (the extra dynid[mujoco])
    except ImportError:
        say("armature: skipped, mujoco is not installed (pip install 'dynid[mujoco]')")
        return {"armature_floor_ratio": None}
    from dynid.bench.armature import run as armature

    start = time.perf_counter()
    say("armature: a Panda with armature simulated by MuJoCo, identified by default")
    found = armature(seed=seed + 1, progress=say)
    return {"armature_floor_ratio": found["armature_floor_ratio"],
            "armature_floor_ratio_rotor_inertia": found["armature_floor_ratio_rotor_inertia"],
            "armature_truth_floor_ratio": found["truth_floor_ratio"],
            "armature_seconds": time.perf_counter() - start}


def _coupled_wrist(seed: int, say: Callable[[str], None]) -> dict:
    """``coupled_wrist_gain`` (and what goes with it) of ``dynid.bench.transmission``."""
    from dynid.bench.transmission import run as transmission

    start = time.perf_counter()
    say("coupled wrist: a motor-side TX40 twin with and without its coupling")
    wrist = transmission(seed=seed, progress=say)
    return {"coupled_wrist_gain": wrist["coupled_wrist_gain"],
            "coupled_wrist_rmse": {"with": wrist["rmse_with"],
                                   "without": wrist["rmse_without"]},
            "coupled_wrist_seconds": time.perf_counter() - start}


def summary(result: dict) -> str:
    kinds = ", ".join(f"{kind} {value:.3f}" for kind, value in
                      result["coverage_by_kind"].items())
    return "\n".join([
        f"friction bias, Panda twin, default path: {result['friction_bias_percent']:.1f} % "
        f"(torque lag {result['torque_delay_ms']:+.2f} ms compensated)",
        f"95 % intervals over {result['draws']} twins: coverage {result['coverage_95']:.3f} "
        f"({kinds})",
        f"coupled wrist, motor-side TX40 twin: held-out wrist error without / with the "
        f"coupling {result['coupled_wrist_gain']:.1f}",
        "armature, MuJoCo Panda, default path: " + (
            "not run (no mujoco)" if result["armature_floor_ratio"] is None else
            f"{result['armature_floor_ratio']:.2f} x the noise floor "
            f"({result['armature_floor_ratio_rotor_inertia']:.2f} with --rotor-inertia)"),
        f"EKF, 3e4 Panda samples: {result['ekf_seconds']:.1f} s "
        f"({result['ekf_cpu_seconds']:.1f} s CPU)",
    ])
