"""Recursive Newton–Euler inverse dynamics, batched: ``tau = M(q) ddq + c(q, dq) + g(q)``.

The rigid bodies and the drives' reflected rotor inertias (``robot.rotor_inertia * ddq``, part
of ``M(q)``; through a coupled transmission ``C^T diag(I_a) C ddq``, ``rotor_torque``); joint
friction is the robot's ``friction`` model, added by callers that want it
(``robot.friction.torque(dq)``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid.dynamics import _kernels
from dynid.dynamics._chain import chain_arrays
from dynid.dynamics._inputs import gravity_vector, joint_arrays, link_parameters
from dynid.dynamics._launch import launch
from dynid.robot import Robot

__all__ = ["coriolis_torque", "friction_torque", "gravity_torque", "rnea", "rotor_torque"]


def friction_torque(robot: Robot, dq: ArrayLike, t: ArrayLike | None = None) -> NDArray:
    """The robot's own friction torques ``(N, n)`` at ``dq`` ``(N, n)`` (along the time series
    ``t`` for a model with a state): ``robot.friction`` per joint, or the motors' friction at
    their speeds through a coupled transmission, ``C^T f(C dq)``."""
    transmission = robot.transmission
    speeds = transmission.motor_speeds(np.asarray(dq, dtype=float))
    torque = robot.friction.torque(speeds) if t is None else \
        robot.friction.torque_along(t, speeds)
    return transmission.to_joints(torque[..., None])[..., 0]


def rotor_torque(robot: Robot, ddq: NDArray, rotor_inertia: ArrayLike | None = None
                 ) -> NDArray:
    """The rotors' torques ``(*, n)`` at ``ddq`` ``(*, n)``: ``I_a ddq`` per joint, or
    ``C^T (I_a * (C ddq))`` through a coupled transmission (``dynid.robot.Transmission``).
    ``rotor_inertia`` ``(n,)``: in place of the robot's (an estimate's, of any sign)."""
    transmission = robot.transmission
    rotor = robot.rotor_inertia if rotor_inertia is None else rotor_inertia
    return transmission.to_joints((rotor * transmission.motor_speeds(ddq))[..., None])[..., 0]


def rnea(robot: Robot, q: ArrayLike, dq: ArrayLike, ddq: ArrayLike, *,
         parameters: ArrayLike | None = None, gravity: ArrayLike | None = None) -> NDArray:
    """Joint torques ``(*, n)`` for ``q, dq, ddq`` ``(*, n)``.

    ``parameters`` ``(n, 10)`` overrides the robot's link parameters, ``gravity`` ``(3,)`` its
    gravity vector (base frame, m/s^2).
    """
    (q, dq, ddq), shape = joint_arrays(robot, q=q, dq=dq, ddq=ddq)
    tau = np.empty_like(q)
    launch(_kernels.rnea_serial, _kernels.rnea, q.shape[0], *chain_arrays(robot),
           link_parameters(robot, parameters), q, dq, ddq, gravity_vector(robot, gravity), tau)
    if robot.rotor_inertia.any():
        tau += rotor_torque(robot, ddq)
    return tau.reshape(*shape, robot.n_joints)


def gravity_torque(robot: Robot, q: ArrayLike, *, parameters: ArrayLike | None = None) -> NDArray:
    """``g(q)`` ``(*, n)``: the torques that hold the robot still at ``q``."""
    (q,), shape = joint_arrays(robot, q=q)
    zero = np.zeros_like(q)
    return rnea(robot, q, zero, zero, parameters=parameters).reshape(*shape, robot.n_joints)


def coriolis_torque(robot: Robot, q: ArrayLike, dq: ArrayLike, *,
                    parameters: ArrayLike | None = None) -> NDArray:
    """``c(q, dq)`` ``(*, n)``: Coriolis and centrifugal torques (``C(q, dq) dq``)."""
    (q, dq), shape = joint_arrays(robot, q=q, dq=dq)
    tau = rnea(robot, q, dq, np.zeros_like(q), parameters=parameters, gravity=np.zeros(3))
    return tau.reshape(*shape, robot.n_joints)
