"""The joint-torque regressor, batched: ``tau = Y(q, dq, ddq) pi``.

``Y`` has shape ``(*, n, 10 n)``; column ``10 j + k`` multiplies entry k of link j's standard
parameters (layout ``dynid.robot.inertia.PARAMETER_NAMES``, link frame, inertia about the
origin), so ``pi = robot.parameters.ravel()``. Rows below the block diagonal (link j below
joint i) are zero.

The drives' reflected rotor inertias have their own columns, ``rotor_regressor``: ``(*, n, n)``,
``diag(ddq)`` (``Ia_j ddq_j`` on joint j alone), parameters ``Ia1..Ian``
(``robot.rotor_inertia``), so ``rnea = Y pi + Y_rotor Ia``. Through a coupled transmission
(``robot.transmission``, ``theta = G q``) the rotors and the friction are the motors':
``rotor_regressor(ddq, transmission)`` ``C^T diag(C ddq)`` and ``friction_regressor``
``C^T F(C dq)`` (``dynid.robot._transmission`` states the convention).

``regressor_vjp``: the contraction ``<W, Y>`` of the regressor with a weight ``W`` of its shape,
per sample, and its gradient in q, dq, ddq, from one compiled pass up the chain (no regressor
is formed): a vector-Jacobian product of ``Y``, what a gradient through ``Y`` needs.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_float_array
from dynid.dynamics import _kernels
from dynid.dynamics._chain import chain_arrays
from dynid.dynamics._inputs import gravity_vector, joint_arrays
from dynid.dynamics._launch import launch
from dynid.friction.models import FrictionModel
from dynid.robot import Robot, Transmission
from dynid.robot.inertia import PARAMETER_NAMES

__all__ = ["friction_regressor", "parameter_names", "regressor", "regressor_vjp", "rotor_names",
           "rotor_regressor"]


def regressor(robot: Robot, q: ArrayLike, dq: ArrayLike, ddq: ArrayLike, *,
              gravity: ArrayLike | None = None, out: NDArray | None = None) -> NDArray:
    """Regressor ``(*, n, 10 n)`` at ``q, dq, ddq`` ``(*, n)``.

    ``out``: an optional C-contiguous float64 ``(N, n, 10 n)`` array to write into (N samples
    flattened), for repeated calls on large batches without reallocating.
    """
    (q, dq, ddq), shape = joint_arrays(robot, q=q, dq=dq, ddq=ddq)
    n = robot.n_joints
    expected = (q.shape[0], n, 10 * n)
    if out is None:
        out = np.empty(expected)
    elif (not isinstance(out, np.ndarray) or out.shape != expected or out.dtype != np.float64
          or not out.flags.c_contiguous or not out.flags.writeable):
        got = (f"{out.dtype} {out.shape}" + ("" if out.flags.writeable else " read-only")
               if isinstance(out, np.ndarray) else type(out).__name__)
        raise ValueError(
            f"`out` must be a writeable C-contiguous float64 array of shape {expected}, got {got}"
        )
    launch(_kernels.regressor_serial, _kernels.regressor, q.shape[0], *chain_arrays(robot), q,
           dq, ddq, gravity_vector(robot, gravity), out)
    return out.reshape(*shape, n, 10 * n)


def regressor_vjp(robot: Robot, q: ArrayLike, dq: ArrayLike, ddq: ArrayLike,
                  weight: ArrayLike, *, gravity: ArrayLike | None = None,
                  ) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    """``<W, Y>`` per sample and its gradient: ``(value, g_q, g_dq, g_ddq)``.

    ``q, dq, ddq``: ``(*, n)``; ``weight``: ``(*, n, 10 n)``, one weight per regressor entry.
    ``value``: ``(*,)``, ``sum_{i,c} W[..., i, c] Y[..., i, c]``; ``g_q[..., k]`` its derivative
    in ``q[..., k]`` (likewise ``g_dq``, ``g_ddq``), each ``(*, n)``. Exact (analytic, spatial
    algebra; see ``_kernels._regressor_vjp_sample``) at about the cost of one regressor
    evaluation; entries of ``W`` below the block diagonal (link j below joint i, where ``Y`` is
    zero) are ignored.
    """
    (q, dq, ddq), shape = joint_arrays(robot, q=q, dq=dq, ddq=ddq)
    n = robot.n_joints
    weight = as_float_array("weight", weight)  # finite: a NaN would spread silently
    if weight.shape != (*shape, n, 10 * n):
        raise ValueError(f"`weight` must have shape {(*shape, n, 10 * n)} (the regressor's), "
                         f"got {weight.shape}")
    weight = np.ascontiguousarray(weight.reshape(q.shape[0], n, 10 * n))
    value = np.empty(q.shape[0])
    g_q, g_dq, g_ddq = (np.empty(q.shape) for _ in range(3))
    launch(_kernels.regressor_vjp_serial, _kernels.regressor_vjp, q.shape[0],
           *chain_arrays(robot), q, dq, ddq, gravity_vector(robot, gravity), weight, value, g_q,
           g_dq, g_ddq)
    return (value.reshape(shape), g_q.reshape(*shape, n), g_dq.reshape(*shape, n),
            g_ddq.reshape(*shape, n))


def parameter_names(robot: Robot) -> list[str]:
    """Names of the regressor's columns, e.g. ``m1, mx1, ..., Izz7`` (link index 1-based)."""
    return [f"{name}{j + 1}" for j in range(robot.n_joints) for name in PARAMETER_NAMES]


def rotor_regressor(ddq: ArrayLike, transmission: Transmission | None = None) -> NDArray:
    """Rotor-inertia columns ``(*, n, n)`` at ``ddq`` ``(*, n)``: ``diag(ddq)``; through a
    coupled ``transmission``, ``C^T diag(C ddq)`` (motor k's rotor, turned at ``(C ddq)_k``,
    acts on every joint that turns it: a coupled wrist's extra entries)."""
    ddq = np.asarray(ddq, dtype=float)
    n = ddq.shape[-1]
    speeds = ddq if transmission is None else transmission.motor_speeds(ddq)
    out = np.zeros((*ddq.shape, n))
    index = np.arange(n)
    out[..., index, index] = speeds
    return out if transmission is None else transmission.to_joints(out)


def friction_regressor(friction: FrictionModel, dq: ArrayLike,
                       transmission: Transmission | None = None) -> NDArray:
    """A linear friction model's columns ``(*, n, c)`` at ``dq`` ``(*, n)``:
    ``friction.regressor(dq)``, or, through a coupled ``transmission``, the motors' friction
    at their speeds ``C dq`` mapped to the joints, ``C^T F(C dq)`` (``dynid.robot.Transmission``).
    """
    if transmission is None or transmission.uncoupled:
        return friction.regressor(dq)
    return transmission.to_joints(friction.regressor(transmission.motor_speeds(dq)))


def rotor_names(robot: Robot) -> list[str]:
    """Names of the rotor-inertia columns, ``Ia1..Ian``."""
    return [f"Ia{j + 1}" for j in range(robot.n_joints)]
