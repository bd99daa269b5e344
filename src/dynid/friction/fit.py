"""Friction models fitted to torque residuals, joint by joint (Gaz et al. 2019 §VI: the sigmoid
fitted on ``Delta tau = tau - tau^`` by Nelder-Mead; here any model of ``dynid.friction``).

Each joint's parameters are fitted on its own residual. Parameters of kind "positive" are
fitted as their logarithm, "nonneg" ones bounded at zero, "fixed" ones kept from the start
model. The start comes from the data (a viscous + Coulomb + offset line fitted first, then a
few Stribeck-velocity guesses) unless a start model is given. A stateful model (LuGre) is
fitted along the time series when ``t`` is given (its bristle stiffness and damping act only
there); without ``t`` it is fitted at steady state and keeps the start's ``sigma0``, ``sigma1``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_batch, as_vector
from dynid.friction.models import Arctan, FrictionModel, LuGre, Sigmoid, Stribeck, ViscousCoulomb
from dynid.metrics import mae, rmse

__all__ = ["FITTABLE_MODELS", "FIT_METHODS", "FrictionFit", "fit_friction", "friction_line",
           "line_start", "start_model"]

FITTABLE_MODELS = ("viscous-coulomb", "arctan", "sigmoid", "stribeck", "lugre")
FIT_METHODS = ("least-squares", "nelder-mead")
# LuGre bristles when the data cannot say (steady state): stiff, critically damped for ~1 kg m^2
DEFAULT_SIGMA0 = 1e3
DEFAULT_SIGMA1 = 1.0


@dataclass
class FrictionFit:
    """A friction model fitted per joint, and how well it reproduces the residual."""

    model: FrictionModel
    rmse: NDArray  # (n,) of residual - model, per joint [N m]
    mae: NDArray
    rmse_before: NDArray  # (n,) of the residual itself (no friction model)
    success: NDArray  # (n,) bool: the optimiser's word per joint
    messages: list[str]
    method: str
    seconds: float

    def to_json(self) -> dict:
        return {"model": self.model.to_dict(), "rmse": self.rmse.tolist(),
                "mae": self.mae.tolist(), "rmse_before": self.rmse_before.tolist(),
                "success": self.success.tolist(), "messages": self.messages,
                "method": self.method, "seconds": self.seconds}


def start_model(name: str, dq: ArrayLike, residual: ArrayLike) -> FrictionModel:
    """A data-based start for ``name``: per joint, the least-squares line
    ``fv dq + fc sign(dq) + fo`` through the residual, mapped onto the model's parameters
    (Stribeck velocity a tenth of the typical speed; sigmoid saturating at half of it; the
    offset ``fo`` of viscous-Coulomb, Stribeck and LuGre taken as it is)."""
    if name not in FITTABLE_MODELS:
        raise ValueError(f"`name` must be one of {FITTABLE_MODELS}, got {name!r}")
    velocity, torque = _pair(dq, residual)
    n = velocity.shape[1]
    fv, fc, fo = friction_line(velocity, torque).T
    speed = np.maximum(np.median(np.abs(velocity), axis=0), 1e-3)
    coulomb, viscous = np.abs(fc), np.maximum(fv, 0.0)
    if name == "viscous-coulomb":
        return ViscousCoulomb(fv, fc, fo)
    if name == "arctan":
        template = Arctan.template(n)
        return Arctan(fc, np.zeros(n), fv, template.k_v, template.delta)
    if name == "sigmoid":
        # phi1 / 2 is the saturation level; 95 % of it at half the typical speed
        level = coulomb + viscous * speed
        return Sigmoid(2 * np.maximum(level, 1e-3), 2.94 / (0.5 * speed), np.zeros(n))
    if name == "stribeck":
        return Stribeck(coulomb, 0.5 * coulomb, 0.1 * speed, np.ones(n), viscous, fo)
    return LuGre(np.full(n, DEFAULT_SIGMA0), np.full(n, DEFAULT_SIGMA1), viscous, coulomb,
                 np.maximum(1.5 * coulomb, 1e-3), 0.1 * speed, fo)


def friction_line(dq: ArrayLike, residual: ArrayLike) -> NDArray:
    """``(n, 3)``: per joint, the least-squares line ``fv dq + fc sign(dq) + fo`` through the
    residual ``(N, n)`` at velocities ``dq`` ``(N, n)``; rows ``(fv, fc, fo)``."""
    velocity, torque = _pair(dq, residual)
    n = velocity.shape[1]
    line = np.empty((n, 3))
    for j in range(n):
        columns = np.stack([velocity[:, j], np.sign(velocity[:, j]),
                            np.ones(velocity.shape[0])], axis=1)
        line[j] = np.linalg.lstsq(columns, torque[:, j], rcond=None)[0]
    return line


def line_start(name: str, line: ArrayLike, dq: ArrayLike, *, stiction: float = 0.0
               ) -> FrictionModel:
    """The model ``name`` where it reproduces the friction line ``fv dq + fc sign(dq) + fo``
    (``line`` ``(n, 3)``, rows ``(fv, fc, fo)``) as closely as it can, for a fit that should
    end no worse than the line: viscous-Coulomb exactly; Stribeck exactly (no stiction above
    Coulomb, ``fs = 0``); LuGre exactly in steady state (``fs = fc``: a flat Stribeck curve;
    stiff bristles ``DEFAULT_SIGMA0``, ``DEFAULT_SIGMA1``); arctan and sigmoid as far as their
    shapes allow (the sigmoid's ``phi3`` carries the offset, up to ``phi1 / 2``). A negative
    Coulomb or viscous coefficient, which Stribeck and LuGre cannot take, starts at 0.
    ``dq`` ``(N, n)``: the velocities, for the Stribeck velocity (a tenth of the typical speed)
    and the sigmoid's slope. ``stiction`` > 0 adds that fraction of the Coulomb level as
    stiction (Stribeck ``fs``, LuGre ``fs - fc``): a start shaped like friction usually is,
    no longer the line."""
    if not stiction >= 0:
        raise ValueError(f"`stiction` must be >= 0, got {stiction}")
    if name not in FITTABLE_MODELS:
        raise ValueError(f"`name` must be one of {FITTABLE_MODELS}, got {name!r}")
    velocity, _ = as_batch("dq", dq, np.shape(dq)[-1])
    n = velocity.shape[1]
    table = np.asarray(line, dtype=float)
    if table.shape != (n, 3) or not np.isfinite(table).all():
        raise ValueError(f"`line` must be finite with shape ({n}, 3) (fv, fc, fo per joint), "
                         f"got shape {table.shape}")
    fv, fc, fo = table.T
    speed = np.maximum(np.median(np.abs(velocity), axis=0), 1e-3)
    coulomb, viscous = np.maximum(fc, 0.0), np.maximum(fv, 0.0)
    if name == "viscous-coulomb":
        return ViscousCoulomb(fv, fc, fo)
    if name == "arctan":
        template = Arctan.template(n)
        return Arctan(fc, np.zeros(n), fv, template.k_v, template.delta)
    if name == "sigmoid":
        # phi1 / 2 the saturation level, 95 % of it at half the typical speed; the logistic at
        # rest L(phi2 phi3) = 1/2 - fo / phi1 gives the offset far from rest
        phi1 = 2 * np.maximum(coulomb + viscous * speed, 1e-3)
        phi2 = 2.94 / (0.5 * speed)
        at_rest = np.clip(0.5 - fo / phi1, 0.05, 0.95)
        return Sigmoid(phi1, phi2, np.log(at_rest / (1 - at_rest)) / phi2)
    if name == "stribeck":
        return Stribeck(coulomb, stiction * coulomb, 0.1 * speed, np.ones(n), viscous, fo)
    return LuGre(np.full(n, DEFAULT_SIGMA0), np.full(n, DEFAULT_SIGMA1), viscous, coulomb,
                 np.maximum((1 + stiction) * coulomb, 1e-6), 0.1 * speed, fo)


def fit_friction(model: str | FrictionModel, dq: ArrayLike, residual: ArrayLike, *,
                 t: ArrayLike | None = None, method: str = "least-squares",
                 max_iterations: int = 2000) -> FrictionFit:
    """Fit a friction model to ``residual`` ``(N, n)`` (the torque the rigid-body model leaves,
    ``tau - tau^``) at joint velocities ``dq`` ``(N, n)``, joint by joint.

    ``model``: a name of ``FITTABLE_MODELS`` (start from the data) or a model instance (start
    from its values; its "fixed" fields stay). ``method``: bounded least squares (scipy's
    trust-region reflective, several starts for the Stribeck velocity) or Nelder-Mead on the
    sum of squares, as Gaz et al. did. ``t`` ``(N,)``: the time stamps, for a stateful model.
    """
    import scipy.optimize

    clock = time.perf_counter()
    if method not in FIT_METHODS:
        raise ValueError(f"`method` must be one of {FIT_METHODS}, got {method!r}")
    velocity, torque = _pair(dq, residual)
    n = velocity.shape[1]
    if isinstance(model, str) and model in FITTABLE_MODELS:
        start = start_model(model, velocity, torque)
    elif isinstance(model, FrictionModel) and model.name in FITTABLE_MODELS:
        if model.n_joints != n:
            raise ValueError(f"`model` has {model.n_joints} joints, the data {n}")
        start = model
    else:
        raise ValueError(f"`model` must be one of {FITTABLE_MODELS} or such a model, got "
                         f"{model!r}")
    times = None
    if t is not None:
        times = as_vector("t", t, velocity.shape[0])
        if not (np.diff(times) > 0).all():
            raise ValueError("`t` must be strictly increasing")
    kinds = [start.KINDS[name] for name in start.field_names()]
    if start.stateful and times is None:
        # without time the bristle dynamics do not show: keep sigma0, sigma1
        kinds = ["fixed" if name in ("sigma0", "sigma1") else kind
                 for name, kind in zip(start.field_names(), kinds, strict=True)]
    kinds = np.array(kinds)
    table = start.per_joint()
    fitted, success, messages = table.copy(), np.zeros(n, dtype=bool), []
    for j in range(n):
        best = None
        for row in _starts(start, table[j]):
            outcome = _fit_joint(start, row, kinds, velocity[:, j], torque[:, j], times,
                                 method, max_iterations, scipy.optimize)
            if best is None or outcome[1] < best[1]:
                best = outcome
        fitted[j], _, success[j], message = best
        messages.append(f"joint {j + 1}: {message}")
    result = start.from_per_joint(fitted)
    predicted = (result.torque_along(times, velocity) if times is not None
                 else result.torque(velocity))
    return FrictionFit(model=result, rmse=rmse(torque, predicted), mae=mae(torque, predicted),
                       rmse_before=rmse(torque, np.zeros_like(torque)), success=success,
                       messages=messages, method=method, seconds=time.perf_counter() - clock)


def _pair(dq: ArrayLike, residual: ArrayLike) -> tuple[NDArray, NDArray]:
    """Velocities and residual torques as (N, n) arrays of one shape."""
    if np.ndim(dq) != 2:
        raise ValueError(f"`dq` must be (N, n) (one column per joint), got shape "
                         f"{np.shape(dq)}")
    velocity, _ = as_batch("dq", dq, np.shape(dq)[-1])
    torque, _ = as_batch("residual", residual, velocity.shape[1])
    if torque.shape != velocity.shape:
        raise ValueError(f"`residual` must have the shape of `dq` {velocity.shape}, got "
                         f"{torque.shape}")
    return velocity, torque


def _starts(start: FrictionModel, row: NDArray) -> list[NDArray]:
    """The given start and, for a model with a Stribeck velocity, the same with it 5x smaller
    and larger: the one parameter whose basin of attraction is narrow."""
    names = start.field_names()
    if "vs" not in names:
        return [row]
    k = names.index("vs")
    out = []
    for factor in (1.0, 0.2, 5.0):
        variant = row.copy()
        variant[k] *= factor
        out.append(variant)
    return out


def _fit_joint(start, row, kinds, velocity, torque, times, method, max_iterations, optimize):
    """One joint: returns (values, sum of squares, success, message)."""
    free = kinds != "fixed"
    logs = kinds[free] == "positive"
    low = np.where(kinds[free] == "nonneg", 0.0, -np.inf)

    def values(x: NDArray) -> NDArray:
        out = row.copy()
        out[free] = np.where(logs, np.exp(np.minimum(x, 700.0)), x)
        return out

    single = start.from_per_joint(row[None])

    def residual(x: NDArray) -> NDArray:
        model = single.from_per_joint(values(x)[None])
        column = velocity[:, None]
        predicted = (model.torque_along(times, column) if times is not None
                     else model.torque(column))
        return predicted[:, 0] - torque

    x0 = np.where(logs, np.log(np.maximum(row[free], 1e-12)), row[free])
    x0 = np.maximum(x0, low)
    try:
        if method == "least-squares":
            result = optimize.least_squares(residual, x0, bounds=(low, np.inf), method="trf",
                                            x_scale="jac", max_nfev=max_iterations,
                                            xtol=1e-12, ftol=1e-12, gtol=1e-12)
            x, message, ok = result.x, result.message, bool(result.success)
        else:
            bounds = [(lo if np.isfinite(lo) else None, None) for lo in low]
            result = optimize.minimize(lambda x: float(np.sum(residual(x) ** 2)), x0,
                                       method="Nelder-Mead", bounds=bounds,
                                       options={"maxiter": max_iterations, "xatol": 1e-10,
                                                "fatol": 1e-14, "adaptive": True})
            x, message, ok = result.x, result.message, bool(result.success)
    except (ValueError, ArithmeticError) as error:  # outside the model's own domain
        return row, np.inf, False, str(error)
    r = residual(x)
    return values(x), float(r @ r), ok, str(message)
