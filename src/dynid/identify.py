"""Linear identification of base parameters from a dataset, end to end.

``identify(robot, data)`` builds the regressor along the data, appends the linear friction
columns, keeps the base columns (``dynid.identifiability``) and fits an estimator; the result
predicts torques on any other motion.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid.data import Dataset
from dynid.dynamics import regressor
from dynid.estimate import OLS
from dynid.friction import FrictionModel, ViscousCoulomb
from dynid.identifiability import BaseParameters, robot_base_parameters
from dynid.robot import Robot

__all__ = ["LinearModel", "identify"]


@dataclass(frozen=True)
class LinearModel:
    """Identified base parameters: ``tau = Y_b(q, dq, ddq) coefficients`` (friction included)."""

    robot: Robot
    friction: FrictionModel  # the template whose columns were identified (values unused)
    base: BaseParameters
    estimator: OLS

    @property
    def coefficients(self) -> NDArray:
        return self.estimator.coef_

    def base_regressor(self, q: ArrayLike, dq: ArrayLike, ddq: ArrayLike) -> NDArray:
        """``(N, n, r)``: rigid-body and friction columns, reduced to the base parameters."""
        y = regressor(self.robot, q, dq, ddq)
        return self.base.reduce(np.concatenate([y, self.friction.regressor(dq)], axis=-1))

    def predict(self, q: ArrayLike, dq: ArrayLike, ddq: ArrayLike) -> NDArray:
        """Joint torques ``(N, n)``."""
        return self.base_regressor(q, dq, ddq) @ self.coefficients


def identify(robot: Robot, data: Dataset, *, friction: FrictionModel | None = None) -> LinearModel:
    """Fit base parameters (and linear friction) to ``data`` by OLS.

    ``friction``: a linear friction model whose columns are identified jointly; default
    viscous + Coulomb + offset (Gaz 2019, eq. 24). ``NoFriction`` for rigid-body only.
    Needs ``data.ddq`` (differentiate filtered velocities first for real logs).
    """
    if data.ddq is None:
        raise ValueError("`data` has no accelerations (ddq): differentiate the velocities first")
    if data.n_joints != robot.n_joints:
        raise ValueError(f"`data` has {data.n_joints} joints, `robot` {robot.n_joints}")
    if friction is None:
        friction = ViscousCoulomb.zeros(robot.n_joints)
    if not friction.linear:
        raise ValueError(f"`friction` must be linear in its parameters, got {friction.name!r}")
    base = robot_base_parameters(robot, friction=friction)
    model = LinearModel(robot=robot, friction=friction, base=base, estimator=OLS())
    model.estimator.fit(model.base_regressor(data.q, data.dq, data.ddq), data.tau)
    return model
