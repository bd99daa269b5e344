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
