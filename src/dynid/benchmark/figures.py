"""Box plots of the benchmark (matplotlib, Agg): per noise profile, one box per method of the
runs' relative parameter error and of their torque error on the validation log."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

__all__ = ["FIGURES", "box_figure", "write_figures"]

#: file name -> (run figure, axis label)
FIGURES = {
    "parameter_error.png": ("parameter_error", "relative base-parameter error [%]"),
    "torque_error.png": ("torque_error", "relative torque error, validation log [%]"),
}


def box_figure(records: Sequence[dict], key: str, label: str, *, methods: Sequence[str],
               profiles: Sequence[str]):
    """One panel per profile, one box per method (100 x ``key`` of its fitted runs)."""
    from matplotlib.figure import Figure  # no pyplot state: the Agg canvas on saving

    fig = Figure(layout="constrained",
                 figsize=(max(6.0, 1.0 + 0.6 * len(methods)), 2.4 * len(profiles)))
    axes = fig.subplots(len(profiles), 1, squeeze=False)[:, 0]
    for ax, profile in zip(axes, profiles, strict=True):
        values = [[100 * r[key] for r in records
                   if r["method"] == m and r["profile"] == profile and r.get("ok")
                   and r.get(key) is not None and np.isfinite(r[key])] for m in methods]
        shown = [k for k, v in enumerate(values) if v]
        if shown:
            ax.boxplot([values[k] for k in shown], positions=[k + 1 for k in shown])
        ax.set_xticks(range(1, len(methods) + 1), methods, rotation=30, fontsize=8)
        ax.set_yscale("log")
        ax.set_title(profile, fontsize=9)
        ax.set_ylabel(label, fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
    return fig


def write_figures(records: Sequence[dict], folder: Path, *, methods: Sequence[str],
                  profiles: Sequence[str]) -> list[Path]:
    """The ``FIGURES`` as PNG files in ``folder`` (each written atomically)."""
    from dynid.evaluation.plots import save_figure

    paths = []
    for name, (key, label) in FIGURES.items():
        fig = box_figure(records, key, label, methods=methods, profiles=profiles)
        paths.append(save_figure(fig, folder / name))  # atomic
    return paths
