"""Forward dynamics, batched: ``ddq = M(q)^-1 (tau - c(q, dq) - g(q))``."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid.dynamics._inputs import joint_arrays
from dynid.dynamics.mass_matrix import mass_matrix
from dynid.dynamics.rnea import rnea
from dynid.robot import Robot

__all__ = ["forward_dynamics"]


def forward_dynamics(robot: Robot, q: ArrayLike, dq: ArrayLike, tau: ArrayLike, *,
                     parameters: ArrayLike | None = None) -> NDArray:
    """Joint accelerations ``(*, n)`` produced by joint torques ``tau`` ``(*, n)``.

    Rigid-body dynamics only: subtract friction from ``tau`` first if the robot has any.
    Raises ValueError where ``M(q)`` is singular (non-physical parameters).
    """
    (q, dq, tau), shape = joint_arrays(robot, q=q, dq=dq, tau=tau)
    bias = rnea(robot, q, dq, np.zeros_like(q), parameters=parameters)
    inertia = mass_matrix(robot, q, parameters=parameters)
    try:
        factor = np.linalg.cholesky(inertia)
    except np.linalg.LinAlgError:
        raise ValueError("M(q) is not positive definite at some `q`: check `parameters`") from None
    rhs = (tau - bias)[..., None]
    y = np.linalg.solve(factor, rhs)
    ddq = np.linalg.solve(np.swapaxes(factor, -1, -2), y)[..., 0]
    return ddq.reshape(*shape, robot.n_joints)
