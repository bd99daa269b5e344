"""Plots that read without the code (matplotlib figures without pyplot: no display, no global
backend change)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from dynid._files import atomic_write
from dynid._validation import as_float_array

__all__ = ["plot_torques"]


def plot_torques(t: ArrayLike, measured: ArrayLike, predicted: ArrayLike, path: str | Path, *,
                 title: str = "measured vs predicted joint torques") -> Path:
    """One panel per joint: measured and predicted torque, and their difference.

    The format follows ``path``'s suffix (``.png``, ``.pdf``, ``.svg``).
    """
    t = as_float_array("t", t)
    y = as_float_array("measured", measured)
    y_hat = as_float_array("predicted", predicted)
    if y.ndim != 2 or y.shape != y_hat.shape or y.shape[0] != t.size:
        raise ValueError(
            f"`measured`, `predicted` must be (N, n) with N = len(t) = {t.size}, "
            f"got {y.shape} and {y_hat.shape}"
        )
    n = y.shape[1]
    cols = 2 if n > 3 else 1
    rows = int(np.ceil(n / cols))
    fig = Figure(figsize=(7 * cols, 2.2 * rows))
    axes = fig.subplots(rows, cols, sharex=True, squeeze=False)
    for j, ax in enumerate(axes.flat):
        if j >= n:
            ax.set_visible(False)
            continue
        error = y[:, j] - y_hat[:, j]
        ax.plot(t, y[:, j], color="tab:red", lw=0.8, label="measured")
        ax.plot(t, y_hat[:, j], color="tab:green", lw=0.8, label="predicted")
        ax.plot(t, error, color="tab:blue", lw=0.6, ls="--",
                label=f"error (RMSE {np.sqrt(np.mean(error**2)):.3f})")
        ax.set_ylabel(f"joint {j + 1} [N m]")
        ax.legend(loc="upper right", fontsize=7, ncol=3)
        ax.grid(alpha=0.3)
    for ax in axes[-1]:
        ax.set_xlabel("time [s]")
    fig.suptitle(title)
    fig.tight_layout()
    return atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=110))
