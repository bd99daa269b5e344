"""The friction of an identified model as C statements, joint by joint.

What ``LinearModel.friction_torque`` computes: the linear friction columns (viscous, Coulomb
and offset; arctan) times the identified coefficients, plus the fitted model on top (any of
``dynid.friction.FRICTION_MODELS``), each with the formulas of ``dynid.friction.models``.
A LuGre model's bristle state z is the caller's: given, the torque is
``sigma0 z + sigma1 dz/dt + sigma2 dq + fo``; left out (a null pointer), the steady state
(``LuGre.torque``); and the state advances over a step of the loop by the exact exponential
update of ``LuGre.states_along`` (the velocity held at the mean of the step's two ends).

``Names`` carries how the text calls the helpers and the math functions, so one writer serves
C and C++.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.codegen._expressions import literal
from dynid.friction.models import (
    LEVEL_FLOOR,
    Arctan,
    FrictionModel,
    LuGre,
    NoFriction,
    Sigmoid,
    Stribeck,
    ViscousCoulomb,
)
from dynid.friction.models import _logistic as logistic

__all__ = ["Names", "friction_torque", "state_init", "state_rate", "state_step"]

TWO_OVER_PI = 2 / np.pi  # the arctan model's scale, as numpy computes it


@dataclass(frozen=True)
class Names:
    """How generated text calls things: ``math`` prefixes sin, exp, ... (``"std::"`` in C++);
    ``sign`` and ``abs`` are the helpers' names (branch-free sign with sign(0) = 0, as
    numpy's; an absolute value without libm)."""

    math: str
    sign: str
    abs: str


def _num(value: float, what: str) -> str:
    return literal(value, what)


def _terms(pairs: list[tuple[float, str]], what: str) -> str | None:
    """``c1 * e1 + c2 * e2 ...`` without the zero coefficients (``e`` empty: a constant);
    None when nothing is left."""
    parts = []
    for coefficient, expression in pairs:
        literal(coefficient, what)
        if coefficient == 0.0:
            continue
        parts.append(_num(coefficient, what) if not expression
                     else expression if coefficient == 1.0
                     else f"{_num(coefficient, what)} * {expression}")
    return " + ".join(parts) if parts else None


def _linear(model: FrictionModel, values: np.ndarray, j: int, v: str, names: Names,
            ) -> str | None:
    """Joint j of the linear columns ``model`` times the equivalent coefficients ``values``
    (type-major, as ``model.regressor``)."""
    n = model.n_joints
    what = "an identified friction coefficient"
    if isinstance(model, NoFriction):
        return None
    coefficient = [float(values[k * n + j]) for k in range(3)]
    if isinstance(model, ViscousCoulomb):
        columns = [v, f"{names.sign}({v})", ""]
    elif isinstance(model, Arctan):
        k_v, delta = float(model.k_v[j]), float(model.delta[j])
        columns = [f"{_num(TWO_OVER_PI, what)} * {names.math}atan({_num(k_v, what)} * {v})",
                   f"{_num(TWO_OVER_PI, what)} * {names.math}atan({_num(delta, what)} * {v})",
                   v]
    else:
        raise TypeError(f"`model.friction` must be a linear friction model, got "
                        f"{type(model).__name__}")
    return _terms(list(zip(coefficient, columns, strict=True)), what)


def _lugre_level(model: LuGre, j: int, v: str, names: Names) -> list[str]:
    """Statements giving ``level``, LuGre's floored Stribeck curve at velocity ``v``."""
    what = "a LuGre parameter"
    fc, fs, vs = float(model.fc[j]), float(model.fs[j]), float(model.vs[j])
    floor = _num(LEVEL_FLOOR, what)
    if fs - fc == 0.0:  # a flat curve: no Stribeck term (and no unused temporary)
        return [f"const double level = {_num(max(fc, LEVEL_FLOOR), what)};"]
    curve = _terms([(fc, ""), (fs - fc, f"{names.math}exp(-(e * e))")], what)
    return [f"const double e = {v} / {_num(vs, what)};", f"const double s = {curve};",
            f"const double level = s > {floor} ? s : {floor};"]


def _fitted(model: FrictionModel, j: int, v: str, names: Names,
            ) -> tuple[list[str], str | None, str | None]:
    """Joint j of a fitted model: (statements, the static torque, the torque given the state
    ``z[j]``: LuGre only)."""
    what = f"a fitted {model.name} friction parameter"
    if isinstance(model, NoFriction):
        return [], None, None
    if isinstance(model, ViscousCoulomb):
        return [], _terms([(float(model.fv[j]), v), (float(model.fc[j]), f"{names.sign}({v})"),
                           (float(model.fo[j]), "")], what), None
    if isinstance(model, Arctan):
        columns = _linear(model, np.concatenate([model.tau_s, model.tau_sc, model.tau_v]), j,
                          v, names)
        return [], columns, None
    if isinstance(model, Sigmoid):
        phi1, phi2, phi3 = float(model.phi1[j]), float(model.phi2[j]), float(model.phi3[j])
        if phi1 == 0.0:
            return [], None, None
        rest = float(logistic(np.float64(phi2 * phi3)))
        return [], (f"{_num(phi1, what)} * (0.5 * (1.0 + {names.math}tanh(0.5 * "
                    f"({_num(phi2, what)} * ({v} + {_num(phi3, what)})))) - "
                    f"{_num(rest, what)})"), None
    if isinstance(model, Stribeck):
        fc, fs, vs, ks = (float(model.fc[j]), float(model.fs[j]), float(model.vs[j]),
                          float(model.ks[j]))
        ratio = f"{names.abs}({v}) / {_num(vs, what)}"
        statements = []
        if fs != 0.0:
            if ks == 1.0:
                power = "x"
            elif ks == 2.0:
                power = "x * x"
            else:  # a non-integer shape exponent: pow, the one libm function beyond the list
                power = f"{names.math}pow(x, {_num(ks, what)})"
            statements = [f"const double x = {ratio};",
                          f"const double decay = {names.math}exp(-({power}));"]
        stiction = _terms([(fc, ""), (fs, "decay")], what)
        static = _terms([(1.0, f"{names.sign}({v}) * ({stiction})" if stiction else ""),
                         (float(model.fv[j]), v), (float(model.fo[j]), "")], what) \
            if stiction else _terms([(float(model.fv[j]), v), (float(model.fo[j]), "")], what)
        return statements, static, None
    if isinstance(model, LuGre):
        sigma0, sigma1, sigma2, fo = (float(model.sigma0[j]), float(model.sigma1[j]),
                                      float(model.sigma2[j]), float(model.fo[j]))
        statements = _lugre_level(model, j, v, names)
        static = _terms([(1.0, f"level * {names.sign}({v})"), (sigma2, v), (fo, "")], what)
        rate = f"({v} - {_num(sigma0, what)} * {names.abs}({v}) * z[{j}] / level)"
        with_state = _terms([(sigma0, f"z[{j}]"), (sigma1, rate), (sigma2, v), (fo, "")], what)
        return statements, static, with_state
    raise TypeError(f"`model.fitted_friction` must be one of dynid's friction models, got "
                    f"{type(model).__name__}")


def friction_torque(linear: FrictionModel, values: np.ndarray, fitted: FrictionModel | None,
                    n: int, names: Names, *, speed: str = "dq", target: str = "tau_f"
                    ) -> list[str]:
    """The body of ``friction(dq, z, tau_f)``: the linear columns' torque plus the fitted
    model's, joint by joint (``speed[j]`` in, ``target[j]`` out: a coupled transmission's
    motors' speeds and friction, ``dynid.codegen.generate``)."""
    lines = []
    for j in range(n):
        v = f"{speed}[{j}]"
        first = _linear(linear, values, j, v, names)
        statements, static, with_state = (_fitted(fitted, j, v, names) if fitted is not None
                                          else ([], None, None))
        base = f"{first} + " if first else ""
        if with_state is not None:
            lines += ["{", *[f"    {s}" for s in statements],
                      f"    if (z) {target}[{j}] = {base}({with_state});",
                      f"    else {target}[{j}] = {base}({static});", "}"]
        elif static is not None:
            body = [f"{target}[{j}] = {base}({static});"]
            lines += ["{", *[f"    {s}" for s in statements], *[f"    {b}" for b in body], "}"] \
                if statements else body
        else:
            lines.append(f"{target}[{j}] = {first if first else '0.0'};")
    return lines


def _lugre(fitted: FrictionModel | None) -> LuGre | None:
    return fitted if isinstance(fitted, LuGre) else None


def state_init(fitted: FrictionModel | None, n: int, names: Names) -> list[str]:
    """``z`` at its steady state for the velocities ``dq`` (as ``states_along`` starts)."""
    return _per_joint_at_level(fitted, n, names, lambda j, v, sigma0:
                               f"z[{j}] = {names.sign}({v}) * level / {sigma0};")


def state_rate(fitted: FrictionModel | None, n: int, names: Names) -> list[str]:
    """``dz/dt`` at velocities ``dq`` and state ``z`` (``LuGre.state_derivative``)."""
    return _per_joint_at_level(fitted, n, names, lambda j, v, sigma0:
                               f"dz[{j}] = {v} - {sigma0} * {names.abs}({v}) * z[{j}] / level;")


def _per_joint_at_level(fitted: FrictionModel | None, n: int, names: Names,
                        statement) -> list[str]:
    """For each joint j of a LuGre model, a block computing its Stribeck ``level`` at
    ``dq[j]``, then ``statement(j, "dq[j]", sigma0_j)``; nothing for another model."""
    model = _lugre(fitted)
    if model is None:
        return []
    lines = []
    for j in range(n):
        v = f"dq[{j}]"
        sigma0 = _num(float(model.sigma0[j]), "a LuGre parameter")
        lines += ["{", *[f"    {s}" for s in _lugre_level(model, j, v, names)],
                  f"    {statement(j, v, sigma0)}", "}"]
    return lines


def state_step(fitted: FrictionModel | None, n: int, names: Names) -> list[str]:
    """``z`` advanced over ``dt`` from velocity ``dq_prev`` to ``dq``: exact for the velocity
    held at the mean of the two (``dynid.friction._lugre.lugre_states``)."""
    model = _lugre(fitted)
    if model is None:
        return []
    lines = []
    for j in range(n):
        sigma0 = _num(float(model.sigma0[j]), "a LuGre parameter")
        lines += ["{", f"    const double v = 0.5 * (dq_prev[{j}] + dq[{j}]);",
                  *[f"    {s}" for s in _lugre_level(model, j, "v", names)],
                  f"    const double rate = {sigma0} * {names.abs}(v) / level;",
                  "    if (rate != 0.0) {",
                  f"        const double steady = {names.sign}(v) * level / {sigma0};",
                  f"        z[{j}] = steady + (z[{j}] - steady) * {names.math}exp(-rate * dt);",
                  "    }", "}"]
    return lines
