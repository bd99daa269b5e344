"""The armature suite: an arm simulated by MuJoCo, not by dynid, with its drives' reflected
inertia (MJCF ``armature``), viscous ``damping`` and dry ``frictionloss``, identified by dynid
and scored on a second log: the issue's ``armature_floor_ratio``.

The truth is the robot file's arm with ``armature`` on every joint and a viscous-Coulomb
friction; ``dynid.export.to_mjcf`` writes it, ``dynid.simulate.mujoco_twin`` tracks one random
Fourier trajectory (the identification log: positions, velocities, noisy torques, no
accelerations, as a real log) and another (the held-out log). dynid identifies the first with
its default preprocessing and fit (``prepare``, ``identify``), and once with the rotor-inertia
columns; each model predicts the held-out torques from MuJoCo's own accelerations, so the
score carries no preprocessing of its own: the RMS error per joint over the torque noise
(``held_out_ratio``), 1 for a model as good as the truth (MuJoCo's smooth friction loss adds
a few per cent: ``mujoco_friction`` in a log's metadata).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from dynid.robot import Robot, load_robot

# the truth's drives, on every joint: reflected inertia [kg m^2] (MuJoCo menagerie's Panda
# states 0.1), viscous [N m s/rad] and dry [N m] friction
ARMATURE = 0.1
VISCOUS = 0.2
COULOMB = 0.3


def mujoco_truth(robot: Robot, *, armature: float = ARMATURE, viscous: float = VISCOUS,
                 coulomb: float = COULOMB) -> Robot:
    """``robot`` with ``armature`` on every joint and viscous-Coulomb friction (no offset):
    the truth MuJoCo simulates."""
    from dynid.friction.models import ViscousCoulomb

    n = robot.n_joints
    return robot.with_rotor_inertia(np.full(n, float(armature))).with_friction(
        ViscousCoulomb(np.full(n, float(viscous)), np.full(n, float(coulomb)), np.zeros(n)))


def mujoco_logs(truth: Robot, *, duration: float, noise: float, seeds: tuple[int, ...],
                rate: float = 1000.0) -> list:
    """One MuJoCo log of ``truth`` per seed, each tracking the random Fourier trajectory of its
    seed, torque noise ``noise`` [N m] drawn from the same seed; MuJoCo's accelerations kept
    (``ddq``: drop them for a realistic log)."""
    from dynid.excitation.optimize import random_fourier
    from dynid.export.writers import to_mjcf
    from dynid.simulate import SensorModel
    from dynid.simulate.mujoco_twin import load_mjcf, simulate_mujoco

    model = load_mjcf(to_mjcf(truth))
    return [simulate_mujoco(model, random_fourier(truth, seed=seed), duration=duration,
                            rate=rate, sensor=SensorModel(torque_noise_std=noise), seed=seed)
            for seed in seeds]


def held_out_ratio(model, log, noise: float) -> NDArray:
    """Per joint: the RMS error of ``model``'s torques on ``log`` (from its exact ``ddq``) over
    the torque noise ``noise``: 1 is the noise floor."""
    error = model.predict(log.q, log.dq, log.ddq, log.t) - log.tau
    return np.sqrt(np.mean(error**2, axis=0)) / noise


def truth_ratio(truth: Robot, log, noise: float) -> NDArray:
    """Per joint: the held-out ratio of the truth itself (dynid's dynamics with the armature
    and ``fv dq + fc sign(dq)``): what MuJoCo's smooth friction loss leaves above 1."""
    from dynid.dynamics import rnea

    error = rnea(truth, log.q, log.dq, log.ddq) + truth.friction.torque(log.dq) - log.tau
    return np.sqrt(np.mean(error**2, axis=0)) / noise


def floor_ratios(description: Robot, identification, held_out, noise: float) -> dict:
    """``{"default": ..., "rotor_inertia": ...}``: the held-out ratios per joint of what
    `dynid identify` does by default to ``identification`` (its accelerations dropped,
    prepared, the torque lag compensated, the structure chosen from the data) and of the fit
    with the rotor-inertia columns, on the robot file ``description``."""
    from dynid.data.preprocess import prepare
    from dynid.identification import identify
    from dynid.identification.delay import compensated
    from dynid.identification.linear.idim import linear_template
    from dynid.model import default_friction

    prepared = prepare(dataclasses.replace(identification, ddq=None))
    template = linear_template(description, default_friction(description),
                               rotor_inertia=bool(description.rotor_inertia.any()))
    (aligned,), _ = compensated(template, [prepared])
    out = {}
    for name, options in (("default", {"structure": "auto"}),
                          ("rotor_inertia", {"rotor_inertia": True})):
        model = identify(description, aligned, **options)
        out[name] = held_out_ratio(model, held_out, noise)
    return out


def run(*, robot: str = "panda", duration: float = 20.0, noise: float = 0.1,
        armature: float = ARMATURE, seed: int = 1,
        progress: Callable[[str], None] | None = None) -> dict:
    """Simulate ``robot`` with ``armature`` in MuJoCo (two logs of ``duration`` s at 1 kHz,
    seeds ``seed`` and ``seed + 1``), identify the first by default and with the rotor-inertia
    columns, score both on the second. ``armature_floor_ratio``: the default fit's largest
    held-out ratio over the joints (the issue's figure: <= 1.5 is the noise floor)."""
    say = progress or (lambda _line: None)
    description = load_robot(robot)
    truth = mujoco_truth(description, armature=armature)
    start = time.perf_counter()
    identification, held_out = mujoco_logs(truth, duration=duration, noise=noise,
                                           seeds=(seed, seed + 1))
    simulate_seconds = time.perf_counter() - start
    say(f"MuJoCo: 2 x {duration:g} s of {robot} in {simulate_seconds:.1f} s")
    ratios = floor_ratios(description, identification, held_out, noise)
    ratios["truth"] = truth_ratio(truth, held_out, noise)
    return {"robot": robot, "armature": armature, "viscous": VISCOUS, "coulomb": COULOMB,
            "noise": noise, "duration_s": duration,
            "armature_floor_ratio": float(ratios["default"].max()),
            "armature_floor_ratio_rotor_inertia": float(ratios["rotor_inertia"].max()),
            "truth_floor_ratio": float(ratios["truth"].max()),
            "held_out_ratio": {name: value.tolist() for name, value in ratios.items()},
            "mujoco_friction": identification.metadata["mujoco_friction"],
            "tracking_rms": identification.metadata["tracking_rms"],
            "mujoco_seconds": simulate_seconds}


def summary(result: dict) -> str:
    return (f"{result['robot']} in MuJoCo, armature {result['armature']:g} kg m^2, "
            f"{result['noise']:g} N m noise: held-out error over the noise floor "
            f"{result['armature_floor_ratio']:.2f} (default), "
            f"{result['armature_floor_ratio_rotor_inertia']:.2f} (with the rotor-inertia "
            f"columns), {result['truth_floor_ratio']:.2f} (the truth: MuJoCo's smooth friction "
            "loss)")
