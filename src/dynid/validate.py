"""Validation: metrics of predicted against measured joint torques, and the validation of an
identified model on a dataset (errors with and without friction, residual statistics, physical
consistency, M(q) > 0 over the joint space)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_float_array

__all__ = [
    "ValidationReport",
    "check_compatible",
    "mae",
    "relative_error_percent",
    "residual_statistics",
    "rmse",
    "validate_model",
    "w_errors",
]


def _pair(measured: ArrayLike, predicted: ArrayLike) -> tuple[NDArray, NDArray]:
    y = as_float_array("measured", measured)
    y_hat = as_float_array("predicted", predicted)
    if y.shape != y_hat.shape or y.ndim != 2:
        raise ValueError(
            f"`measured` and `predicted` must both be (N, n), got {y.shape} and {y_hat.shape}"
        )
    return y, y_hat


def rmse(measured: ArrayLike, predicted: ArrayLike) -> NDArray:
    """Root-mean-square error per joint ``(n,)`` (Gilbert et al. 2024, eq. 32)."""
    y, y_hat = _pair(measured, predicted)
    return np.sqrt(np.mean((y - y_hat) ** 2, axis=0))


def mae(measured: ArrayLike, predicted: ArrayLike) -> NDArray:
    """Mean absolute error per joint ``(n,)``."""
    y, y_hat = _pair(measured, predicted)
    return np.mean(np.abs(y - y_hat), axis=0)


def relative_error_percent(measured: ArrayLike, predicted: ArrayLike) -> float:
    """``100 |tau - tau_hat| / |tau|`` over all samples and joints (Frobenius norms)."""
    y, y_hat = _pair(measured, predicted)
    return float(100.0 * np.linalg.norm(y - y_hat) / np.linalg.norm(y))


def w_errors(measured: ArrayLike, predicted: ArrayLike) -> tuple[float, float]:
    """The Jaco2 paper's eq. 9 over all joints: ``w = |e|_2 / N`` [N m] (N samples) and
    ``w_r = |e|_2 / |tau|_2``, with ``e = tau - tau^`` stacked over samples and joints."""
    y, y_hat = _pair(measured, predicted)
    error = float(np.linalg.norm(y - y_hat))
    return error / y.shape[0], error / float(np.linalg.norm(y))


def residual_statistics(measured: ArrayLike, predicted: ArrayLike) -> dict:
    """Per joint: mean (bias), standard deviation, largest magnitude, 95th percentile of the
    magnitude, and the lag-one autocorrelation of ``tau - tau^`` (near 0 for white residuals,
    near 1 where the model misses a slow effect)."""
    y, y_hat = _pair(measured, predicted)
    e = y - y_hat
    centred = e - e.mean(axis=0)
    power = np.sum(centred**2, axis=0)
    lag = np.sum(centred[1:] * centred[:-1], axis=0)
    return {"mean": e.mean(axis=0), "std": e.std(axis=0), "max_abs": np.abs(e).max(axis=0),
            "p95_abs": np.percentile(np.abs(e), 95, axis=0),
            "lag1_autocorrelation": np.where(power > 0, lag / np.where(power > 0, power, 1),
                                             0.0)}


@dataclass
class ValidationReport:
    """How well an identified model predicts a dataset, and whether it is a real body."""

    n_samples: int
    rmse: NDArray  # (n,) with friction
    mae: NDArray
    rmse_rigid: NDArray  # (n,) the rigid body alone (no friction)
    relative_error_percent: float
    w: float  # Jaco2 eq. 9 [N m]
    w_r: float
    residuals: dict  # residual_statistics
    rms_torque: NDArray  # (n,) of the measured torques
    physical: bool  # the model carries a full link parameter set that reproduces it
    consistency: object | None  # ConsistencyReport of that set, None for a base-only model
    mass_matrix: dict = field(default_factory=dict)  # M(q) > 0 over sampled poses

    @property
    def consistent(self) -> bool:
        """Physically consistent parameters and M(q) > 0 on every sampled pose."""
        return bool(self.consistency is not None and self.consistency.consistent
                    and self.mass_matrix.get("positive", False))

    def to_json(self) -> dict:
        return {"n_samples": self.n_samples, "rmse": self.rmse.tolist(),
                "mae": self.mae.tolist(), "rmse_rigid": self.rmse_rigid.tolist(),
                "relative_error_percent": self.relative_error_percent, "w": self.w,
                "w_r": self.w_r,
                "residuals": {k: np.asarray(v).tolist() for k, v in self.residuals.items()},
                "rms_torque": self.rms_torque.tolist(), "physical": self.physical,
                "consistent": self.consistent,
                "consistency": None if self.consistency is None else
                self.consistency.to_json(), "mass_matrix": self.mass_matrix}

    def lines(self) -> list[str]:
        n = self.rmse.size
        head = "  " + f"{'':<24}" + "".join(f"{'joint ' + str(j + 1):>9}" for j in range(n))

        def row(name, values, digits=4):
            return f"  {name:<24}" + "".join(f"{v:>9.{digits}f}" for v in values)

        out = [f"  {self.n_samples} samples; relative error {self.relative_error_percent:.3g} %, "
               f"w {self.w:.3g} N m, w_r {self.w_r:.3g} (Jaco2 eq. 9)", head,
               row("RMSE [N m]", self.rmse), row("MAE [N m]", self.mae),
               row("RMSE, no friction [N m]", self.rmse_rigid),
               row("RMS torque [N m]", self.rms_torque),
               row("residual mean [N m]", self.residuals["mean"]),
               row("residual lag-1 autocorr.", self.residuals["lag1_autocorrelation"], 3)]
        matrix = self.mass_matrix
        out.append(f"  M(q) > 0 on {matrix['positive_fraction'] * 100:.1f} % of "
                   f"{matrix['n_samples']} sampled poses (smallest eigenvalue "
                   f"{matrix['min_eigenvalue']:.3g})")
        if self.consistency is None:
            out.append("  no full link parameter set (a base-parameter estimate): physical "
                       "consistency does not apply; `dynid retrieve` finds a feasible set")
        else:
            out += self.consistency.lines()
        return out


def check_compatible(model, data) -> None:
    """A model and a dataset of the same robot: joint counts, and names where the data say."""
    n = model.robot.n_joints
    if data.n_joints != n:
        raise ValueError(f"the data have {data.n_joints} joints, the model's robot "
                         f"{model.robot.name!r} has {n}")
    logged, name = str(data.metadata.get("robot") or ""), model.robot.name
    # the same robot, or one a named variant of the other ("panda", "panda-identified")
    if logged and not (logged == name or logged.startswith(name + "-")
                       or name.startswith(logged + "-")):
        raise ValueError(f"the data were logged on robot {logged!r}, the model is of "
                         f"{model.robot.name!r}")


def validate_model(model, data, *, n_poses: int = 1000, seed: int = 0) -> ValidationReport:
    """Validate an identified ``LinearModel`` on ``data`` (a ``Dataset`` with accelerations).

    Torques with and without friction (a stateful friction along the data's time), the
    metrics above, the physical consistency of the model's link parameters when it has a full
    set (constrained, NLS or retrieved models; bounds from its robot file), and ``M^(q) > 0``
    on ``n_poses`` random poses within the limits.
    """
    from dynid.consistency import check_consistency, mass_matrix_check

    check_compatible(model, data)
    if data.ddq is None:
        raise ValueError("`data` has no accelerations (ddq): differentiate the velocities first")
    rigid = model.rigid_torque(data.q, data.dq, data.ddq)
    predicted = rigid + model.friction_torque(data.dq, data.t)
    parameters = model.physical_parameters
    consistency = (check_consistency(parameters, model.robot.bounds)
                   if parameters is not None else None)
    w, w_r = w_errors(data.tau, predicted)
    return ValidationReport(
        n_samples=data.n_samples, rmse=rmse(data.tau, predicted), mae=mae(data.tau, predicted),
        rmse_rigid=rmse(data.tau, rigid),
        relative_error_percent=relative_error_percent(data.tau, predicted), w=w, w_r=w_r,
        residuals=residual_statistics(data.tau, predicted),
        rms_torque=np.sqrt(np.mean(data.tau**2, axis=0)), physical=parameters is not None,
        consistency=consistency,
        mass_matrix=mass_matrix_check(model._rigid, n_samples=n_poses, seed=seed))
