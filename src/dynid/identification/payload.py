"""Payload identification (Gilbert et al. 2024, eq. 22 and Table 5): the arm's model frozen, a
payload rigidly fixed to the last link identified from a trajectory run with it.

Two bodies on one link add their link-frame 10-vectors (mass, first moment and inertia about
the link origin; eq. 22), so the torque the arm's model leaves unexplained is linear in the
payload's: ``tau - tau^_arm(q, dq, ddq) = Y_n(q, dq, ddq) pi_payload`` with ``Y_n`` the last
link's ten regressor columns. With the arm's parameters known, all ten are identifiable. The
fit is least squares under physical consistency — the payload's pseudo-inertia ``J >= 0``
(a real body: positive mass, triangle inequality) and an optional mass range — a ten-variable
SDP (cvxpy + Clarabel) on the compressed regressor. Results in the link frame and, when the
robot has one, the tool (flange) frame.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dynid.data.dataset import Dataset
from dynid.dynamics import friction_torque, regressor, rnea
from dynid.identification._sdp import link_pseudo_inertia, solve
from dynid.metrics import rmse
from dynid.model._compress import triangular_factor
from dynid.model.consistency import ConsistencyReport, check_consistency
from dynid.model.linear_model import LinearModel
from dynid.robot import Robot
from dynid.robot.inertia import (
    FIRST_MOMENT,
    INERTIA,
    MASS,
    N_LINK_PARAMETERS,
    to_com,
    transform_parameters,
)

__all__ = ["PayloadResult", "arm_torque", "identify_payload", "in_tool_frame"]


@dataclass
class PayloadResult:
    """An identified payload on the last link."""

    parameters: NDArray  # (10,) link-frame 10-vector of the payload alone
    tool_parameters: NDArray  # (10,) the same in the tool frame
    mass: float
    com: NDArray  # (3,) in the link frame [m]
    com_tool: NDArray  # (3,) in the tool frame [m]
    inertia_com: NDArray  # (3, 3) about the CoM, link-frame axes [kg m^2]
    std: NDArray  # (10,) of the unconstrained estimate (sigma^2 (Y^T Y)^-1)
    consistency: ConsistencyReport
    status: str
    rmse_before: NDArray  # (n,) of tau - tau^_arm
    rmse_after: NDArray  # (n,) with the payload
    seconds: float

    def to_json(self) -> dict:
        return {"mass": self.mass, "com": self.com.tolist(), "com_tool": self.com_tool.tolist(),
                "inertia_com": self.inertia_com.tolist(),
                "parameters": self.parameters.tolist(),
                "tool_parameters": self.tool_parameters.tolist(), "std": self.std.tolist(),
                "consistent": self.consistency.consistent, "status": self.status,
                "rmse_before": self.rmse_before.tolist(),
                "rmse_after": self.rmse_after.tolist(), "seconds": self.seconds}


def in_tool_frame(robot: Robot, parameters: NDArray) -> NDArray:
    """A last-link 10-vector re-expressed in the robot's tool frame."""
    rotation, position = robot.tool[:3, :3], robot.tool[:3, 3]
    return transform_parameters(parameters, rotation.T, -rotation.T @ position)


def arm_torque(arm: LinearModel | Robot, data: Dataset) -> NDArray:
    """The frozen arm's torques along ``data``: an identified model's prediction, or a robot's
    inverse dynamics with its own friction."""
    if isinstance(arm, LinearModel):
        return arm.predict(data.q, data.dq, data.ddq, data.t)
    return rnea(arm, data.q, data.dq, data.ddq) + friction_torque(arm, data.dq, data.t)


def identify_payload(robot: Robot, arm: LinearModel | Robot, data: Dataset, *,
                     mass: tuple[float, float] | None = None) -> PayloadResult:
    """Identify the payload on ``robot``'s last link from ``data`` recorded with it.

    ``robot`` gives the kinematics (and the tool frame); ``arm`` is the arm's frozen model
    without the payload (a model from ``dynid identify``, or a robot with link parameters);
    ``mass`` an optional range [kg] for the payload's mass.
    """
    import cvxpy as cp

    clock = time.perf_counter()
    n = robot.n_joints
    arm_joints = arm.robot.n_joints if isinstance(arm, LinearModel) else arm.n_joints
    if arm_joints != n:
        raise ValueError(f"`arm` has {arm_joints} joints, `robot` {n}")
    if data.ddq is None:
        raise ValueError("`data` has no accelerations (ddq): differentiate the velocities first")
    if data.n_joints != n:
        raise ValueError(f"`data` has {data.n_joints} joints, `robot` {n}")
    if mass is not None and not 0 <= mass[0] <= mass[1]:
        raise ValueError(f"`mass` must be a range 0 <= low <= high, got {mass}")
    residual = data.tau - arm_torque(arm, data)
    if np.linalg.norm(residual) <= 1e-9 * np.linalg.norm(data.tau):
        raise ValueError("payload: the arm's model explains `data` exactly: no payload to see")
    last = slice(N_LINK_PARAMETERS * (n - 1), N_LINK_PARAMETERS * n)
    columns = np.concatenate([regressor(robot, data.q[block], data.dq[block],
                                        data.ddq[block])[..., last]
                              for block in _blocks(data.n_samples)])
    stacked = columns.reshape(-1, N_LINK_PARAMETERS)
    factor = triangular_factor(stacked, extra=residual.ravel())
    r, z = factor[:-1, :-1], factor[:-1, -1]
    if np.linalg.matrix_rank(r) < N_LINK_PARAMETERS:
        raise ValueError("`data` do not excite the last link's ten parameters: move every "
                         "joint, the last ones through large rotations")
    unconstrained = np.linalg.solve(r, z)
    sigma2 = float(factor[-1, -1] ** 2) / max(stacked.shape[0] - N_LINK_PARAMETERS, 1)
    std = np.sqrt(sigma2 * np.sum(np.linalg.inv(r) ** 2, axis=1))
    # scaled unknowns: mass m, moments m L, inertias m L^2 with L = 0.1 m
    size = max(abs(unconstrained[MASS]), 0.1)
    scale = np.empty(N_LINK_PARAMETERS)
    scale[MASS], scale[FIRST_MOMENT], scale[INERTIA] = size, size * 0.1, size * 0.01
    x = cp.Variable(N_LINK_PARAMETERS)
    pi = cp.multiply(scale, x)
    m, _, _, pseudo = link_pseudo_inertia(pi)
    constraints = [pseudo >> 0]
    if mass is not None:
        constraints += [m >= mass[0], m <= mass[1]]
    norm = max(float(np.linalg.norm(z)), np.finfo(float).tiny)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(r @ pi - z) / norm**2), constraints)
    status = solve(problem, "payload",
                   hint="; check `mass` against the data" if mass is not None else "")
    parameters = scale * x.value
    if parameters[MASS] <= 3 * std[MASS]:
        raise ValueError(f"payload: the data show no payload mass ({parameters[MASS]:.3g} kg, "
                         f"std {std[MASS]:.2g} kg); was the log recorded with the payload?")
    m_value, com, inertia = to_com(parameters)
    tool = in_tool_frame(robot, parameters)
    predicted = stacked @ parameters
    return PayloadResult(
        parameters=parameters, tool_parameters=tool, mass=float(m_value), com=com,
        com_tool=tool[FIRST_MOMENT] / tool[MASS], inertia_com=inertia, std=std,
        consistency=check_consistency(parameters[None]), status=status,
        rmse_before=rmse(residual, np.zeros_like(residual)),
        rmse_after=rmse(residual, predicted.reshape(residual.shape)),
        seconds=time.perf_counter() - clock)


def _blocks(n_samples: int, size: int = 20_000) -> list[slice]:
    return [slice(start, start + size) for start in range(0, n_samples, size)]
