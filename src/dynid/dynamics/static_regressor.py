"""The static regressor of Gaz et al. 2019 (eq. 17-20): M(q) and g(q) are linear in pi.

At a pose q, ``s(q) = [m~(q); g(q)] = Y_s(q) pi`` stacks the lower triangle of the joint-space
inertia matrix, row by row (``M[0,0], M[1,0], M[1,1], M[2,0], ...``: n(n+1)/2 entries), then the
gravity torques. Column j of M is the torque that a unit acceleration of joint j needs at rest
without gravity, so ``Y_s`` is built from the torque regressor at ``(q, 0, e_j)`` and ``(q, 0, 0)``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid.data.dataset import lower_triangle
from dynid.dynamics._inputs import joint_arrays
from dynid.dynamics.regressor import regressor
from dynid.robot import Robot

__all__ = [
    "static_regressor",
]


def static_regressor(robot: Robot, q: ArrayLike, *, drop_joint1_gravity: bool = False,
                     gravity: ArrayLike | None = None) -> NDArray:
    """``Y_s`` ``(*, n(n+1)/2 + n, 10 n)`` at poses ``q`` ``(*, n)``, so that
    ``[lower_triangle(M(q)); g(q)] = Y_s @ pi``.

    ``drop_joint1_gravity``: leave out the g1 row (identically zero on a level base whose first
    joint axis is vertical, as in Gaz §VI).
    """
    (q,), shape = joint_arrays(robot, q=q)
    n_samples, n = q.shape
    zero = np.zeros_like(q)
    # joint j accelerated alone, no gravity: column j of M; then gravity alone
    poses = np.repeat(q[None], n + 1, axis=0)  # (n + 1, N, n)
    accelerations = np.zeros((n + 1, n_samples, n))
    accelerations[np.arange(n), :, np.arange(n)] = 1.0
    y_inertia = regressor(robot, poses[:n].reshape(-1, n), zero.repeat(n, axis=0).reshape(-1, n),
                          accelerations[:n].reshape(-1, n), gravity=np.zeros(3))
    y_inertia = y_inertia.reshape(n, n_samples, n, 10 * n)  # (column j, sample, row i, param)
    y_gravity = regressor(robot, q, zero, zero, gravity=gravity)
    rows, cols = lower_triangle(n)
    y_mass = y_inertia[cols, :, rows].transpose(1, 0, 2)  # (N, n(n+1)/2, 10 n)
    if drop_joint1_gravity:
        y_gravity = y_gravity[:, 1:]
    out = np.concatenate([y_mass, y_gravity], axis=1)
    return out.reshape(*shape, out.shape[-2], out.shape[-1])
