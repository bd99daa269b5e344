"""Forward dynamics, batched: ``ddq = M(q)^-1 (tau - c(q, dq) - g(q))``, by the articulated-body
algorithm (Featherstone), O(n) per sample."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid.dynamics import _kernels
from dynid.dynamics._chain import chain_arrays
from dynid.dynamics._inputs import gravity_vector, joint_arrays, link_parameters
from dynid.dynamics._launch import launch
from dynid.robot import Robot

__all__ = ["forward_dynamics"]


def forward_dynamics(robot: Robot, q: ArrayLike, dq: ArrayLike, tau: ArrayLike, *,
                     parameters: ArrayLike | None = None) -> NDArray:
    """Joint accelerations ``(*, n)`` produced by joint torques ``tau`` ``(*, n)``.

    The rigid bodies and the drives' reflected rotor inertias (``M(q)`` as ``mass_matrix``
    gives it; through a coupled transmission's rotors by a Cholesky solve); no friction:
    subtract it from ``tau`` first if the robot has any. Raises ValueError where ``M(q)`` is
    not positive definite (non-physical parameters).
    """
    (q, dq, tau), shape = joint_arrays(robot, q=q, dq=dq, tau=tau)
    if robot.rotor_inertia.any() and not robot.transmission.uncoupled:
        return _coupled(robot, q, dq, tau, parameters).reshape(*shape, robot.n_joints)
    ddq = np.empty_like(q)
    definite = launch(_kernels.forward_dynamics_serial, _kernels.forward_dynamics, q.shape[0],
                      *chain_arrays(robot), link_parameters(robot, parameters),
                      np.array(robot.rotor_inertia, dtype=float), q, dq, tau,
                      gravity_vector(robot, None), ddq)
    if not definite:
        raise ValueError("M(q) is not positive definite at some `q`: check `parameters`")
    return ddq.reshape(*shape, robot.n_joints)


def _coupled(robot: Robot, q: NDArray, dq: NDArray, tau: NDArray,
             parameters: ArrayLike | None) -> NDArray:
    """Forward dynamics through a coupled transmission's rotors (``C^T diag(I_a) C`` is not
    diagonal, which the articulated-body recursion needs): ``M(q)`` with the rotors, the bias
    ``c + g`` by RNEA, a Cholesky solve per sample, O(n^3)."""
    from dynid.dynamics.mass_matrix import mass_matrix
    from dynid.dynamics.rnea import rnea
    inertia = mass_matrix(robot, q, parameters=parameters)
    bias = rnea(robot, q, dq, np.zeros_like(q), parameters=parameters)
    try:
        factor = np.linalg.cholesky(inertia)
    except np.linalg.LinAlgError:
        raise ValueError("M(q) is not positive definite at some `q`: check `parameters`") \
            from None
    half = np.linalg.solve(factor, (tau - bias)[..., None])
    return np.linalg.solve(np.swapaxes(factor, -1, -2), half)[..., 0]
