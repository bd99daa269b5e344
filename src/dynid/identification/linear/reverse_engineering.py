"""Reverse engineering of a controller's dynamic model (Gaz et al. 2019, §IV-A).

The static regressor of ``[lower triangle of M(q); g(q)]`` (eq. 17-20) at poses where the
controller reports M and g, reduced to its base parameters and fitted by least squares. The
coefficients rebuild M^, g^, c^ (Christoffel symbols of M^) and the inverse dynamics on any
motion.
"""

from __future__ import annotations

import numpy as np

from dynid.data.dataset import StaticData, lower_triangle
from dynid.dynamics.static_regressor import static_regressor
from dynid.friction.models import NoFriction
from dynid.identification._fitting import check_rows, fit_base, fit_report
from dynid.identification._stream import CHUNK_SAMPLES, Factors, from_arrays
from dynid.identification.linear.estimators import OLS
from dynid.model.base_parameters import (
    Method,
    check_regrouping,
    joint1_gravity_is_zero,
    robot_base_parameters,
)
from dynid.model.linear_model import LinearModel
from dynid.robot import Robot

__all__ = ["identify_static"]


def identify_static(robot: Robot, samples: StaticData, *, drop_joint1_gravity: bool | None = None,
                    method: Method = "rref", drop_above_percent: float | None = None
                    ) -> LinearModel:
    """Reverse engineering of a controller's dynamic model from its M(q), g(q) (Gaz §IV-A).

    ``drop_joint1_gravity``: leave out the g1 rows; default (None) drops them exactly when they
    are identically zero (``joint1_gravity_is_zero``), as Gaz did for the level Panda.
    """
    if samples.n_joints != robot.n_joints:
        raise ValueError(f"`samples` has {samples.n_joints} joints, `robot` {robot.n_joints}")
    drop = joint1_gravity_is_zero(robot) if drop_joint1_gravity is None else drop_joint1_gravity
    base = robot_base_parameters(robot, kind="static", drop_joint1_gravity=drop, method=method)
    # the static base must regroup like the torque regressor to predict torques: the torque
    # regressor's dependent columns must follow from its representatives with the static B,
    # within what the rank decision calls zero (the test the model loader makes)
    try:
        check_regrouping(robot, base, what="the static base parameters")
    except ValueError as error:
        raise ValueError(
            f"`robot`: {robot.name!r}'s M(q), g(q) regroup its parameters differently from its "
            f"joint torques; static identification cannot rebuild the inverse dynamics ({error})"
        ) from None
    n = robot.n_joints
    rows, cols = lower_triangle(n)
    targets = np.concatenate([samples.M[:, rows, cols],
                              samples.g[:, 1:] if drop else samples.g], axis=1)
    factors = Factors(base.rank)  # the static regressor built and folded a chunk at a time
    for start in range(0, samples.n_samples, CHUNK_SAMPLES):
        poses = slice(start, start + CHUNK_SAMPLES)
        stacked = base.reduce(static_regressor(robot, samples.q[poses], drop_joint1_gravity=drop))
        factors = from_arrays(stacked, targets[poses], factors=factors)
    check_rows(factors.n_rows, base.rank, "the static samples")
    estimator = OLS(drop_above_percent=drop_above_percent)
    fit_base(estimator, factors, base.base_names, "the static samples",
         "the poses must spread over every joint's range")
    return LinearModel(
        robot=robot, friction=NoFriction(n), base=base, coefficients=estimator.coef_,
        std=estimator.std_,
        report=fit_report(estimator, kind="static", n_samples=samples.n_samples,
                       joint1_gravity_dropped=drop),
    )
