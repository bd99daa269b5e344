"""Joint-value arguments of the dynamics functions: checked once, flattened to ``(N, n)``."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_batch, as_float_array, same_batch
from dynid.robot import Robot


def joint_arrays(robot: Robot, **arrays: ArrayLike) -> tuple[list[NDArray], tuple[int, ...]]:
    """Each keyword ``(*, n)`` -> ``(N, n)`` contiguous float64; all share the batch shape ``*``."""
    if not isinstance(robot, Robot):
        raise TypeError(f"`robot` must be a dynid Robot, got {type(robot).__name__}")
    flat, shapes = [], []
    for name, value in arrays.items():
        array, shape = as_batch(name, value, robot.n_joints)
        flat.append(array)
        shapes.append(shape)
    same_batch(tuple(arrays), tuple(shapes))
    return flat, shapes[0]


def link_parameters(robot: Robot, parameters: ArrayLike | None) -> NDArray:
    """``(n, 10)`` parameters: the robot's own, or given as ``(n, 10)`` / flat ``(10 n,)``."""
    pi = robot.parameters if parameters is None else as_float_array("parameters", parameters)
    n = robot.n_joints
    if pi.shape == (10 * n,):
        pi = pi.reshape(n, 10)
    if pi.shape != (n, 10):
        raise ValueError(f"`parameters` must have shape ({n}, 10) or ({10 * n},), got {pi.shape}")
    return np.array(pi, order="C")  # a writeable copy (see joint_arrays)


def gravity_vector(robot: Robot, gravity: ArrayLike | None) -> NDArray:
    g = robot.gravity if gravity is None else as_float_array("gravity", gravity)
    if g.shape != (3,):
        raise ValueError(f"`gravity` must have shape (3,), got {g.shape}")
    return np.array(g)  # a writeable copy (see joint_arrays)
