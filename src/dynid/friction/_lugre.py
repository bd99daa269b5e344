"""The compiled LuGre state recursion, apart from the models so that describing a robot's
friction never loads numba (it loads when a LuGre state is first integrated)."""

from __future__ import annotations

import numpy as np

from dynid._jit import kernel


@kernel
def lugre_states(t, dq, sigma0, fc, fs, vs, floor, z0):
    """The bristle state along a time series (``LuGre.states_along``) from ``z0`` (NaN: the
    steady state at the first sample); ``floor`` keeps the Stribeck level away from 0."""
    n_samples, n = dq.shape
    z = np.empty((n_samples, n))
    for j in range(n):
        v = dq[0, j]
        level = max(fc[j] + (fs[j] - fc[j]) * np.exp(-((v / vs[j]) ** 2)), floor)
        z[0, j] = np.sign(v) * level / sigma0[j] if np.isnan(z0[j]) else z0[j]
        for k in range(1, n_samples):
            v = 0.5 * (dq[k - 1, j] + dq[k, j])
            level = max(fc[j] + (fs[j] - fc[j]) * np.exp(-((v / vs[j]) ** 2)), floor)
            rate = sigma0[j] * abs(v) / level
            if rate == 0.0:
                z[k, j] = z[k - 1, j]
            else:
                steady = np.sign(v) * level / sigma0[j]
                z[k, j] = steady + (z[k - 1, j] - steady) * np.exp(-rate * (t[k] - t[k - 1]))
    return z


@kernel
def lugre_sensitivities(t, dq, sigma0, fc, fs, vs, floor):
    """``(z, dz)``: the bristle state of ``lugre_states`` from the steady state at the first
    sample, ``(N, n)``, and its derivatives by ``sigma0, fc, fs, vs``, ``(N, n, 4)``: the
    exponential update ``z_k = s_k + (z_{k-1} - s_k) e_k`` differentiated step by step
    (``s_k`` the steady state, ``e_k = exp(-rate_k dt)``), carried beside the state."""
    n_samples, n = dq.shape
    z = np.empty((n_samples, n))
    dz = np.zeros((n_samples, n, 4))
    for j in range(n):
        v = dq[0, j]
        bell = np.exp(-((v / vs[j]) ** 2))
        raw = fc[j] + (fs[j] - fc[j]) * bell
        level, live = (raw, 1.0) if raw > floor else (floor, 0.0)
        sign = np.sign(v)
        z[0, j] = sign * level / sigma0[j]
        # the level by fc, fs, vs (zero where floored)
        l_fc = live * (1.0 - bell)
        l_fs = live * bell
        l_vs = live * (fs[j] - fc[j]) * bell * 2.0 * v * v / vs[j] ** 3
        dz[0, j, 0] = -z[0, j] / sigma0[j]
        dz[0, j, 1] = sign * l_fc / sigma0[j]
        dz[0, j, 2] = sign * l_fs / sigma0[j]
        dz[0, j, 3] = sign * l_vs / sigma0[j]
        for k in range(1, n_samples):
            v = 0.5 * (dq[k - 1, j] + dq[k, j])
            bell = np.exp(-((v / vs[j]) ** 2))
            raw = fc[j] + (fs[j] - fc[j]) * bell
            level, live = (raw, 1.0) if raw > floor else (floor, 0.0)
            speed = abs(v)
            rate = sigma0[j] * speed / level
            previous = z[k - 1, j]
            if rate == 0.0:
                z[k, j] = previous
                for p in range(4):
                    dz[k, j, p] = dz[k - 1, j, p]
                continue
            sign = np.sign(v)
            steady = sign * level / sigma0[j]
            dt = t[k] - t[k - 1]
            decay = np.exp(-rate * dt)
            z[k, j] = steady + (previous - steady) * decay
            gap = previous - steady
            l_fc = live * (1.0 - bell)
            l_fs = live * bell
            l_vs = live * (fs[j] - fc[j]) * bell * 2.0 * v * v / vs[j] ** 3
            # d steady, d rate by sigma0, then by the level (chained to fc, fs, vs)
            steady_s0 = -steady / sigma0[j]
            rate_s0 = speed / level
            steady_l = sign / sigma0[j]
            rate_l = -rate / level
            # dz_k = d steady (1 - e) + e dz_{k-1} - gap e dt d rate
            dz[k, j, 0] = (steady_s0 * (1.0 - decay) + decay * dz[k - 1, j, 0]
                           - gap * decay * dt * rate_s0)
            through_level = steady_l * (1.0 - decay) - gap * decay * dt * rate_l
            dz[k, j, 1] = through_level * l_fc + decay * dz[k - 1, j, 1]
            dz[k, j, 2] = through_level * l_fs + decay * dz[k - 1, j, 2]
            dz[k, j, 3] = through_level * l_vs + decay * dz[k - 1, j, 3]
    return z, dz


@kernel
def lugre_torque_jacobian(t, dq, sigma0, sigma1, sigma2, fc, fs, vs, fo, floor):
    """``(torque, jacobian)``: LuGre's torque along a time series from the steady state at
    the first sample, ``(N, n)``, and its derivatives by the fields ``sigma0, sigma1, sigma2,
    fc, fs, vs, fo``, ``(N, n, 7)`` (``LuGre.torque_and_jacobian_along``), from the state
    and its sensitivities (``lugre_sensitivities``)."""
    z, dz = lugre_sensitivities(t, dq, sigma0, fc, fs, vs, floor)
    n_samples, n = dq.shape
    torque = np.empty((n_samples, n))
    out = np.empty((n_samples, n, 7))
    for j in range(n):
        for k in range(n_samples):
            v = dq[k, j]
            bell = np.exp(-((v / vs[j]) ** 2))
            raw = fc[j] + (fs[j] - fc[j]) * bell
            level, live = (raw, 1.0) if raw > floor else (floor, 0.0)
            speed = abs(v)
            state = z[k, j]
            rate = v - sigma0[j] * speed * state / level
            torque[k, j] = sigma0[j] * state + sigma1[j] * rate + sigma2[j] * v + fo[j]
            # rate = dq - sigma0 |dq| z / s: by sigma0, and by the level s (then fc, fs, vs)
            rate_s0 = -speed * state / level - sigma0[j] * speed / level * dz[k, j, 0]
            rate_level = sigma0[j] * speed * state / (level * level)
            l_fc = live * (1.0 - bell)
            l_fs = live * bell
            l_vs = live * (fs[j] - fc[j]) * bell * 2.0 * v * v / vs[j] ** 3
            out[k, j, 0] = state + sigma0[j] * dz[k, j, 0] + sigma1[j] * rate_s0
            out[k, j, 1] = rate
            out[k, j, 2] = v
            for p, l_p in ((1, l_fc), (2, l_fs), (3, l_vs)):
                rate_p = -sigma0[j] * speed / level * dz[k, j, p] + rate_level * l_p
                out[k, j, 2 + p] = sigma0[j] * dz[k, j, p] + sigma1[j] * rate_p
            out[k, j, 6] = 1.0
    return torque, out
