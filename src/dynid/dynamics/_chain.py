"""A robot's joints as constant arrays, the form the compiled kernels read.

For joint i with canonical form ``pre @ motion(q) @ post`` (see ``dynid.robot.Joint``), the pose
of link i in link i-1 is ``x_parent = R x_child + p`` with, branch-free for both joint kinds,

    R = K0 + cos(q) Kc + sin(q) Ks            (Kc = Ks = 0 for a prismatic joint)
    p = p0 + cos(q) pc + sin(q) ps + q pl     (pl = 0 for a revolute joint)

by Rodrigues' formula ``Rot(a, q) = (E + A^2) + sin(q) A - cos(q) A^2`` with ``A = [a]x``.
The joint's motion subspace in link-i coordinates (about the link-i origin) is ``(zeta, eta)``:
angular and linear velocity per unit joint rate.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from dynid.robot import Robot
from dynid.robot._joint import skew


class ChainArrays(NamedTuple):
    revolute: NDArray  # (n,) 1.0 revolute, 0.0 prismatic
    k0: NDArray  # (n, 3, 3)
    kc: NDArray
    ks: NDArray
    p0: NDArray  # (n, 3)
    pc: NDArray
    ps: NDArray
    pl: NDArray
    zeta: NDArray  # (n, 3)
    eta: NDArray  # (n, 3)


@lru_cache(maxsize=64)
def chain_arrays(robot: Robot) -> ChainArrays:
    """Constant arrays of ``robot``'s joints (cached per robot instance)."""
    n = robot.n_joints
    out = {name: np.zeros((n, 3, 3) if name[0] == "k" else (n, 3)) for name in ChainArrays._fields}
    out["revolute"] = np.zeros(n)
    for i, joint in enumerate(robot.joints):
        r_pre, p_pre = joint.pre[:3, :3], joint.pre[:3, 3]
        r_post, p_post = joint.post[:3, :3], joint.post[:3, 3]
        a = joint.axis
        if joint.kind == "revolute":
            k = skew(a)
            square = k @ k
            out["revolute"][i] = 1.0
            out["k0"][i] = r_pre @ (np.eye(3) + square) @ r_post
            out["kc"][i] = -r_pre @ square @ r_post
            out["ks"][i] = r_pre @ k @ r_post
            out["p0"][i] = p_pre + r_pre @ (np.eye(3) + square) @ p_post
            out["pc"][i] = -r_pre @ square @ p_post
            out["ps"][i] = r_pre @ k @ p_post
            out["zeta"][i] = r_post.T @ a
            out["eta"][i] = r_post.T @ np.cross(a, p_post)
        else:
            out["k0"][i] = r_pre @ r_post
            out["p0"][i] = p_pre + r_pre @ p_post
            out["pl"][i] = r_pre @ a
            out["eta"][i] = r_post.T @ a
    # writeable C arrays: the one array type the compiled kernels are specialised for
    return ChainArrays(**{k: np.ascontiguousarray(v) for k, v in out.items()})
