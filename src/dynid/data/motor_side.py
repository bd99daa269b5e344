"""Motor-side logs mapped to the joints through the robot's transmission.

A drive logs its motor: positions ``theta``, velocities, accelerations and torques ``tau_m``
in motor units. With the transmission ``theta = G q`` (``dynid.robot.Transmission``, whose
docstring states the convention) the joint side is ``q = G^-1 theta`` (likewise ``dq``,
``ddq``: ``G`` is constant) and, by the power balance, ``tau = G^T tau_m``. The map is linear
and constant, so it commutes with the filters and the differentiation of ``prepare``: a raw log
is mapped first and prepared after.

Motor currents stay per motor: through a simple transmission each joint's drive gain
``K_j`` (``tau_j = K_j i_j``) takes in the reduction, and only the positions map; through a
coupled one the joint torques mix several motors' currents, which the per-joint drive gains do
not describe: such a log is refused (give motor torques, ``tau_m = K_m i``).
"""

from __future__ import annotations

import numpy as np

from dynid.data.dataset import DERIVED_VELOCITY, Dataset
from dynid.robot import Transmission

__all__ = ["to_joint_side"]


def to_joint_side(data: Dataset, transmission: Transmission) -> Dataset:
    """The joint-side log of the motor-side ``data`` (module docstring): ``q, dq, ddq`` by
    ``G^-1``, torques by ``G^T``; motor currents kept (simple transmissions only). A
    preprocessing step says what was mapped. ValueError for a log of another joint count, a
    memory-mapped log (map it before writing it out), or currents through a coupling."""
    if not isinstance(transmission, Transmission):
        raise TypeError(f"`transmission` must be a dynid.robot.Transmission, got "
                        f"{type(transmission).__name__}")
    if data.n_joints != transmission.n_motors:
        raise ValueError(f"`data` has {data.n_joints} motors, the transmission "
                         f"{transmission.n_motors}")
    if any(isinstance(getattr(data, name), np.memmap) for name in ("q", "dq", "tau")):
        raise ValueError("`data` is memory-mapped: a motor-side log is mapped to the joints "
                         "in memory (read it without --mmap)")
    if data.effort == "current" and not transmission.uncoupled:
        raise ValueError("`data` holds motor currents, and the transmission couples motors: "
                         "a joint's torque then mixes several motors' currents, which "
                         "per-joint drive gains do not describe; log motor torques "
                         "(tau_m = K_m i) or joint torques")
    fields = {name: None if getattr(data, name) is None  # a log without velocities
              else transmission.joint_positions(getattr(data, name))
              for name in ("q", "dq", "ddq")}
    fields["tau"] = transmission.joint_torques(data.tau) if data.effort == "torque" \
        else np.asarray(data.tau)
    derived = data.metadata.get("velocity") == DERIVED_VELOCITY  # dq from q: not logged
    what = ", ".join(label for name, label in (("q", "positions"), ("dq", "velocities"),
                                                ("ddq", "accelerations"))
                     if getattr(data, name) is not None and not (name == "dq" and derived)) + \
        (" and torques (tau = G^T tau_m)" if data.effort == "torque"
         else " (motor currents kept per motor)")
    coupled = "" if transmission.uncoupled else \
        f", {len(transmission.couplings())} coupling(s)"
    step = (f"motor side to joint side: {what} through the transmission (reductions "
            f"{', '.join(f'{r:g}' for r in transmission.reductions)}{coupled})")
    metadata = {**data.metadata, "motor_side": True,
                "preprocessing": [*data.metadata.get("preprocessing", []), step]}
    return Dataset(t=data.t, metadata=metadata, M=data.M, g=data.g, effort=data.effort,
                   **fields)
