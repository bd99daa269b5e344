"""Plots that read without the code (matplotlib figures without pyplot: no display, no global
backend change).

Each ``*_figure`` function builds a ``Figure``; ``save_figure`` writes one atomically (format
from the suffix) and ``figure_png`` gives its PNG bytes (for the HTML report).

Every figure uses matplotlib's constrained layout, so no tick label, axis label or title is cut
off at the figure's edge, and puts its legend outside the axes (one figure legend at the foot),
so a legend never hides a curve. Every axis that shows a physical quantity names its unit in
brackets.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

from dynid._files import atomic_write
from dynid._validation import as_float_array
from dynid.metrics import rmse

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

LEGEND_FONTSIZE = 8
# the most decades a symmetric-log axis shows above its linear band (the parameters figure)
SYMLOG_DECADES = 4


def _figure(**options) -> Figure:
    """A matplotlib Figure (no pyplot state) with constrained layout; matplotlib loads with the
    first figure."""
    from matplotlib.figure import Figure

    options.setdefault("layout", "constrained")
    return Figure(**options)


def _figure_legend(fig: Figure, handles: Sequence, labels: Sequence[str] | None = None,
                   **options) -> None:
    """One legend for the whole figure, outside every axes, at its foot (constrained layout makes
    room for it there; at the head it would overlap the figure's title)."""
    labels = [h.get_label() for h in handles] if labels is None else list(labels)
    options.setdefault("ncols", len(handles))
    options.setdefault("title_fontsize", LEGEND_FONTSIZE)
    fig.legend(handles, labels, loc="outside lower center", fontsize=LEGEND_FONTSIZE,
               frameon=False, **options)


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
    fig = _figure(figsize=(width * cols, height * rows + 0.6))  # + title and legend
    axes = fig.subplots(rows, cols, squeeze=False)
    for k, ax in enumerate(axes.flat):
        ax.set_visible(k < n)
    return fig, axes


def torques_figure(t: ArrayLike, measured: ArrayLike, predicted: ArrayLike, *,
                   rigid: ArrayLike | None = None,
                   title: str = "measured vs predicted joint torques") -> Figure:
    """One panel per joint: measured torque, the prediction (and the prediction without
    friction, ``rigid``), and the error traces ``measured - prediction`` beneath on their own
    scale, with their RMSE in the panel's title (Gaz et al. Fig. 3 and 5)."""
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
    fig = _figure(figsize=(7 * cols, 3.2 * rows + 0.7))
    # per joint, the torques above and the errors beneath (their own scale)
    grid = fig.add_gridspec(rows, cols)
    handles = []
    error = rmse(y, y_hat)
    error_rigid = None if y_rigid is None else rmse(y, y_rigid)
    for j in range(n):
        pair = grid[divmod(j, cols)].subgridspec(2, 1, height_ratios=[3, 1])
        top = fig.add_subplot(pair[0])
        bottom = fig.add_subplot(pair[1], sharex=top)
        measured_line, = top.plot(t, y[:, j], color="tab:red", lw=0.8, label="measured")
        lines = [measured_line]
        summary = f"joint {j + 1}: RMSE {error[j]:.3g} N m"
        if y_rigid is not None:
            rigid_line, = top.plot(t, y_rigid[:, j], color="tab:green", lw=0.8,
                                   label="model without friction")
            bottom.plot(t, y[:, j] - y_rigid[:, j], color="tab:green", lw=0.6)
            lines.append(rigid_line)
            summary += f" (without friction {error_rigid[j]:.3g} N m)"
        model_line, = top.plot(t, y_hat[:, j], color="tab:blue", lw=0.8, label="model")
        lines.insert(1, model_line)
        bottom.plot(t, y[:, j] - y_hat[:, j], color="tab:blue", lw=0.6)
        bottom.axhline(0.0, color="black", lw=0.5)
        top.set_title(summary, fontsize=9, loc="left")
        top.set_ylabel("torque [N m]")
        bottom.set_ylabel("error [N m]")
        for ax in (top, bottom):
            ax.grid(alpha=0.3)
        top.tick_params(labelbottom=False)
        # within the pair only: across the columns (every subgridspec's column 0 to
        # matplotlib) alignment would collapse the constrained layout
        fig.align_ylabels([top, bottom])
        if j + cols >= n:  # the lowest panel of its column
            bottom.set_xlabel("time [s]")
        handles = lines
    fig.suptitle(title)
    _figure_legend(fig, handles, title="beneath each torque panel: its error = measured - "
                                       "model, in the model's colour")
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
    handles = []
    for j, ax in enumerate(axes.flat[:n]):
        dots, = ax.plot(velocity[::stride, j], torque[::stride, j], ".", ms=1.5,
                        color="tab:red", alpha=0.5, label="residual τ - τ̂ (rigid body)")
        handles = [dots]
        span = np.abs(velocity[:, j]).max() or 1.0
        grid = np.linspace(-span, span, 401)
        for name, function in curves.items():
            velocities = np.zeros((grid.size, n))
            velocities[:, j] = grid
            handles += ax.plot(grid, function(velocities)[:, j], lw=1.2, label=name)
        ax.set_xlabel(f"joint {j + 1} velocity [rad/s]")
        ax.set_ylabel("residual torque [N m]")
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    _figure_legend(fig, handles, markerscale=6)
    return fig


def _symlog_threshold(values: np.ndarray) -> float:
    """The linear band of a symmetric-log axis: the power of ten at or below the smallest
    nonzero magnitude, but at most ``SYMLOG_DECADES`` decades below the largest (smaller
    values, estimates indistinguishable from 0 next to the large ones, share the band)."""
    magnitudes = np.abs(values[np.isfinite(values) & (values != 0)])
    if magnitudes.size == 0:
        return 1.0
    floor = max(magnitudes.min(), magnitudes.max() * 10.0**-SYMLOG_DECADES)
    return float(10.0 ** np.floor(np.log10(floor)))


def _decimal_ticks(ax: Axes, linthresh: float | None = None) -> None:
    """Ticks at ±10^k (and 0 on a symmetric-log axis: ``linthresh``) on a log y axis, printed
    as decimals (0.01, 0.1, 1, 10; 1e-05 below 1e-4) rather than mathtext powers."""
    from matplotlib.ticker import (
        FuncFormatter,
        LogLocator,
        NullFormatter,
        NullLocator,
        SymmetricalLogLocator,
    )

    if linthresh is None:
        ax.yaxis.set_major_locator(LogLocator(base=10))
        ax.yaxis.set_minor_formatter(NullFormatter())
    else:
        ax.yaxis.set_major_locator(SymmetricalLogLocator(linthresh=linthresh, base=10))
        ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: "0" if v == 0 else f"{v:g}"))


def parameters_figure(names: Sequence[str], values: ArrayLike, std: ArrayLike, *,
                      title: str = "identified base parameters") -> Figure:
    """Each coefficient with its ±2 sigma bar (symmetric-log scale: values span decades), and
    its relative standard deviation [%] beneath."""
    from matplotlib.lines import Line2D

    value = as_float_array("values", values)
    sigma = np.asarray(std)
    if sigma.dtype.kind not in "iuf" or sigma.shape != value.shape:
        raise TypeError(f"`std` must be {value.shape} real numbers, got {sigma.dtype} "
                        f"{sigma.shape}")
    sigma = sigma.astype(float)
    k = np.arange(value.size)
    fig = _figure(figsize=(max(7.0, 0.18 * value.size), 6.5))
    top, bottom = fig.subplots(2, 1, sharex=True)
    # a σ below zero or NaN (a tampered model file) is no standard deviation: no bar, "—"
    # beneath; an infinite one (a coefficient the data do not determine) is drawn as ∞
    invalid = np.isnan(sigma) | (sigma < 0)
    estimate = top.errorbar(k, value, yerr=2 * np.where(np.isfinite(sigma) & ~invalid, sigma,
                                                        0.0),
                            fmt="o", ms=3, capsize=2, lw=0.8, label="estimate ± 2σ")
    linthresh = _symlog_threshold(value)
    top.set_yscale("symlog", linthresh=linthresh, linscale=1.0)
    _decimal_ticks(top, linthresh)
    top.set_ylabel("value ± 2σ [SI units]")
    top.grid(alpha=0.3)
    # relative σ: unbounded (drawn as ∞ at the foot) for an infinite σ or a zero estimate
    bounded = np.isfinite(sigma) & (value != 0) & ~invalid
    relative = np.full(value.shape, np.inf)
    with np.errstate(over="ignore"):  # overflow to inf: drawn as ∞ too
        np.divide(100 * np.abs(sigma), np.abs(value), out=relative, where=bounded)
    bounded &= np.isfinite(relative)
    shown = np.where(bounded, relative, 0.0)
    bottom.bar(k, shown, color="tab:gray")
    bottom.axhline(30.0, color="tab:red", lw=0.8, ls="--")
    bottom.set_yscale("log")
    _decimal_ticks(bottom)
    positive = shown[shown > 0]
    low = min(positive.min(), 30.0) if positive.size else 30.0
    high = max(positive.max(), 30.0) if positive.size else 30.0
    bottom.set_ylim(low / 3, high * 3)  # the 30 % line always in view
    for index in np.flatnonzero(~bounded):
        bottom.annotate("—" if invalid[index] else "∞", (index, 0.0),
                        xycoords=("data", "axes fraction"), xytext=(0, 2),
                        textcoords="offset points", ha="center", va="bottom", color="tab:red")
    bottom.set_ylabel("relative σ [%]")
    bottom.set_xticks(k)
    bottom.set_xticklabels(list(names), rotation=90, fontsize=7)
    bottom.set_xlim(-0.7, value.size - 0.3)
    fig.suptitle(title)
    threshold = Line2D([], [], color="tab:red", lw=0.8, ls="--",
                       label="relative σ 30 % (Gaz et al. drop those above)")
    _figure_legend(fig, [estimate, threshold])
    return fig


def comparison_figure(methods: Sequence[str], errors: ArrayLike, *,
                      label: str = r"validation $w_r = \|\tau - \hat\tau\| / \|\tau\|$ [-]",
                      title: str = "methods compared") -> Figure:
    """One bar per method: the mean of ``errors`` ``(methods, cases)`` with the range as
    whiskers (the Jaco2 paper's Table 5 as a picture); the smallest mean in green."""
    from matplotlib.patches import Patch

    table = as_float_array("errors", errors)
    if table.ndim != 2 or table.shape[0] != len(methods):
        raise ValueError(f"`errors` must be (methods, cases) with {len(methods)} methods, got "
                         f"{table.shape}")
    mean = table.mean(axis=1)
    fig = _figure(figsize=(max(6.0, 0.9 * len(methods)), 4.0))
    ax = fig.subplots()
    x = np.arange(len(methods))
    best = int(np.argmin(mean))
    colours = ["tab:green" if k == best else "tab:blue" for k in x]
    ax.bar(x, mean, color=colours)
    whiskers = ax.errorbar(x, mean, yerr=[mean - table.min(axis=1), table.max(axis=1) - mean],
                           fmt="none", ecolor="black", capsize=3, lw=0.8)
    ax.set_xticks(x)
    ax.set_xticklabels(list(methods), rotation=30, ha="right", rotation_mode="anchor")
    ax.set_ylabel(label)
    ax.grid(alpha=0.3, axis="y")
    fig.suptitle(title)
    cases = table.shape[1]
    _figure_legend(fig, [Patch(color="tab:blue"), Patch(color="tab:green"), whiskers],
                   [f"mean over {cases} cases", "smallest mean", "range (min to max)"])
    return fig


def excitation_figure(t: ArrayLike, q: ArrayLike, dq: ArrayLike, ddq: ArrayLike, limits, *,
                      condition_number: float | None = None,
                      title: str = "excitation trajectory") -> Figure:
    """Positions, velocities and accelerations of every joint as fractions of their limits
    (±1 is the limit), with the base regressor's condition number in the title.

    A joint without a limit (``inf``: a URDF's accelerations, a continuous joint) is scaled to
    its own peak (positions: to their own range) instead, drawn dotted beside limited joints;
    a quantity no joint is limited in gets no limit lines.
    """
    from matplotlib.lines import Line2D

    t = as_float_array("t", t)
    rows = []
    for name, values, low, high in (
            ("position", q, limits.lower, limits.upper),
            ("velocity", dq, -limits.velocity, limits.velocity),
            ("acceleration", ddq, -limits.acceleration, limits.acceleration)):
        array = as_float_array(name, values)
        if array.ndim != 2 or array.shape[0] != t.size or array.shape[1] != low.size:
            raise ValueError(f"`{name}` must be (N, n) with N = len(t) = {t.size} and n = "
                             f"{low.size} joints, got {array.shape}")
        limited = np.isfinite(low) & np.isfinite(high)  # no arithmetic on inf: no warning
        if name == "position":  # about the middle of its own range
            lower = np.where(limited, low, array.min(axis=0))
            upper = np.where(limited, high, array.max(axis=0))
        else:  # a rate: to its own peak, 0 stays 0
            peak = np.abs(array).max(axis=0)
            lower, upper = np.where(limited, low, -peak), np.where(limited, high, peak)
        centre, half = 0.5 * (lower + upper), 0.5 * (upper - lower)
        rows.append((name, (array - centre) / np.where(half > 0, half, 1.0), limited))
    n = rows[0][1].shape[1]
    fig = _figure(figsize=(9, 7.0))
    axes = fig.subplots(3, 1, sharex=True)
    mixed = False
    for ax, (name, scaled, limited) in zip(axes, rows, strict=True):
        own = "own range" if name == "position" else "own peak"
        for j in range(n):
            dotted = limited.any() and not limited[j]
            ax.plot(t, scaled[:, j], lw=0.8, ls=":" if dotted else "-", color=f"C{j % 10}")
        if limited.all():
            ax.set_ylabel(f"{name} / limit")
        elif limited.any():
            mixed = True
            ax.set_ylabel(f"{name} / limit\n(dotted: / {own})")
        else:
            ax.set_ylabel(f"{name} / {own}\n(no limits)")
        if limited.any():
            for level in (1.0, -1.0):
                ax.axhline(level, color="black", lw=0.6, ls="--")
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("time [s]")
    suffix = "" if condition_number is None else f" (base regressor cond {condition_number:.3g})"
    fig.suptitle(title + suffix)
    handles = [Line2D([], [], lw=0.8, color=f"C{j % 10}", label=f"joint {j + 1}")
               for j in range(n)]
    if any(limited.any() for _, _, limited in rows):
        handles.append(Line2D([], [], color="black", lw=0.6, ls="--", label="limit"))
    if mixed:
        handles.append(Line2D([], [], color="0.3", lw=0.8, ls=":",
                              label="joint without a limit"))
    _figure_legend(fig, handles, ncols=min(len(handles), 9))
    return fig
