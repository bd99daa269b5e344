"""The friction models in the form a compiled loop reads: a model code and a per-joint table.

``compiled_friction(model)`` gives ``(code, table)``: ``table[j]`` holds joint j's parameters in
the order of ``LAYOUTS``, padded with zeros to ``WIDTH`` columns. ``evaluate`` gives one joint's
torque and state rate with the formulas of the models' ``torque`` / ``torque_with_state`` /
``state_derivative`` (``dynid.friction.models``; checked against them in
``tests/test_friction_compiled.py``). Apart from the models, as ``_lugre``, so that describing
a robot's friction never loads numba.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from dynid._jit import kernel
from dynid.friction.models import FRICTION_MODELS, LEVEL_FLOOR, FrictionModel
from dynid.friction.models import _logistic as _logistic_array

NONE, VISCOUS_COULOMB, ARCTAN, SIGMOID, STRIBECK, LUGRE = range(6)
WIDTH = 7  # columns of every table: the most any model needs

# model name -> (code, the fields in table order); the kernels below index by this order, and
# a sigmoid's table ends in one derived column, its logistic at rest
LAYOUTS: dict[str, tuple[int, tuple[str, ...]]] = {
    "none": (NONE, ()),
    "viscous-coulomb": (VISCOUS_COULOMB, ("fv", "fc", "fo")),
    "arctan": (ARCTAN, ("tau_s", "tau_sc", "tau_v", "k_v", "delta")),
    "sigmoid": (SIGMOID, ("phi1", "phi2", "phi3")),
    "stribeck": (STRIBECK, ("fc", "fs", "vs", "ks", "fv", "fo")),
    "lugre": (LUGRE, ("sigma0", "sigma1", "sigma2", "fc", "fs", "vs", "fo")),
}


def compiled_friction(model: FrictionModel) -> tuple[int, NDArray]:
    """``(code, table)`` of one of the built-in models; ``table`` ``(n, WIDTH)``, its unused
    columns zero."""
    layout = LAYOUTS.get(getattr(model, "name", None))
    if layout is None or type(model) is not FRICTION_MODELS[model.name]:
        raise TypeError(f"the compiled simulation knows the friction models "
                        f"{sorted(FRICTION_MODELS)}, got {type(model).__name__}")
    code, names = layout
    columns = [np.asarray(getattr(model, name), dtype=float) for name in names]
    if code == SIGMOID:  # its value at rest, a constant: computed once, as the model does
        columns.append(_logistic_array(columns[1] * columns[2]))
    table = np.zeros((model.n_joints, WIDTH))
    for column, values in enumerate(columns):
        table[:, column] = values
    return code, table


@kernel
def _logistic(x):
    """``1 / (1 + exp(-x))``: half the time of the model's tanh form (the same function; an
    overflowing exp gives the limit 0, and a compiled loop raises no warning for it)."""
    return 1.0 / (1.0 + np.exp(-x))


@kernel
def _lugre_rate(sigma0, fc, fs, vs, v, z):
    """LuGre's ``dz/dt``; its Stribeck level floored as in ``LuGre._stribeck``."""
    level = max(fc + (fs - fc) * np.exp(-((v / vs) ** 2)), LEVEL_FLOOR)
    return v - sigma0 * abs(v) * z / level


@kernel
def parameters(table, j):
    """Joint j's row of a table, as the tuple ``evaluate`` takes."""
    return (table[j, 0], table[j, 1], table[j, 2], table[j, 3], table[j, 4], table[j, 5],
            table[j, 6])


@kernel
def evaluate(code, row, v, z):
    """``(torque, dz/dt)`` of one joint's friction at velocity v and state z (the state and its
    rate: LuGre only, 0 otherwise); ``row``: the joint's parameters (``parameters``), a tuple
    rather than the table, so that a call takes no reference to an array."""
    a0, a1, a2, a3, a4, a5, a6 = row
    rate = 0.0
    if code == VISCOUS_COULOMB:  # fv, fc, fo
        out = a0 * v + a1 * np.sign(v) + a2
    elif code == ARCTAN:  # tau_s, tau_sc, tau_v, k_v, delta
        out = a0 * (2 / np.pi * np.arctan(a3 * v)) + a1 * (2 / np.pi * np.arctan(a4 * v)) + a2 * v
    elif code == SIGMOID:  # phi1, phi2, phi3, the logistic at rest L(phi2 phi3)
        out = a0 * (_logistic(a1 * (v + a2)) - a3)
    elif code == STRIBECK:  # fc, fs, vs, ks, fv, fo
        decay = np.exp(-((abs(v) / a2) ** a3))
        out = np.sign(v) * (a0 + a1 * decay) + a4 * v + a5
    elif code == LUGRE:  # sigma0, sigma1, sigma2, fc, fs, vs, fo
        rate = _lugre_rate(a0, a3, a4, a5, v, z)
        out = a0 * z + a1 * rate + a2 * v + a6
    else:
        out = 0.0
    return out, rate
