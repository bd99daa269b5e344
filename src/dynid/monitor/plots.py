"""The detection plot: each joint's residual, its threshold band, the events and the true
contacts (matplotlib, loaded when a figure is drawn); and the detection's section of the HTML
report (``dynid.evaluation.build_report``'s ``sections``)."""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np

from dynid.monitor.detect import Detection

__all__ = ["detection_figure", "detection_section"]


def detection_figure(detection: Detection, contacts: Sequence = (), *, title: str = ""):
    """A matplotlib Figure: one panel per joint, the residual [N m] against time, the
    thresholds dashed, detected events shaded red, the true ``contacts`` (metadata mappings
    or ``Contact``) shaded grey."""
    from matplotlib.figure import Figure  # no pyplot: no display, no global state

    from dynid.monitor.scoring import _interval

    intervals = [_interval(c, k) for k, c in enumerate(contacts)]
    n = detection.residual.shape[1]
    figure = Figure(figsize=(9, 1.3 * n + 0.8), layout="constrained")
    axes = figure.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
    for j, ax in enumerate(axes):
        ax.plot(detection.t, detection.residual[:, j], lw=0.7, color="C0")
        for sign in (-1, 1):
            ax.axhline(sign * detection.thresholds[j], color="k", ls="--", lw=0.7)
        for start, stop in intervals:
            ax.axvspan(start, min(stop, detection.t[-1]), color="0.8", zorder=0)
        for event in detection.events:
            ax.axvspan(event.start, max(event.stop, event.start + 1e-3), color="C3",
                       alpha=0.3, zorder=0)
        ax.set_ylabel(f"r{j + 1} [N m]")
        peak = max(np.abs(detection.residual[:, j]).max(), detection.thresholds[j])
        ax.set_ylim(-1.2 * peak, 1.2 * peak)
    axes[-1].set_xlabel("t [s]")
    figure.suptitle(title or f"{detection.robot}: momentum-observer residual, "
                    f"{len(detection.events)} event(s) (red), contacts (grey)")
    return figure


def detection_section(detection: Detection, contacts: Sequence = (), *,
                      log_name: str = "") -> tuple[str, str]:
    """``("Collision detection", HTML)`` for the HTML report: the thresholds and events as
    tables, the score against the true ``contacts`` when given, and the detection plot."""
    from dynid.evaluation.report import figure_html, table_html
    from dynid.monitor.scoring import score_detection

    n = detection.residual.shape[1]
    joints = [f"joint {j + 1}" for j in range(n)]
    parts = [f"<p>Momentum observer on {html.escape(log_name or 'the log')}: "
             f"{len(detection.events)} event(s) in {detection.duration:.2f} s. "
             + html.escape(" ".join(detection.notes)) + "</p>",
             table_html(["", *joints], [
                 ["gain K [1/s]", *[f"{v:.3g}" for v in detection.gain]],
                 ["threshold [N m]", *[f"{v:.3g}" for v in detection.thresholds]],
                 ["peak |r| [N m]", *[f"{v:.3g}" for v in
                                      np.abs(detection.residual).max(axis=0)]]])]
    if detection.events:
        parts.append(table_html(["start [s]", "duration [ms]", "joints", "peak |r| [N m]"], [
            [f"{e.start:.3f}", f"{1e3 * e.duration:.0f}", ", ".join(map(str, e.joints)),
             " ".join(f"{v:.3g}" for v in e.peak)] for e in detection.events],
            text_columns=0))
    if contacts:
        score = score_detection(detection, contacts)
        parts.append(f"<p>Against the {len(contacts)} true contact(s): "
                     f"{html.escape(score.summary())}</p>")
    parts.append(figure_html(detection_figure(detection, contacts), "collision detection"))
    return "Collision detection", "".join(parts)
