"""Forward kinematics, batched: link and tool poses in the base frame."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid.dynamics._chain import chain_arrays
from dynid.dynamics._inputs import joint_arrays
from dynid.robot import Robot

__all__ = ["forward_kinematics", "tool_pose"]


def forward_kinematics(robot: Robot, q: ArrayLike) -> NDArray:
    """Poses ``(*, n, 4, 4)`` of every link frame in the base frame."""
    (q,), shape = joint_arrays(robot, q=q)
    chain = chain_arrays(robot)
    n_samples, n = q.shape
    c = np.where(chain.revolute > 0, np.cos(q), 0.0)
    s = np.where(chain.revolute > 0, np.sin(q), 0.0)
    lin = np.where(chain.revolute > 0, 0.0, q)
    local = np.zeros((n_samples, n, 4, 4))
    local[..., :3, :3] = (chain.k0 + c[..., None, None] * chain.kc
                          + s[..., None, None] * chain.ks)
    local[..., :3, 3] = (chain.p0 + c[..., None] * chain.pc + s[..., None] * chain.ps
                         + lin[..., None] * chain.pl)
    local[..., 3, 3] = 1.0
    poses = np.empty_like(local)
    poses[:, 0] = local[:, 0]
    for i in range(1, n):
        poses[:, i] = poses[:, i - 1] @ local[:, i]
    return poses.reshape(*shape, n, 4, 4)


def tool_pose(robot: Robot, q: ArrayLike) -> NDArray:
    """Pose ``(*, 4, 4)`` of the robot's tool frame in the base frame."""
    return forward_kinematics(robot, q)[..., -1, :, :] @ robot.tool
