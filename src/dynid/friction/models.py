"""Joint friction models, one interface: ``model.torque(dq) -> (N, n)``.

Models linear in their parameters (``ViscousCoulomb``, ``Arctan``) also give regressor columns,
``model.regressor(dq) -> (N, n, k n)`` with ``torque == regressor @ coefficients``, so they can be
identified jointly with the inertial parameters. Coefficient vectors are type-major
(e.g. ``fv_1..fv_n, fc_1..fc_n, fo_1..fo_n``, as in Gaz 2019 Table III rows 44-64).

Friction torque adds to the rigid-body torque: ``tau = M(q) ddq + c(q, dq) + g(q) + tau_f(dq)``.

Every model's parameters are per-joint vectors, one dataclass field each; ``per_joint()`` gives
them as an ``(n, k)`` table and ``KINDS`` says how each is fitted (``dynid.friction.fit``).
The nonlinear Stribeck and LuGre models end in a constant offset ``fo`` per joint (a torque
sensor's zero error, as ``ViscousCoulomb``'s ``fo``): optional, zeros when left out, so that
robot and model files written before it still load (``OPTIONAL``).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, fields
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._reading import check_keys
from dynid._validation import as_batch, as_vector, frozen_copy

__all__ = [
    "DEFAULT_ARCTAN_DELTA",
    "DEFAULT_ARCTAN_K_V",
    "FRICTION_MODELS",
    "Arctan",
    "FrictionModel",
    "LuGre",
    "NoFriction",
    "Sigmoid",
    "Stribeck",
    "ViscousCoulomb",
    "friction_from_dict",
]


# Shape constants of the arctan model when neither the robot file nor the caller gives them
# (Szabó 2021 does not print its values): a sharp sign and a slower Stribeck decay [s/rad].
DEFAULT_ARCTAN_K_V = 100.0
DEFAULT_ARCTAN_DELTA = 10.0


class FrictionModel(abc.ABC):
    """Base of all friction models: per-joint parameter vectors, ``torque(dq)``."""

    name: ClassVar[str]
    linear: ClassVar[bool] = False
    stateful: ClassVar[bool] = False  # a state integrated with the joints (LuGre)
    # how each field is fitted: "free", "nonneg" (>= 0), "positive" (> 0, fitted as its
    # logarithm) or "fixed" (a shape constant kept from the template)
    KINDS: ClassVar[dict[str, str]] = {}
    # fields that may be left out (constructor and robot file): zeros, one per joint
    OPTIONAL: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    def per_joint(self) -> NDArray:
        """``(n, k)``: row j holds joint j's values of the fields, in field order."""
        return np.stack([np.asarray(getattr(self, name), dtype=float)
                         for name in self.field_names()], axis=1)

    def from_per_joint(self, values: ArrayLike) -> FrictionModel:
        """The same model type with the ``(n, k)`` table ``values`` (see ``per_joint``)."""
        table = np.asarray(values, dtype=float)
        return type(self)(*table.T)

    def torque_along(self, t: ArrayLike, dq: ArrayLike) -> NDArray:
        """Friction torques ``(N, n)`` along a time series (``t`` strictly increasing): the
        same as ``torque(dq)`` for a static model; a stateful one integrates its state."""
        return self.torque(dq)

    def parameter_jacobian(self, dq: ArrayLike) -> NDArray:
        """``(*, n, k)``: the derivative of joint j's torque ``torque(dq)[..., j]`` by joint
        j's value of each field, in field order (a joint's torque depends on its own fields
        only; "fixed" fields included). Closed form, in the fields' own units (the chain rule
        for a logarithm is the fitter's)."""
        raise NotImplementedError(f"{self.name!r} friction has no parameter Jacobian")

    def torque_and_jacobian_along(self, t: ArrayLike, dq: ArrayLike) -> tuple[NDArray, NDArray]:
        """``(torque_along(t, dq), its parameter Jacobian)``, ``(N, n)`` and ``(N, n, k)``:
        ``(torque(dq), parameter_jacobian(dq))`` for a static model; a stateful one carries
        the state's sensitivities along the series."""
        return self.torque(dq), self.parameter_jacobian(dq)

    @property
    def n_joints(self) -> int:
        return len(getattr(self, fields(self)[0].name))  # type: ignore[arg-type]

    @abc.abstractmethod
    def torque(self, dq: ArrayLike) -> NDArray:
        """Friction torques ``(*, n)`` at joint velocities ``dq`` ``(*, n)``."""

    def with_coefficients(self, coefficients: ArrayLike) -> FrictionModel:
        """The same model with other identified coefficients (linear models only)."""
        raise TypeError(f"{self.name!r} friction is not linear in its parameters")

    def to_dict(self) -> dict:
        """``{"model": name, "parameters": {field: list}}``, the robot-file form."""
        return {
            "model": self.name,
            "parameters": {
                f.name: np.asarray(getattr(self, f.name)).tolist() for f in fields(self)
            },
        }

    def _vectors(self) -> None:
        n = len(np.atleast_1d(getattr(self, fields(self)[0].name)))
        for name in self.OPTIONAL:
            if getattr(self, name) is None:
                object.__setattr__(self, name, np.zeros(n))
        lengths = set()
        for f in fields(self):
            value = as_vector(f"{self.name}.{f.name}", getattr(self, f.name),
                              len(np.atleast_1d(getattr(self, f.name))))
            object.__setattr__(self, f.name, frozen_copy(value))
            lengths.add(value.size)
        if len(lengths) > 1:
            raise ValueError(
                f"{self.name} friction: all parameter vectors need one length per joint"
            )

    def _dq(self, dq: ArrayLike) -> tuple[NDArray, tuple[int, ...]]:
        return as_batch("dq", dq, self.n_joints)


@dataclass(frozen=True)
class NoFriction(FrictionModel):
    """No joint friction (``n_joints`` only sets the shape of the zero torque)."""

    joints: int = 0
    name: ClassVar[str] = "none"
    linear: ClassVar[bool] = True

    @property
    def n_joints(self) -> int:
        return self.joints

    def torque(self, dq: ArrayLike) -> NDArray:
        values, shape = self._dq(dq)
        return np.zeros_like(values).reshape(*shape, self.joints)

    def to_dict(self) -> dict:
        return {"model": self.name}

    @property
    def coefficients(self) -> NDArray:
        return np.zeros(0)

    def with_coefficients(self, coefficients: ArrayLike) -> NoFriction:
        return self

    def coefficient_names(self) -> list[str]:
        return []

    def regressor(self, dq: ArrayLike) -> NDArray:
        values, _ = self._dq(dq)
        return np.zeros((values.shape[0], self.joints, 0))

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return ()  # `joints` is the shape, not a parameter

    def per_joint(self) -> NDArray:
        return np.zeros((self.joints, 0))

    def from_per_joint(self, values: ArrayLike) -> NoFriction:
        return NoFriction(np.asarray(values).shape[0])

    def parameter_jacobian(self, dq: ArrayLike) -> NDArray:
        _, shape = self._dq(dq)
        return np.zeros((*shape, self.joints, 0))


@dataclass(frozen=True)
class ViscousCoulomb(FrictionModel):
    """``tau_f = fv dq + fc sign(dq) + fo`` per joint (Gaz et al. 2019, eq. 24)."""

    fv: NDArray
    fc: NDArray
    fo: NDArray
    name: ClassVar[str] = "viscous-coulomb"
    linear: ClassVar[bool] = True
    KINDS: ClassVar[dict[str, str]] = {"fv": "free", "fc": "free", "fo": "free"}

    def __post_init__(self) -> None:
        self._vectors()

    @staticmethod
    def columns(dq: NDArray) -> tuple[NDArray, ...]:
        return dq, np.sign(dq), np.ones_like(dq)

    @property
    def coefficients(self) -> NDArray:
        return np.concatenate([self.fv, self.fc, self.fo])

    def torque(self, dq: ArrayLike) -> NDArray:
        values, shape = self._dq(dq)
        out = self.fv * values + self.fc * np.sign(values) + self.fo
        return out.reshape(*shape, self.n_joints)

    def coefficient_names(self) -> list[str]:
        return _names(("fv", "fc", "fo"), self.n_joints)

    def regressor(self, dq: ArrayLike) -> NDArray:
        values, _ = self._dq(dq)
        return _diagonal_blocks(self.columns(values))

    def parameter_jacobian(self, dq: ArrayLike) -> NDArray:
        values, shape = self._dq(dq)
        return np.stack(self.columns(values), axis=-1).reshape(*shape, self.n_joints, 3)

    def with_coefficients(self, coefficients: ArrayLike) -> ViscousCoulomb:
        """The same model with other coefficients ``fv_1..n, fc_1..n, fo_1..n``."""
        return ViscousCoulomb.from_coefficients(coefficients, self.n_joints)

    @classmethod
    def zeros(cls, n_joints: int) -> ViscousCoulomb:
        """All coefficients zero: the template whose columns an identification fills."""
        return cls(*np.zeros((3, n_joints)))

    @classmethod
    def from_coefficients(cls, coefficients: ArrayLike, n_joints: int) -> ViscousCoulomb:
        c = as_vector("coefficients", coefficients, 3 * n_joints)
        return cls(*np.split(c, 3))


@dataclass(frozen=True)
class Arctan(FrictionModel):
    """Static friction with stiction, linear in its parameters (Szabó 2021, eq. 7-9).

    ``tau_f = tau_s (2/pi) atan(k_v dq) + tau_sc (2/pi) atan(delta dq) + tau_v dq``:
    ``tau_s`` stiction, ``tau_sc`` Coulomb minus stiction, ``tau_v`` viscous; the shape
    constants ``k_v`` (sign approximation) and ``delta`` (Stribeck shape) [s/rad] are fixed.
    """

    tau_s: NDArray
    tau_sc: NDArray
    tau_v: NDArray
    k_v: NDArray
    delta: NDArray
    name: ClassVar[str] = "arctan"
    linear: ClassVar[bool] = True
    KINDS: ClassVar[dict[str, str]] = {"tau_s": "free", "tau_sc": "free", "tau_v": "free",
                                       "k_v": "fixed", "delta": "fixed"}

    def __post_init__(self) -> None:
        self._vectors()

    @classmethod
    def template(cls, n_joints: int, *, k_v: ArrayLike = DEFAULT_ARCTAN_K_V,
                 delta: ArrayLike = DEFAULT_ARCTAN_DELTA) -> Arctan:
        """Zero coefficients with the given shape constants: the columns to identify."""
        zeros = np.zeros(n_joints)
        return cls(zeros, zeros, zeros, as_vector("k_v", k_v, n_joints),
                   as_vector("delta", delta, n_joints))

    def columns(self, dq: NDArray) -> tuple[NDArray, ...]:
        return (
            2 / np.pi * np.arctan(self.k_v * dq),
            2 / np.pi * np.arctan(self.delta * dq),
            dq,
        )

    @property
    def coefficients(self) -> NDArray:
        return np.concatenate([self.tau_s, self.tau_sc, self.tau_v])

    def with_coefficients(self, coefficients: ArrayLike) -> Arctan:
        """The same shape constants with other ``tau_s, tau_sc, tau_v`` (type-major)."""
        values = as_vector("coefficients", coefficients, 3 * self.n_joints)
        return Arctan(*np.split(values, 3), self.k_v, self.delta)

    def torque(self, dq: ArrayLike) -> NDArray:
        values, shape = self._dq(dq)
        s, sc, v = self.columns(values)
        out = self.tau_s * s + self.tau_sc * sc + self.tau_v * v
        return out.reshape(*shape, self.n_joints)

    def coefficient_names(self) -> list[str]:
        return _names(("tau_s", "tau_sc", "tau_v"), self.n_joints)

    def parameter_jacobian(self, dq: ArrayLike) -> NDArray:
        values, shape = self._dq(dq)
        s, sc, v = self.columns(values)
        # d/dk (2/pi) atan(k v) = (2/pi) v / (1 + (k v)^2)
        d_k_v = self.tau_s * (2 / np.pi) * values / (1.0 + (self.k_v * values) ** 2)
        d_delta = self.tau_sc * (2 / np.pi) * values / (1.0 + (self.delta * values) ** 2)
        out = np.stack([s, sc, v, d_k_v, d_delta], axis=-1)
        return out.reshape(*shape, self.n_joints, 5)

    def regressor(self, dq: ArrayLike) -> NDArray:
        values, _ = self._dq(dq)
        return _diagonal_blocks(self.columns(values))


@dataclass(frozen=True)
class Sigmoid(FrictionModel):
    """``tau_f = phi1 / (1 + exp(-phi2 (dq + phi3))) - phi1 / (1 + exp(-phi2 phi3))``.

    Gaz et al. 2019, eq. 25: phi1 [N m], phi2 [s/rad], phi3 [rad/s]; zero at dq = 0. Far from
    rest it is an asymmetric Coulomb step, ``phi1 / 2 sign(dq) + phi1 (1/2 - L(phi2 phi3))``
    (``L`` the logistic): ``phi3`` acts as an offset of up to ``phi1 / 2``, which the Stribeck
    and LuGre models carry as their ``fo``.
    """

    phi1: NDArray
    phi2: NDArray
    phi3: NDArray
    name: ClassVar[str] = "sigmoid"
    KINDS: ClassVar[dict[str, str]] = {"phi1": "nonneg", "phi2": "positive", "phi3": "free"}

    def __post_init__(self) -> None:
        self._vectors()

    def torque(self, dq: ArrayLike) -> NDArray:
        values, shape = self._dq(dq)
        at_rest = _logistic(self.phi2 * self.phi3)
        out = self.phi1 * (_logistic(self.phi2 * (values + self.phi3)) - at_rest)
        return out.reshape(*shape, self.n_joints)

    def parameter_jacobian(self, dq: ArrayLike) -> NDArray:
        values, shape = self._dq(dq)
        moving = _logistic(self.phi2 * (values + self.phi3))
        at_rest = _logistic(self.phi2 * self.phi3)
        slope, slope_rest = moving * (1.0 - moving), at_rest * (1.0 - at_rest)  # L' = L (1 - L)
        out = np.stack([moving - at_rest,
                        self.phi1 * (slope * (values + self.phi3) - slope_rest * self.phi3),
                        self.phi1 * self.phi2 * (slope - slope_rest)], axis=-1)
        return out.reshape(*shape, self.n_joints, 3)


@dataclass(frozen=True)
class Stribeck(FrictionModel):
    """``tau_f = sign(dq) (fc + fs exp(-(|dq| / vs)^ks)) + fv dq + fo`` (Gilbert et al. 2024,
    eq. 13, with an offset).

    fc [N m] Coulomb, fs [N m] stiction above Coulomb, vs [rad/s] Stribeck velocity, ks the
    shape exponent, fv [N m s/rad] viscous, fo [N m] a constant offset (not in Gilbert's
    equation: a torque sensor's zero error; optional, default 0). Gilbert et al. print
    ``exp(-|dq| ks / vs)``, in which only ``vs / ks`` can be identified; the exponent form used
    here contains it (ks = 1 with vs the printed vs / ks) and is the usual generalised Stribeck
    curve.
    """

    fc: NDArray
    fs: NDArray
    vs: NDArray
    ks: NDArray
    fv: NDArray
    fo: NDArray | None = None
    name: ClassVar[str] = "stribeck"
    KINDS: ClassVar[dict[str, str]] = {"fc": "nonneg", "fs": "nonneg", "vs": "positive",
                                       "ks": "positive", "fv": "nonneg", "fo": "free"}
    OPTIONAL: ClassVar[tuple[str, ...]] = ("fo",)

    def __post_init__(self) -> None:
        self._vectors()
        if (self.vs <= 0).any() or (self.ks <= 0).any():
            raise ValueError(f"Stribeck: `vs` and `ks` must be > 0, got {self.vs}, {self.ks}")

    def torque(self, dq: ArrayLike) -> NDArray:
        values, shape = self._dq(dq)
        speed = np.abs(values)
        with np.errstate(over="ignore"):  # (speed / vs)^ks -> inf: exp(-inf) = 0, the limit
            decay = np.exp(-((speed / self.vs) ** self.ks))
        out = np.sign(values) * (self.fc + self.fs * decay) + self.fv * values + self.fo
        return out.reshape(*shape, self.n_joints)

    def parameter_jacobian(self, dq: ArrayLike) -> NDArray:
        values, shape = self._dq(dq)
        sign, ratio = np.sign(values), np.abs(values) / self.vs
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            power = ratio**self.ks  # u = (|dq| / vs)^ks; decay exp(-u)
            decay = np.exp(-power)
            # d exp(-u) / d vs = exp(-u) u ks / vs, / d ks = -exp(-u) u ln(|dq| / vs); both
            # vanish where u = 0 (at rest) or exp(-u) underflows (far from it)
            alive = (decay > 0) & (ratio > 0)
            d_vs = np.where(alive, decay * power * self.ks / self.vs, 0.0)
            d_ks = np.where(alive, -decay * power * np.log(np.where(alive, ratio, 1.0)), 0.0)
        out = np.stack([sign, sign * decay, sign * self.fs * d_vs, sign * self.fs * d_ks,
                        values, np.ones_like(values)], axis=-1)
        return out.reshape(*shape, self.n_joints, 6)


LEVEL_FLOOR = 1e-12  # N m: the LuGre Stribeck curve never reaches 0 (it divides by it)


@dataclass(frozen=True)
class LuGre(FrictionModel):
    """LuGre dynamic friction with a bristle state z per joint (Gilbert et al. 2024, eq. 12)::

        dz/dt = dq - sigma0 |dq| z / s(dq),   s(dq) = fc + (fs - fc) exp(-(dq / vs)^2)
        tau_f = sigma0 z + sigma1 dz/dt + sigma2 dq + fo

    sigma0 [N m/rad] bristle stiffness, sigma1 [N m s/rad] damping, sigma2 [N m s/rad] viscous,
    fc / fs [N m] Coulomb / stiction levels, vs [rad/s] Stribeck velocity, fo [N m] a constant
    offset (not in Gilbert's equation: a torque sensor's zero error; optional, default 0; it
    does not enter the state). ``torque(dq)`` is the steady state (dz/dt = 0):
    ``s(dq) sign(dq) + sigma2 dq + fo``; ``torque_with_state`` and
    ``state_derivative`` are for simulation, where z is integrated with the joints.
    """

    sigma0: NDArray
    sigma1: NDArray
    sigma2: NDArray
    fc: NDArray
    fs: NDArray
    vs: NDArray
    fo: NDArray | None = None
    name: ClassVar[str] = "lugre"
    stateful: ClassVar[bool] = True
    KINDS: ClassVar[dict[str, str]] = {"sigma0": "positive", "sigma1": "nonneg",
                                       "sigma2": "nonneg", "fc": "nonneg", "fs": "positive",
                                       "vs": "positive", "fo": "free"}
    OPTIONAL: ClassVar[tuple[str, ...]] = ("fo",)

    def __post_init__(self) -> None:
        self._vectors()
        if ((self.sigma0 <= 0).any() or (self.vs <= 0).any() or (self.fc < 0).any()
                or (self.fs <= 0).any() or (self.sigma1 < 0).any() or (self.sigma2 < 0).any()):
            raise ValueError("LuGre: `sigma0`, `vs`, `fs` must be > 0 and `fc`, `sigma1`, "
                             "`sigma2` >= 0")

    def _stribeck(self, dq: NDArray) -> NDArray:
        # floored: with fc = 0 the curve underflows to 0 at high speed (z's steady state is 0)
        return np.maximum(self.fc + (self.fs - self.fc) * np.exp(-((dq / self.vs) ** 2)),
                          LEVEL_FLOOR)

    def state_derivative(self, dq: NDArray, z: NDArray) -> NDArray:
        return dq - self.sigma0 * np.abs(dq) * z / self._stribeck(dq)

    def torque_with_state(self, dq: NDArray, z: NDArray) -> NDArray:
        return (self.sigma0 * z + self.sigma1 * self.state_derivative(dq, z)
                + self.sigma2 * dq + self.fo)

    def torque(self, dq: ArrayLike) -> NDArray:
        values, shape = self._dq(dq)
        out = self._stribeck(values) * np.sign(values) + self.sigma2 * values + self.fo
        return out.reshape(*shape, self.n_joints)

    def states_along(self, t: ArrayLike, dq: ArrayLike, z0: ArrayLike | None = None) -> NDArray:
        """The bristle state ``z`` ``(N, n)`` along a time series, from ``z0`` ``(n,)`` at the
        first sample (default: its steady state there). Over each step the velocity is held at
        the mean of its two ends, where ``dz/dt = dq - a z`` is linear: the exact exponential
        update is stable at any step (stiff bristles at 1 kHz included), unlike explicit Euler
        or RK4. A long series goes in pieces that share one sample: the states of ``t[a:b]``
        from ``z0 = z[a]`` are the whole series' ``z[a:b]``."""
        values, _ = self._dq(dq)
        times = as_vector("t", t, values.shape[0])
        if values.shape[0] > 1 and not (np.diff(times) > 0).all():
            raise ValueError("`t` must be strictly increasing")
        start = (np.full(self.n_joints, np.nan) if z0 is None
                 else as_vector("z0", z0, self.n_joints))
        if z0 is not None and not np.isfinite(start).all():
            raise ValueError(f"`z0` must be finite, got {start}")
        from dynid.friction._lugre import lugre_states

        return lugre_states(times, values, self.sigma0, self.fc, self.fs, self.vs,
                            LEVEL_FLOOR, start)

    def torque_along(self, t: ArrayLike, dq: ArrayLike) -> NDArray:
        values, shape = self._dq(dq)
        z = self.states_along(t, values)
        return self.torque_with_state(values, z).reshape(*shape, self.n_joints)

    def _stribeck_jacobian(self, dq: NDArray) -> NDArray:
        """``(N, n, 3)``: the Stribeck level ``s(dq)`` by fc, fs, vs (0 where floored)."""
        bell = np.exp(-((dq / self.vs) ** 2))
        live = self.fc + (self.fs - self.fc) * bell > LEVEL_FLOOR
        out = np.stack([1.0 - bell, bell,
                        (self.fs - self.fc) * bell * 2.0 * dq**2 / self.vs**3], axis=-1)
        return np.where(live[..., None], out, 0.0)

    def parameter_jacobian(self, dq: ArrayLike) -> NDArray:
        """Of the steady state ``torque(dq)``: sigma0 and sigma1 do not enter it (zeros)."""
        values, shape = self._dq(dq)
        sign = np.sign(values)[..., None]
        level = self._stribeck_jacobian(values)
        zeros = np.zeros_like(values)
        out = np.stack([zeros, zeros, values, *np.moveaxis(sign * level, -1, 0),
                        np.ones_like(values)], axis=-1)
        return out.reshape(*shape, self.n_joints, 7)

    def torque_and_jacobian_along(self, t: ArrayLike, dq: ArrayLike) -> tuple[NDArray, NDArray]:
        """Along the series from the steady state at the first sample (``torque_along``): the
        compiled recursion carries ``dz / d(sigma0, fc, fs, vs)`` beside ``z``, differentiated
        step by step (exact for the discrete update, not an approximation of it)."""
        values, shape = self._dq(dq)
        times = as_vector("t", t, values.shape[0])
        if values.shape[0] > 1 and not (np.diff(times) > 0).all():
            raise ValueError("`t` must be strictly increasing")
        from dynid.friction._lugre import lugre_torque_jacobian

        torque, out = lugre_torque_jacobian(times, values, self.sigma0, self.sigma1,
                                            self.sigma2, self.fc, self.fs, self.vs, self.fo,
                                            LEVEL_FLOOR)
        return (torque.reshape(*shape, self.n_joints),
                out.reshape(*shape, self.n_joints, 7))


def _logistic(x: NDArray) -> NDArray:
    """1 / (1 + exp(-x)) without overflow for large |x|."""
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _names(prefixes: tuple[str, ...], n: int) -> list[str]:
    return [f"{p}{j + 1}" for p in prefixes for j in range(n)]


def _diagonal_blocks(columns: tuple[NDArray, ...]) -> NDArray:
    """Per-joint columns ``(N, n)`` each -> type-major regressor ``(N, n, k n)``."""
    n_samples, n = columns[0].shape
    out = np.zeros((n_samples, n, len(columns) * n))
    joints = np.arange(n)
    for k, column in enumerate(columns):
        out[:, joints, k * n + joints] = column
    return out


FRICTION_MODELS: dict[str, type[FrictionModel]] = {
    model.name: model
    for model in (NoFriction, ViscousCoulomb, Arctan, Sigmoid, Stribeck, LuGre)
}


def friction_from_dict(spec: dict | None, n_joints: int) -> FrictionModel:
    """Build a model from the robot-file form ``{"model": name, "parameters": {...}}``; the
    model's ``OPTIONAL`` fields may be left out (zeros: files from before Stribeck's and
    LuGre's offset ``fo``), any other missing or unknown key is an error."""
    if spec is None:
        return NoFriction(n_joints)
    if not isinstance(spec, dict) or "model" not in spec:
        raise ValueError(f"`friction` must be a mapping with a `model` key, got {spec!r}")
    check_keys(spec, ("model", "parameters"), "friction")
    name = spec["model"]
    if not isinstance(name, str) or name not in FRICTION_MODELS:
        raise ValueError(f"`friction.model` must be one of {sorted(FRICTION_MODELS)}, got {name!r}")
    if name == "none":
        return NoFriction(n_joints)
    cls = FRICTION_MODELS[name]
    params = spec.get("parameters") or {}
    if not isinstance(params, dict):
        raise ValueError(f"`friction.parameters` must be a mapping, got {params!r:.60}")
    expected = [f.name for f in fields(cls)]
    required = [key for key in expected if key not in cls.OPTIONAL]
    if not set(required) <= set(params) <= set(expected):
        optional = (f" ({', '.join(cls.OPTIONAL)} optional, default 0)" if cls.OPTIONAL
                    else "")
        raise ValueError(
            f"`friction.parameters` for model {name!r} must have keys {expected}{optional}, "
            f"got {sorted(map(str, params))}"
        )
    for key in cls.OPTIONAL:
        if key in params and params[key] is None:  # `fo:` written empty is no zero
            raise ValueError(f"`friction.parameters.{key}` must be a list of numbers, got None")
    model = cls(**{key: params[key] for key in expected if key in params})
    if model.n_joints != n_joints:
        raise ValueError(
            f"`friction.parameters` must have {n_joints} values per key, got {model.n_joints}"
        )
    return model
