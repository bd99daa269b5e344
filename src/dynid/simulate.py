"""The digital twin: what a real robot would log along a trajectory.

Open loop: the robot follows the trajectory exactly and the logged torque is
``tau = rnea(q, dq, ddq) + tau_f(dq) + noise``, with the robot's own (truth) parameters and
friction model, Gaussian torque noise per joint, sampled at ``rate``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from dynid._validation import as_vector
from dynid.data import Dataset
from dynid.dynamics import rnea
from dynid.robot import Robot
from dynid.trajectory import FourierTrajectory

__all__ = ["simulate_open_loop"]


def simulate_open_loop(robot: Robot, trajectory: FourierTrajectory, *, duration: float,
                       rate: float = 1000.0, noise_std: ArrayLike = 0.0,
                       seed: int = 0) -> Dataset:
    """Sample ``trajectory`` for ``duration`` s at ``rate`` Hz and log noisy joint torques.

    ``noise_std``: torque noise standard deviation per joint [N m] (scalar or (n,)).
    The dataset carries the exact ``ddq`` of the trajectory.
    """
    if trajectory.n_joints != robot.n_joints:
        raise ValueError(
            f"`trajectory` has {trajectory.n_joints} joints, `robot` {robot.n_joints}"
        )
    if not np.isfinite(duration) or duration <= 0:
        raise ValueError(f"`duration` must be > 0 s, got {duration}")
    if not np.isfinite(rate) or rate <= 0:
        raise ValueError(f"`rate` must be > 0 Hz, got {rate}")
    sigma = as_vector("noise_std", noise_std, robot.n_joints)
    if (sigma < 0).any():
        raise ValueError(f"`noise_std` must be >= 0, got {sigma}")
    t = np.arange(round(duration * rate) + 1) / rate
    q, dq, ddq = trajectory.sample(t)
    tau = rnea(robot, q, dq, ddq) + robot.friction.torque(dq)
    tau += np.random.default_rng(seed).standard_normal(tau.shape) * sigma
    return Dataset(t=t, q=q, dq=dq, ddq=ddq, tau=tau, metadata={
        "robot": robot.name, "source": "digital twin (open loop)", "rate_hz": rate,
        "noise_std": sigma.tolist(), "friction": robot.friction.name, "seed": seed,
    })
