"""The generalized-momentum observer (De Luca & Mattone 2005; Haddadin et al. 2017, sec. V).

With the generalized momentum ``p = M(q) dq``, the robot's dynamics
``M ddq + C dq + g + tau_f = tau + tau_ext`` and ``dM/dt = C + C^T`` give

    dp/dt = tau + C^T dq - g - tau_f + tau_ext.

The residual ``r = K [p(t) - p(0) - int_0^t (tau + C^T dq - g - tau_f + r) ds]`` obeys
``dr/dt = K (tau_ext - r)``: each joint's ``r`` is ``tau_ext`` through a first-order low-pass of
bandwidth ``K`` [1/s] — zero without contact (up to model error and noise), ``tau_ext`` at steady
state. ``M``, ``C^T dq``, ``g`` and ``tau_f`` come from the identified model (``M^``, ``g^``,
``tau_f^``; ``C^T dq = dM/dt dq - c^`` with ``c^ = C^ dq`` the model's Coriolis torque).

Discrete form (causal: sample k uses samples k and k-1 only, so it runs online). Over the step
``T_k = t_k - t_(k-1)``, ``tau_ext`` is taken constant at its mean
``e_k = [p_k - p_(k-1) - T_k (u_k + u_(k-1)) / 2] / T_k`` (``u = tau + C^T dq - g - tau_f``,
trapezoidal), and the first-order filter is solved exactly over the step:

    r_0 = 0,   r_k = a_k r_(k-1) + (1 - a_k) e_k,   a_k = exp(-K T_k),

stable for every ``K T`` (the Euler form ``r_k = K (p_k - p_0 - sum T (u + r))`` is unstable
for ``K T > 2``), and exact on irregular time stamps. ``dM/dt dq`` is the directional
derivative of ``M^`` along ``dq``, by a central difference
``[M^(q + h dq) - M^(q - h dq)] dq / (2 h)`` with ``h |dq|_inf = 1e-5`` rad (relative error
about 1e-10: the truncation, O(h^2), and the rounding, O(eps / h), balanced).

The log is processed in chunks of ``CHUNK`` samples (the model's M^, c^, g^ of one chunk in
memory at a time); the recursion is a compiled loop carrying its state across chunks.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._jit import kernel
from dynid._validation import as_vector
from dynid.data.dataset import Dataset
from dynid.model.linear_model import LinearModel

__all__ = ["CHUNK", "DEFAULT_GAIN", "momentum_residual"]

DEFAULT_GAIN = 50.0  # 1/s per joint: time constant 20 ms, 63 % of a step after 20 ms
CHUNK = 8192  # samples of M^ (and its two neighbours) in memory at a time
_STEP = 1e-5  # rad: the central difference's displacement along dq


@kernel
def _filter(t, p, u, gain, state_t, state_p, state_u, state_r, first, out):
    """``out[k] = r_k`` for the rows of one chunk (see the module); ``state_*`` hold sample
    k - 1 (time, momentum, u, residual) and carry over to the next chunk. ``first``: the chunk
    starts the log (its row 0 is r = 0)."""
    n_rows, n = p.shape
    for k in range(n_rows):
        if first and k == 0:
            for j in range(n):
                out[k, j] = 0.0
        else:
            step = t[k] - state_t[0]
            for j in range(n):
                a = np.exp(-gain[j] * step)
                mean = (p[k, j] - state_p[j]) / step - 0.5 * (u[k, j] + state_u[j])
                out[k, j] = a * state_r[j] + (1.0 - a) * mean
        state_t[0] = t[k]
        for j in range(n):
            state_p[j] = p[k, j]
            state_u[j] = u[k, j]
            state_r[j] = out[k, j]


def _momentum_terms(model: LinearModel, q: NDArray, dq: NDArray) -> tuple[NDArray, NDArray]:
    """``p = M^ dq`` and ``C^T dq - g^ = dM^/dt dq - c^ - g^`` ``(N, n)`` (friction apart)."""
    inertia = model.mass_matrix(q)
    momentum = np.einsum("kij,kj->ki", inertia, dq)
    speed = np.abs(dq).max(axis=1)
    h = _STEP / np.maximum(speed, _STEP)  # h |dq|_inf = 1e-5 rad (h = 1 when dq ~ 0)
    ahead = model.mass_matrix(q + h[:, None] * dq)
    behind = model.mass_matrix(q - h[:, None] * dq)
    derivative = np.einsum("kij,kj->ki", ahead - behind, dq) / (2 * h[:, None])
    return momentum, derivative - model.coriolis_torque(q, dq) - model.gravity_torque(q)


def momentum_residual(model: LinearModel, data: Dataset, *,
                      gain: ArrayLike = DEFAULT_GAIN) -> NDArray:
    """The observer's residual ``r`` ``(N, n)`` [N m] along ``data`` (its ``t``, ``q``, ``dq``
    and measured torque; a current log through the model's drive gains), with the model's
    M^, c^, g^ and friction; ``gain`` K [1/s], one value or one per joint. ``r`` estimates the
    external joint torques ``tau_ext`` (``J^T F`` of a contact), low-passed at ``K``; it is 0 at
    the first sample (the observer starts there)."""
    if not isinstance(data, Dataset):
        raise TypeError(f"`data` must be a dynid Dataset, got {type(data).__name__}")
    n = model.robot.n_joints
    if data.n_joints != n:
        raise ValueError(f"`data` has {data.n_joints} joints, the model's robot "
                         f"{model.robot.name!r} {n}")
    gains = as_vector("gain", gain, n)
    if not (gains > 0).all():
        raise ValueError(f"`gain` must be > 0 per joint [1/s], got {gains}")
    torque = model.measured_torque(data)
    friction = model.friction_torque(data.dq, data.t)
    t = np.ascontiguousarray(data.t, dtype=float)
    out = np.empty((data.n_samples, n))
    state_t, state_p, state_u, state_r = np.zeros(1), np.zeros(n), np.zeros(n), np.zeros(n)
    for start in range(0, data.n_samples, CHUNK):
        rows = slice(start, start + CHUNK)
        q, dq = np.asarray(data.q[rows], dtype=float), np.asarray(data.dq[rows], dtype=float)
        momentum, terms = _momentum_terms(model, q, dq)
        u = np.ascontiguousarray(torque[rows] + terms - friction[rows])
        _filter(t[rows], np.ascontiguousarray(momentum), u, gains, state_t, state_p, state_u,
                state_r, start == 0, out[rows])
    return out
