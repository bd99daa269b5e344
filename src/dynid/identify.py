"""Linear identification of base parameters, from time series or from a controller's model.

- ``identify(robot, data)``: the torque regressor along the data with linear friction columns,
  reduced to the base parameters, fitted by an estimator (OLS, WLS).
- ``identify_static(robot, samples)``: Gaz et al. 2019 §IV-A, "reverse engineering": the
  static regressor of ``[lower triangle of M(q); g(q)]`` at poses where the controller reports
  M and g, reduced to its base parameters and fitted by least squares. The coefficients rebuild
  M^, g^, c^ and the inverse dynamics on any motion.

Before fitting, the data's own base regressor is checked: base parameters that the data do not
excite (a joint that never moves, too few poses) raise a ValueError that names them.
"""

from __future__ import annotations

import warnings

import numpy as np

from dynid._compress import triangular_factor
from dynid.data import Dataset, StaticData
from dynid.dynamics.static_regressor import lower_triangle, static_regressor
from dynid.estimate import IV, OLS, WLS, RankDeficiencyWarning
from dynid.friction import FrictionModel, NoFriction, ViscousCoulomb
from dynid.identifiability import (
    BaseParameters,
    Method,
    base_parameters,
    robot_base_parameters,
    structural_regressor,
)
from dynid.model import LinearModel
from dynid.robot import Robot

__all__ = [
    "IVConvergenceWarning",
    "default_friction",
    "identify",
    "identify_iv",
    "identify_static",
    "joint1_gravity_is_zero",
]


def default_friction(robot: Robot) -> FrictionModel:
    """The robot file's friction model when it is linear, else viscous + Coulomb + offset."""
    if robot.friction.linear:
        return robot.friction
    return ViscousCoulomb.zeros(robot.n_joints)


class IVConvergenceWarning(RuntimeWarning):
    """IDIM-IV stopped at its iteration limit while its estimate was still changing."""


def _check_rows(stacked: np.ndarray, base: BaseParameters, what: str) -> None:
    if stacked.shape[0] * stacked.shape[1] <= base.rank:
        raise ValueError(
            f"{what}: {stacked.shape[0] * stacked.shape[1]} equations for {base.rank} base "
            "parameters; record more samples"
        )


def _fit(estimator, stacked: np.ndarray, targets: np.ndarray, base: BaseParameters,
         what: str, hint: str) -> None:
    """Fit; if the data leave base parameters undetermined, a ValueError that names them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankDeficiencyWarning)
        estimator.fit(stacked, targets)
    if estimator.rank_ == base.rank - estimator.dropped_.size:
        return
    # the estimator's rank decision stands; rref on its factor only names the missing ones
    missing = []
    for rtol in (1e-10, 1e-6):
        found = base_parameters(estimator.factor_, names=base.base_names, rtol=rtol)
        missing = [name for k, name in enumerate(base.base_names)
                   if k not in set(found.independent)]
        if missing:
            break
    named = f"; not excited: {', '.join(missing)}" if missing else ""
    raise ValueError(
        f"{what} determine only {estimator.rank_} of {base.rank} base parameters{named} "
        f"({hint})"
    )


def _report(estimator, **extra) -> dict:
    return {
        "method": estimator.name, "rank": estimator.rank_,
        "condition_number": estimator.condition_number_,
        "relative_error_percent": estimator.relative_error_percent_,
        "sigma2": estimator.sigma2_, "n_equations": estimator.n_samples_,
        "dropped": estimator.dropped_.tolist(),
        **({"noise_std": estimator.noise_std_.tolist()} if hasattr(estimator, "noise_std_")
           else {}),
        **extra,
    }


def identify(robot: Robot, data: Dataset, *, friction: FrictionModel | None = None,
             estimator: OLS | WLS | None = None, method: Method = "rref") -> LinearModel:
    """Fit base parameters (and linear friction) to ``data``.

    ``friction``: a linear friction model whose columns are identified jointly (default
    ``default_friction(robot)``); ``NoFriction`` for rigid-body only. ``estimator``: ``OLS()``
    (default) or ``WLS(...)``, unfitted; it is fitted here and its figures go to the report.
    Needs ``data.ddq`` (differentiate filtered velocities first for real logs).
    """
    if data.ddq is None:
        raise ValueError("`data` has no accelerations (ddq): differentiate the velocities first")
    if data.n_joints != robot.n_joints:
        raise ValueError(f"`data` has {data.n_joints} joints, `robot` {robot.n_joints}")
    friction = default_friction(robot) if friction is None else friction
    if not friction.linear:
        raise ValueError(f"`friction` must be linear in its parameters, got {friction.name!r}")
    estimator = OLS() if estimator is None else estimator
    base = robot_base_parameters(robot, friction=friction, method=method)
    model = LinearModel(robot=robot, friction=friction, base=base,
                        coefficients=np.zeros(base.rank), std=np.zeros(base.rank))
    stacked = model.base_regressor(data.q, data.dq, data.ddq)
    _check_rows(stacked, base, "the data")
    _fit(estimator, stacked, data.tau, base, "the data",
         "every joint must move, in both directions for Coulomb friction")
    return LinearModel(
        robot=robot, friction=friction, base=base, coefficients=estimator.coef_,
        std=estimator.std_,
        report=_report(estimator, kind="torque", n_samples=data.n_samples),
    )


def joint1_gravity_is_zero(robot: Robot) -> bool:
    """True when joint 1 is revolute about the gravity direction (a level base): g1 == 0."""
    joint = robot.joints[0]
    axis = joint.pre[:3, :3] @ joint.axis
    g = robot.gravity
    return bool(joint.kind == "revolute" and np.linalg.norm(np.cross(axis, g)) <= 1e-12 * max(
        np.linalg.norm(g), 1.0))


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
    # regressor's dependent columns must follow from its representatives with the static B
    torque = triangular_factor(structural_regressor(robot))
    reproduced = torque[:, base.independent] @ base.regrouping
    scale = np.linalg.norm(torque, axis=0).max()
    if np.abs(reproduced - torque).max() > 1e-8 * scale:
        raise ValueError(
            f"`robot`: {robot.name!r}'s M(q), g(q) regroup its parameters differently from its "
            "joint torques; static identification cannot rebuild the inverse dynamics"
        )
    n = robot.n_joints
    rows, cols = lower_triangle(n)
    targets = np.concatenate([samples.M[:, rows, cols],
                              samples.g[:, 1:] if drop else samples.g], axis=1)
    stacked = base.reduce(static_regressor(robot, samples.q, drop_joint1_gravity=drop))
    _check_rows(stacked, base, "the static samples")
    estimator = OLS(drop_above_percent=drop_above_percent)
    _fit(estimator, stacked, targets, base, "the static samples",
         "the poses must spread over every joint's range")
    return LinearModel(
        robot=robot, friction=NoFriction(n), base=base, coefficients=estimator.coef_,
        std=estimator.std_,
        report=_report(estimator, kind="static", n_samples=samples.n_samples,
                       joint1_gravity_dropped=drop),
    )


def identify_iv(robot: Robot, data: Dataset, reference, *, natural_frequency=20.0,
                controller: Robot | None = None, friction: FrictionModel | None = None,
                iterations: int = 5, tolerance: float = 1e-2, method: Method = "rref"
                ) -> LinearModel:
    """IDIM-IV (Janot et al. 2014) for a log recorded in closed loop.

    Starting from OLS, the identified model (its equivalent parameters and friction) is
    simulated under the same computed-torque controller (``controller`` model, default the
    ``robot`` as given; gains from ``natural_frequency``) tracking the same ``reference``
    trajectory; the regressor of that noise-free simulation is the instrument matrix, and the
    estimate is refreshed until it changes by less than ``tolerance`` (relative; iterates
    wander at the noise level, so 1 % by default) or after ``iterations`` — then an
    ``IVConvergenceWarning``; ``report["converged"]`` says which. Unlike OLS it stays unbiased
    when the regressor is built from noisy, filtered measurements. ``data`` must be uniformly
    sampled (resample first).
    """
    from dynid.preprocess import uniform_step
    from dynid.simulate import simulate_closed_loop

    if not (isinstance(iterations, int) and iterations >= 1):
        raise ValueError(f"`iterations` must be an integer >= 1, got {iterations}")
    step = uniform_step(data)
    model = identify(robot, data, friction=friction, method=method)
    measured = model.base_regressor(data.q, data.dq, data.ddq)
    history: list[float] = []
    for iteration in range(1, iterations + 1):
        parameters = model.equivalent_parameters
        plant = robot.with_parameters(parameters[: model.n_rigid]).with_friction(
            model.friction.with_coefficients(parameters[model.n_rigid:]))
        try:
            simulated = simulate_closed_loop(
                plant, reference, duration=data.duration, rate=1.0 / step,
                natural_frequency=natural_frequency, controller=controller or robot,
                start=float(data.t[0]))
        except ValueError as error:
            raise ValueError(
                f"IV iteration {iteration}: the model identified so far cannot be simulated "
                f"({error}); the log may be too noisy or too short for IV — use OLS/WLS"
            ) from None
        instruments = model.base_regressor(simulated.q, simulated.dq, simulated.ddq)
        estimator = IV().fit(measured, data.tau, instruments=instruments)
        change = float(np.linalg.norm(estimator.coef_ - model.coefficients)
                       / np.linalg.norm(model.coefficients))
        history.append(change)
        converged = change < tolerance
        model = LinearModel(
            robot=robot, friction=model.friction, base=model.base,
            coefficients=estimator.coef_, std=estimator.std_,
            report=_report(estimator, kind="torque", n_samples=data.n_samples,
                           iterations=iteration, changes=history, converged=converged),
        )
        if converged:
            return model
    warnings.warn(
        f"IV did not converge in {iterations} iterations (last relative changes "
        f"{', '.join(f'{c:.2g}' for c in history[-3:])}): the estimate still moves",
        IVConvergenceWarning, stacklevel=2,
    )
    return model
