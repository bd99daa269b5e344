"""Linear identification of base parameters from time series.

- ``identify(robot, data)``: the torque regressor along the data with linear friction columns,
  reduced to the base parameters, fitted by an estimator (OLS, WLS).
- ``identify_iv(robot, data, reference)``: IDIM-IV, instruments from the closed-loop twin of the
  current estimate.

The reverse engineering from a controller's M(q), g(q) lives in
``dynid.identification.reverse_engineering``.

Before fitting, the data's own base regressor is checked: base parameters that the data do not
excite (a joint that never moves, too few poses) raise a ValueError that names them.
"""

from __future__ import annotations

import warnings

import numpy as np

from dynid.data.dataset import Dataset
from dynid.data.preprocess import uniform_step
from dynid.friction.models import FrictionModel, NoFriction, ViscousCoulomb
from dynid.identification._fitting import check_rows, fit_base, fit_report
from dynid.identification.base_parameters import Method, robot_base_parameters
from dynid.identification.estimators import IV, OLS, WLS
from dynid.identification.model import LinearModel
from dynid.robot import Robot
from dynid.simulate.twin import simulate_closed_loop

__all__ = [
    "IVConvergenceWarning",
    "default_friction",
    "identify",
    "identify_iv",
]


def default_friction(robot: Robot) -> FrictionModel:
    """The robot file's friction model when it is linear, else viscous + Coulomb + offset; for
    a URDF robot, which states no friction model, viscous + Coulomb + offset too (every geared
    arm has friction, and a torque sensor an offset)."""
    if robot.convention == "urdf" and isinstance(robot.friction, NoFriction):
        return ViscousCoulomb.zeros(robot.n_joints)
    if robot.friction.linear:
        return robot.friction
    return ViscousCoulomb.zeros(robot.n_joints)


class IVConvergenceWarning(RuntimeWarning):
    """IDIM-IV stopped at its iteration limit while its estimate was still changing."""


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
    check_rows(stacked, base, "the data")
    fit_base(estimator, stacked, data.tau, base, "the data",
         "every joint must move, in both directions for Coulomb friction")
    return LinearModel(
        robot=robot, friction=friction, base=base, coefficients=estimator.coef_,
        std=estimator.std_,
        report=fit_report(estimator, kind="torque", n_samples=data.n_samples),
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
            report=fit_report(estimator, kind="torque", n_samples=data.n_samples,
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
