"""Plots that read without the code (matplotlib figures without pyplot: no display, no global
backend change).

Each ``*_figure`` function builds a ``Figure``; ``save_figure`` writes one atomically (format
from the suffix) and ``figure_png`` gives its PNG bytes (for the HTML report).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from dynid._files import atomic_write
from dynid._validation import as_float_array

__all__ = [
    "comparison_figure",
    "excitation_figure",
    "figure_png",
    "friction_figure",
    "parameters_figure",
    "plot_torques",
    "save_figure",
    "torques_figure",
]


def save_figure(fig: Figure, path: str | Path) -> Path:
    """Write ``fig`` to ``path`` (``.png``, ``.pdf``, ``.svg``), atomically."""
    return atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=110))


def figure_png(fig: Figure, dpi: int = 90) -> bytes:
    """``fig`` as PNG bytes."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


def _grid(n: int, height: float = 2.2, width: float = 7.0):
    cols = 2 if n > 3 else 1
    rows = int(np.ceil(n / cols))
    fig = Figure(figsize=(width * cols, height * rows))
    axes = fig.subplots(rows, cols, squeeze=False)
    for k, ax in enumerate(axes.flat):
        ax.set_visible(k < n)
    return fig, axes


def torques_figure(t: ArrayLike, measured: ArrayLike, predicted: ArrayLike, *,
                   rigid: ArrayLike | None = None,
                   title: str = "measured vs predicted joint torques") -> Figure:
    """One panel per joint: measured torque, the prediction (and the prediction without
    friction, ``rigid``), and the error traces (Gaz et al. Fig. 3 and 5)."""
    t = as_float_array("t", t)
    y = as_float_array("measured", measured)
    y_hat = as_float_array("predicted", predicted)
    if y.ndim != 2 or y.shape != y_hat.shape or y.shape[0] != t.size:
        raise ValueError(
            f"`measured`, `predicted` must be (N, n) with N = len(t) = {t.size}, "
            f"got {y.shape} and {y_hat.shape}"
        )
    y_rigid = None if rigid is None else as_float_array("rigid", rigid)
    if y_rigid is not None and y_rigid.shape != y.shape:
        raise ValueError(f"`rigid` must be {y.shape}, got {y_rigid.shape}")
    n = y.shape[1]
    cols = 2 if n > 3 else 1
    rows = int(np.ceil(n / cols))
    fig = Figure(figsize=(7 * cols, 3.0 * rows))
    # per joint, the torques above and the errors beneath (their own scale)
    grid = fig.add_gridspec(rows, cols, hspace=0.35)
    for j in range(n):
        pair = grid[divmod(j, cols)].subgridspec(2, 1, height_ratios=[3, 1], hspace=0.08)
        top = fig.add_subplot(pair[0])
        bottom = fig.add_subplot(pair[1], sharex=top)
        top.plot(t, y[:, j], color="tab:red", lw=0.8, label="measured")
        if y_rigid is not None:
            top.plot(t, y_rigid[:, j], color="tab:green", lw=0.8, label="model, no friction")
            rigid_error = y[:, j] - y_rigid[:, j]
            bottom.plot(t, rigid_error, color="tab:green", lw=0.6,
                        label=f"no friction (RMSE {np.sqrt(np.mean(rigid_error**2)):.3f})")
        top.plot(t, y_hat[:, j], color="tab:blue", lw=0.8, label="model")
        error = y[:, j] - y_hat[:, j]
        bottom.plot(t, error, color="tab:blue", lw=0.6,
                    label=f"model (RMSE {np.sqrt(np.mean(error**2)):.3f})")
        top.set_ylabel(f"joint {j + 1} [N m]")
        bottom.set_ylabel("error")
        top.legend(loc="upper right", fontsize=6, ncol=3)
        bottom.legend(loc="upper right", fontsize=6, ncol=2)
        for ax in (top, bottom):
            ax.grid(alpha=0.3)
        top.tick_params(labelbottom=False)
        bottom.set_xlabel("time [s]")
    fig.suptitle(title)
    width, height = fig.get_size_inches()  # margins in inches, whatever the joint count
    fig.subplots_adjust(left=0.75 / width, right=1 - 0.15 / width, bottom=0.5 / height,
                        top=1 - 0.55 / height, wspace=0.15)  # a fraction of a panel's width
    return fig


def plot_torques(t: ArrayLike, measured: ArrayLike, predicted: ArrayLike, path: str | Path, *,
                 rigid: ArrayLike | None = None,
                 title: str = "measured vs predicted joint torques") -> Path:
    """``torques_figure`` written to ``path``."""
    return save_figure(torques_figure(t, measured, predicted, rigid=rigid, title=title), path)


def friction_figure(dq: ArrayLike, residual: ArrayLike, curves: Mapping[str, Callable], *,
                    title: str = "friction: residual torque vs joint velocity") -> Figure:
    """Gaz et al. Fig. 4: per joint, the residual ``Delta tau = tau - tau^_rigid`` against the
    joint velocity (dots) and each friction curve: ``curves`` maps a label to a function of
    velocities ``(N, n)`` giving torques (e.g. a friction model's ``torque``)."""
    velocity = as_float_array("dq", dq)
    torque = as_float_array("residual", residual)
    if velocity.ndim != 2 or velocity.shape != torque.shape:
        raise ValueError(f"`dq` and `residual` must both be (N, n), got {velocity.shape} and "
                         f"{torque.shape}")
    n = velocity.shape[1]
    fig, axes = _grid(n, height=2.4, width=5.0)
    stride = max(1, velocity.shape[0] // 4000)
    for j, ax in enumerate(axes.flat[:n]):
        ax.plot(velocity[::stride, j], torque[::stride, j], ".", ms=1.5, color="tab:red",
                alpha=0.5, label="residual")
        span = np.abs(velocity[:, j]).max() or 1.0
        grid = np.linspace(-span, span, 401)
        for name, function in curves.items():
            velocities = np.zeros((grid.size, n))
            velocities[:, j] = grid
            ax.plot(grid, function(velocities)[:, j], lw=1.2, label=name)
        ax.set_xlabel(f"joint {j + 1} velocity [rad/s]")
        ax.set_ylabel("[N m]")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def parameters_figure(names: Sequence[str], values: ArrayLike, std: ArrayLike, *,
                      title: str = "identified base parameters") -> Figure:
    """Each coefficient with its ±2 sigma bar (symmetric-log scale: values span decades), and
    its relative standard deviation [%] beneath."""
    value = as_float_array("values", values)
    sigma = as_float_array("std", std, allow_inf=True)
    k = np.arange(value.size)
    fig = Figure(figsize=(max(7.0, 0.18 * value.size), 5.5))
    top, bottom = fig.subplots(2, 1, sharex=True)
    top.errorbar(k, value, yerr=2 * np.where(np.isfinite(sigma), sigma, 0.0), fmt="o", ms=3,
                 capsize=2, lw=0.8)
    largest = np.abs(value).max() if value.size else 1.0
    top.set_yscale("symlog", linthresh=max(1e-3 * largest, 1e-12))
    top.set_ylabel("value ± 2σ")
    top.grid(alpha=0.3)
    relative = 100 * np.abs(sigma) / np.maximum(np.abs(value), 1e-300)
    bottom.bar(k, np.where(np.isfinite(relative), relative, 0.0), color="tab:gray")
    bottom.axhline(30.0, color="tab:red", lw=0.8, ls="--", label="30 % (Gaz: dropped above)")
    bottom.set_yscale("log")
    bottom.set_ylabel("σ [%]")
    bottom.legend(fontsize=7)
    bottom.set_xticks(k)
    bottom.set_xticklabels(list(names), rotation=90, fontsize=6)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def comparison_figure(methods: Sequence[str], errors: ArrayLike, *,
                      label: str = "validation w_r", title: str = "methods compared") -> Figure:
    """One bar per method: the mean of ``errors`` ``(methods, cases)`` with the range as
    whiskers (the Jaco2 paper's Table 5 as a picture)."""
    table = as_float_array("errors", errors)
    if table.ndim != 2 or table.shape[0] != len(methods):
        raise ValueError(f"`errors` must be (methods, cases) with {len(methods)} methods, got "
                         f"{table.shape}")
    mean = table.mean(axis=1)
    fig = Figure(figsize=(max(5.0, 0.9 * len(methods)), 3.5))
    ax = fig.subplots()
    x = np.arange(len(methods))
    best = int(np.argmin(mean))
    colours = ["tab:green" if k == best else "tab:blue" for k in x]
    ax.bar(x, mean, color=colours)
    ax.errorbar(x, mean, yerr=[mean - table.min(axis=1), table.max(axis=1) - mean], fmt="none",
                ecolor="black", capsize=3, lw=0.8)
    ax.set_xticks(x)
    ax.set_xticklabels(list(methods), rotation=30)
    ax.set_ylabel(label)
    ax.grid(alpha=0.3, axis="y")
    ax.set_title(title)
    fig.tight_layout()
    return fig


def excitation_figure(t: ArrayLike, q: ArrayLike, dq: ArrayLike, ddq: ArrayLike, limits, *,
                      condition_number: float | None = None,
                      title: str = "excitation trajectory") -> Figure:
    """Positions, velocities and accelerations of every joint as fractions of their limits
    (±1 is the limit), with the base regressor's condition number in the title."""
    t = as_float_array("t", t)
    rows = []
    for name, values, low, high in (
            ("position", q, limits.lower, limits.upper),
            ("velocity", dq, -limits.velocity, limits.velocity),
            ("acceleration", ddq, -limits.acceleration, limits.acceleration)):
        array = as_float_array(name, values)
        centre = np.where(np.isfinite(low + high), 0.5 * (low + high), 0.0)
        half = np.where(np.isfinite(high - low), 0.5 * (high - low), np.abs(array).max(axis=0))
        rows.append((name, (array - centre) / np.where(half > 0, half, 1.0)))
    fig = Figure(figsize=(9, 6.5))
    axes = fig.subplots(3, 1, sharex=True)
    for ax, (name, scaled) in zip(axes, rows, strict=True):
        for j in range(scaled.shape[1]):
            ax.plot(t, scaled[:, j], lw=0.8, label=f"joint {j + 1}")
        ax.axhline(1.0, color="black", lw=0.6, ls="--")
        ax.axhline(-1.0, color="black", lw=0.6, ls="--")
        ax.set_ylabel(f"{name} / limit")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=6, ncol=7, loc="upper right")
    axes[-1].set_xlabel("time [s]")
    suffix = "" if condition_number is None else f" (base regressor cond {condition_number:.3g})"
    fig.suptitle(title + suffix)
    fig.tight_layout()
    return fig
