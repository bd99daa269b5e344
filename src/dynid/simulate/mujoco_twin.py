"""A twin in a physics engine no one here wrote: MuJoCo simulates the arm, dynid identifies it.

dynid's own twin (``twin``) integrates dynid's dynamics, so a test on its logs cannot catch an
error that dynid's identification shares with them (a convention, a sign, a term both leave
out). ``simulate_mujoco`` takes an MJCF model instead (``dynid export`` writes one, with the
drives' reflected inertia as the joints' ``armature``, viscous friction as ``damping`` and dry
friction as ``frictionloss``) and tracks a trajectory in MuJoCo:

- a computed-torque controller on MuJoCo's own model, ``tau = M(q) a + qfrc_bias(q, dq)``,
  ``a = ddq_d + Kd (dq_d - dq) + Kp (q_d - q)`` (``Kp = w^2``, ``Kd = 2 w``), at ``rate`` Hz:
  ``M`` (with the armature) and the bias forces are what ``mj_step1`` computes at the sampled
  state, the torque is applied as ``qfrc_applied`` and held for ``substeps`` MuJoCo steps of
  ``1 / (rate substeps)`` s. The friction is not compensated: the feedback rejects it;
- the log holds the sampled ``q``, ``dq`` and the applied torque (the drives' torque: rigid
  body, armature and friction), through a ``SensorModel`` (noise, bias, delay, ...), and
  MuJoCo's own acceleration of each sample (``qacc`` of its first step) as ``ddq``: a score
  free of any differentiation. A real log has none: drop it
  (``dataclasses.replace(log, ddq=None)``) before identifying as from a real arm.

MuJoCo's ``frictionloss`` is a soft constraint, not ``fc sign(dq)``: its force saturates at
``fc`` only above a small velocity and goes through zero smoothly. What the engine applied is
measured along the run (``qfrc_passive + qfrc_constraint``) and summarised in the metadata,
``mujoco_friction``: per joint the viscous and Coulomb coefficients fitted to it where
``|dq|`` exceeds ``FRICTION_FIT_SPEED``, and the RMS of what that fit leaves (the smoothing).

mujoco is imported when a run starts; without it a ``ModuleNotFoundError`` names the extra
that installs it (``dynid[mujoco]``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_vector
from dynid.data.dataset import Dataset, sample_times
from dynid.simulate.twin import SensorModel

__all__ = ["FRICTION_FIT_SPEED", "MUJOCO_EXTRA", "load_mjcf", "simulate_mujoco"]

# what installs MuJoCo with dynid
MUJOCO_EXTRA = "dynid[mujoco]"

# |dq| [rad/s] above which the friction MuJoCo applied is fitted as fv dq + fc sign(dq)
FRICTION_FIT_SPEED = 0.05


def _mujoco():
    """The mujoco module, or an error that says how to install it."""
    try:
        import mujoco
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            f"the MuJoCo twin needs the `mujoco` package: pip install '{MUJOCO_EXTRA}' (or "
            "pip install mujoco)", name=error.name) from None
    return mujoco


def load_mjcf(mjcf: str | Path):
    """A ``mujoco.MjModel`` from MJCF text (a string that starts with ``<``: what
    ``dynid.export.to_mjcf`` returns) or a file; every degree of freedom a hinge or slide joint
    (an arm on a fixed base)."""
    mujoco = _mujoco()
    text = str(mjcf) if isinstance(mjcf, str) else None
    if text is not None and text.lstrip().startswith("<"):
        model = mujoco.MjModel.from_xml_string(text)
    else:
        model = mujoco.MjModel.from_xml_path(str(Path(mjcf)))
    kinds = {int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)}
    if model.nv == 0 or model.njnt != model.nv or any(int(k) not in kinds
                                                     for k in model.jnt_type):
        raise ValueError(f"`mjcf` must be an arm on a fixed base (hinge and slide joints only), "
                         f"got {model.njnt} joints for {model.nv} degrees of freedom")
    return model


def simulate_mujoco(mjcf, trajectory, *, duration: float, rate: float = 1000.0,
                    natural_frequency: ArrayLike = 20.0, substeps: int = 2,
                    sensor: SensorModel | None = None, seed: int = 0,
                    start: float = 0.0) -> Dataset:
    """Track ``trajectory`` (``sample(t) -> q, dq, ddq``) for ``duration`` s in MuJoCo (see the
    module) and log it at ``rate`` Hz through ``sensor``. ``mjcf``: MJCF text, a file, or a
    ``mujoco.MjModel`` (its timestep is set to ``1 / (rate substeps)``). ``natural_frequency``
    [rad/s]: one value or one per joint. The metadata holds the tracking RMS per joint and the
    friction MuJoCo applied (``mujoco_friction``)."""
    mujoco = _mujoco()
    model = mjcf if isinstance(mjcf, mujoco.MjModel) else load_mjcf(mjcf)
    n = model.nv
    if trajectory.n_joints != n:
        raise ValueError(f"`trajectory` has {trajectory.n_joints} joints, `mjcf` {n}")
    if isinstance(substeps, bool) or not (isinstance(substeps, (int, np.integer))
                                          and substeps >= 1):
        raise ValueError(f"`substeps` must be an integer >= 1, got {substeps!r:.40}")
    if not (np.isfinite(rate) and rate > 0):
        raise ValueError(f"`rate` must be a number of Hz > 0, got {rate!r:.40}")
    w = as_vector("natural_frequency", natural_frequency, n)
    if not (w > 0).all():
        raise ValueError(f"`natural_frequency` must be > 0 rad/s, got {w.tolist()}")
    kp, kd = w**2, 2 * w
    model.opt.timestep = 1.0 / (rate * substeps)
    data = mujoco.MjData(model)
    t = sample_times(duration, rate, start)
    q_d, dq_d, ddq_d = (np.asarray(x, dtype=float) for x in trajectory.sample(t))
    data.qpos[:], data.qvel[:] = q_d[0], dq_d[0]
    q, dq, ddq, tau, friction = (np.empty((t.size, n)) for _ in range(5))
    inertia_a = np.empty(n)
    for k in range(t.size):
        mujoco.mj_step1(model, data)  # M(q), bias forces at the sampled state
        q[k], dq[k] = data.qpos, data.qvel
        a = ddq_d[k] + kd * (dq_d[k] - dq[k]) + kp * (q_d[k] - q[k])
        mujoco.mj_mulM(model, data, inertia_a, a)  # M a (the API of MuJoCo 3 and 4 alike)
        tau[k] = inertia_a + data.qfrc_bias
        if not np.isfinite(tau[k]).all():
            raise ValueError(f"the MuJoCo run diverged at t = {t[k]:.3f} s: lower "
                             "`natural_frequency` or raise `substeps`")
        data.qfrc_applied[:] = tau[k]
        mujoco.mj_step2(model, data)
        ddq[k] = data.qacc  # the acceleration of this state and torque (the step's)
        friction[k] = -(data.qfrc_passive + data.qfrc_constraint)  # what the drive overcame
        for _ in range(substeps - 1):
            mujoco.mj_step(model, data)
    metadata = {"robot": str(model.names[:model.names.index(b"\0")].decode()
                             if b"\0" in model.names else ""),
                "source": "MuJoCo twin (computed torque on MuJoCo's model)",
                "mujoco_version": mujoco.__version__, "rate_hz": float(rate),
                "mujoco_substeps": int(substeps), "natural_frequency": w.tolist(),
                "tracking_rms": np.sqrt(np.mean((q - q_d) ** 2, axis=0)).tolist(),
                "mujoco_friction": friction_summary(dq, friction), "seed": seed}
    return (sensor or SensorModel()).record(t, q, dq, ddq, tau, np.random.default_rng(seed),
                                            metadata)


def friction_summary(dq: NDArray, friction: NDArray) -> dict:
    """Per joint: ``fv``, ``fc`` fitted to the friction torques ``friction`` ``(N, n)`` applied
    at velocities ``dq`` where ``|dq| > FRICTION_FIT_SPEED``; ``residual_rms`` of that fit over
    every sample (what MuJoCo's smooth constraint differs from ``fc sign(dq)``)."""
    fv, fc, residual = [], [], []
    for j in range(dq.shape[1]):
        v, f = dq[:, j], friction[:, j]
        fast = np.abs(v) > FRICTION_FIT_SPEED
        if fast.sum() < 2:
            fv.append(0.0), fc.append(0.0), residual.append(float(np.sqrt(np.mean(f**2))))
            continue
        columns = np.column_stack([v, np.sign(v)])
        (a, b), *_ = np.linalg.lstsq(columns[fast], f[fast], rcond=None)
        fv.append(float(a)), fc.append(float(b))
        residual.append(float(np.sqrt(np.mean((f - columns @ [a, b]) ** 2))))
    return {"fv": fv, "fc": fc, "residual_rms": residual, "fit_speed": FRICTION_FIT_SPEED}
