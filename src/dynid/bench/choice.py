"""The choice suite (``dynid bench --suite choice``): what choosing the model structure
from the data (``identify(..., structure="auto")``, the default of ``dynid identify``) costs and
gives, on a twin of the robot whose truth has reflected rotor inertias (armature) on some
joints the description does not state, and viscous and dry friction (a physics engine's joint
damping and friction loss) in place of the description's own friction model.

- ``structure_overhead``: the wall time of the auto fit over the fixed one on the same log
  (30 s at 1 kHz, 0.1 N m noise): the cross-validation's folds and solves.
- ``armature_floor_ratio``: the largest held-out RMSE over the noise floor, per joint, on a
  second log of the twin, the structure chosen automatically; ``..._fixed`` the same with the
  description's structure as given (no rotor columns).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from dynid.bench._timing import best_time
from dynid.robot import load_robot

#: the twin's noise [N m] and its rotor inertias [kg m^2] on every other joint from the 2nd
NOISE = 0.1
ARMATURE = 0.5


def run(*, robot: str = "panda", duration: float = 30.0, rate: float = 1000.0,
        repeat: int = 3, seed: int = 0,
        progress: Callable[[str], None] | None = None) -> dict:
    """The figures of the module docstring on ``robot`` (its own parameters, no rotor
    inertias, as the description), ``duration`` seconds at ``rate`` Hz."""
    from dynid.excitation.optimize import random_fourier
    from dynid.identification.linear.idim import identify
    from dynid.simulate.twin import SensorModel, simulate_open_loop

    say = progress or (lambda _line: None)
    from dynid.friction import ViscousCoulomb

    n = load_robot(robot).n_joints
    description = load_robot(robot).with_rotor_inertia(None).with_friction(
        ViscousCoulomb(fv=np.full(n, 0.1), fc=np.full(n, 0.2), fo=np.zeros(n)))
    rotor = np.where(np.arange(n) % 2 == 1, ARMATURE, 0.0)
    truth = description.with_rotor_inertia(rotor)

    def log(k: int):
        return simulate_open_loop(truth, random_fourier(truth, seed=seed + k),
                                  duration=duration, rate=rate,
                                  sensor=SensorModel(torque_noise_std=NOISE), seed=seed + k)

    data, check = log(0), log(1)
    identify(description, data.select(slice(0, data.n_samples // 3)))  # compile and warm up
    fixed_seconds = best_time(lambda: identify(description, data), repeat)
    auto_seconds = best_time(lambda: identify(description, data, structure="auto"), repeat)
    # the process's CPU time too: a shared machine's wall time swings with the others' load
    fixed_cpu = best_time(lambda: identify(description, data), repeat,
                          clock=time.process_time)
    auto_cpu = best_time(lambda: identify(description, data, structure="auto"), repeat,
                         clock=time.process_time)
    say(f"identify, {data.n_samples} samples of {n} joints: fixed {fixed_seconds:.2f} s "
        f"({fixed_cpu:.2f} s CPU), auto {auto_seconds:.2f} s ({auto_cpu:.2f} s CPU)")
    auto = identify(description, data, structure="auto")
    fixed = identify(description, data)
    ratios = {name: _floor_ratio(model, check) for name, model in
              (("auto", auto), ("fixed", fixed))}
    say(f"held-out RMSE over the noise floor, largest joint: auto {ratios['auto'].max():.3f}, "
        f"fixed {ratios['fixed'].max():.3f}")
    engine = _mujoco_ratios(description, truth, data, check)
    if engine is not None:
        say(f"MuJoCo's inverse dynamics of the twin: auto {engine['auto'].max():.3f}, fixed "
            f"{engine['fixed'].max():.3f}")
    return {
        "mujoco_armature_floor_ratio": None if engine is None else float(engine["auto"].max()),
        "mujoco_armature_floor_ratio_fixed":
            None if engine is None else float(engine["fixed"].max()),
        "robot": description.name, "n_samples": data.n_samples, "rate": rate,
        "structure_fixed_seconds": fixed_seconds, "structure_auto_seconds": auto_seconds,
        "structure_overhead": auto_seconds / fixed_seconds,
        "structure_fixed_cpu_seconds": fixed_cpu, "structure_auto_cpu_seconds": auto_cpu,
        "structure_overhead_cpu": auto_cpu / fixed_cpu,
        "structure_choice_seconds": auto.report["structure"]["seconds"],
        "armature": rotor.tolist(),
        "armature_floor_ratio": float(ratios["auto"].max()),
        "armature_floor_ratio_fixed": float(ratios["fixed"].max()),
        "floor_ratio_per_joint": ratios["auto"].tolist(),
        "dropped": auto.report["structure"]["dropped"],
    }


def _mujoco_ratios(description, truth, data, check) -> dict | None:
    """The floor ratios with the torques of MuJoCo's inverse dynamics of the twin (an engine
    no one here wrote: armature, joint damping; its dry friction left out, which it smooths)
    along the same states, the same noise added; None without mujoco."""
    import dataclasses
    import tempfile
    from pathlib import Path

    try:
        import mujoco
    except ImportError:
        return None
    from dynid.export import export_robot
    from dynid.identification.linear.idim import identify

    with tempfile.TemporaryDirectory() as folder:
        engine = mujoco.MjModel.from_xml_path(str(export_robot(truth, Path(folder) / "a.xml")))
    engine.opt.disableflags |= (mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
                                | mujoco.mjtDisableBit.mjDSBL_FRICTIONLOSS)
    state = mujoco.MjData(engine)
    dry = truth.friction.per_joint()[:, 1]  # the twin's Coulomb friction, added exactly

    def engine_log(log, seed: int):
        tau = engine_torques(engine, state, log)
        noise = np.random.default_rng(seed).normal(0.0, NOISE, tau.shape)
        return dataclasses.replace(log, tau=tau + dry * np.sign(log.dq) + noise)

    fit, held = engine_log(data, 0), engine_log(check, 1)
    return {name: _floor_ratio(identify(description, fit, structure=name), held)
            for name in ("auto", "fixed")}


def engine_torques(engine, state, log) -> np.ndarray:
    """MuJoCo's inverse dynamics (``mj_inverse``) of ``engine`` along ``log``'s states
    ``(N, n)``: a torque log from an engine dynid did not write."""
    import mujoco

    tau = np.empty_like(log.tau)
    for k in range(log.n_samples):
        state.qpos[:], state.qvel[:], state.qacc[:] = log.q[k], log.dq[k], log.ddq[k]
        mujoco.mj_inverse(engine, state)
        tau[k] = state.qfrc_inverse
    return tau


def _floor_ratio(model, check) -> np.ndarray:
    error = model.predict(check.q, check.dq, check.ddq) - check.tau
    return np.sqrt((error**2).mean(axis=0)) / NOISE


def summary(result: dict) -> str:
    return "\n".join([
        f"structure chosen from the data, {result['robot']}, {result['n_samples']} samples at "
        f"{result['rate']:g} Hz:",
        f"  identify fixed {result['structure_fixed_seconds']:.2f} s, auto "
        f"{result['structure_auto_seconds']:.2f} s ({result['structure_overhead']:.2f}x; CPU "
        f"{result['structure_fixed_cpu_seconds']:.2f} s and "
        f"{result['structure_auto_cpu_seconds']:.2f} s, {result['structure_overhead_cpu']:.2f}x)",
        f"  armature {result['armature']}: held-out RMSE / noise floor, largest joint: auto "
        f"{result['armature_floor_ratio']:.3f}, fixed {result['armature_floor_ratio_fixed']:.3f}",
        f"  left out: {', '.join(result['dropped']) or 'nothing'}",
        *([] if result["mujoco_armature_floor_ratio"] is None else [
            f"  MuJoCo's inverse dynamics of the twin: held-out RMSE / noise floor, largest "
            f"joint: auto {result['mujoco_armature_floor_ratio']:.3f}, fixed "
            f"{result['mujoco_armature_floor_ratio_fixed']:.3f}"]),
    ])
