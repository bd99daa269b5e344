"""The joint-space inertia matrix ``M(q)``, batched."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid.dynamics import _kernels
from dynid.dynamics._chain import chain_arrays
from dynid.dynamics._inputs import joint_arrays, link_parameters
from dynid.dynamics._launch import launch
from dynid.robot import Robot

__all__ = ["mass_matrix"]


def mass_matrix(robot: Robot, q: ArrayLike, *, parameters: ArrayLike | None = None) -> NDArray:
    """``M(q)`` ``(*, n, n)``, symmetric (positive definite for physical parameters); the
    drives' reflected rotor inertias on its diagonal (``C^T diag(I_a) C`` through a coupled
    transmission)."""
    (q,), shape = joint_arrays(robot, q=q)
    n = robot.n_joints
    out = np.empty((q.shape[0], n, n))
    launch(_kernels.mass_matrix_serial, _kernels.mass_matrix, q.shape[0], *chain_arrays(robot),
           link_parameters(robot, parameters), q, out)
    if robot.rotor_inertia.any() and robot.transmission.uncoupled:
        out[:, np.arange(n), np.arange(n)] += robot.rotor_inertia
    elif robot.rotor_inertia.any():  # C^T diag(I_a) C: a coupled transmission's rotors
        out += robot.transmission.rotor_matrix(robot.rotor_inertia)
    return out.reshape(*shape, n, n)
