"""Per-joint detection thresholds from a collision-free log's residual.

``theta_j = margin * quantile(|r_j|, quantile)`` over the calibration log's samples: the
residual of a log without contact is model error and noise only, so its high quantile bounds
what the model gets wrong on this robot; the margin covers motions the calibration log did not
visit. The defaults (quantile 0.9999, margin 1.5) gave zero false alarms on 60 s of Panda twin
motion after 30 s of calibration on another trajectory, while every 10 N tool pulse of 50 ms
crossed them within about 10 ms (``tests/test_monitor.py``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_float_array

__all__ = ["DEFAULT_MARGIN", "DEFAULT_QUANTILE", "calibrate_thresholds"]

DEFAULT_QUANTILE = 0.9999
DEFAULT_MARGIN = 1.5


def calibrate_thresholds(residual: ArrayLike, *, quantile: float = DEFAULT_QUANTILE,
                         margin: float = DEFAULT_MARGIN) -> NDArray:
    """Thresholds ``(n,)`` [N m]: ``margin`` times the ``quantile`` of ``|residual|`` ``(N, n)``
    per joint (the residual of a collision-free log, ``momentum_residual``)."""
    r = as_float_array("residual", residual)
    if r.ndim != 2 or r.shape[0] < 2:
        raise ValueError(f"`residual` must have shape (N, n) with N >= 2, got {r.shape}")
    if not 0.5 <= quantile <= 1:
        raise ValueError(f"`quantile` must be in [0.5, 1], got {quantile}")
    if not (np.isfinite(margin) and margin >= 1):
        raise ValueError(f"`margin` must be a finite factor >= 1, got {margin}")
    thresholds = margin * np.quantile(np.abs(r), quantile, axis=0)
    if not (thresholds > 0).all():
        j = int(np.argmin(thresholds))
        raise ValueError(f"`residual`: joint {j + 1} is identically zero on the calibration "
                         "log; a threshold needs a residual that varies")
    return thresholds
