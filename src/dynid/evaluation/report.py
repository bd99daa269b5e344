"""The HTML report: one self-contained file (styles inline, plots embedded as PNG) that says what
was identified, from what, how well it predicts, and whether it is a real body.

Sections: the robot; the data (summary, preprocessing); the estimate (method, figures, base
parameters with their regroupings and relative standard deviations — and the bootstrap's
standard deviations and percentile intervals when the model carries them —, the drive gains
with their standard deviations for a model from motor currents, the link parameters when the
model has a full set); physical consistency; validation (tables and plots); sections
of later stages given as they are; on a motor-current log the data
and the errors in A beside N m (the collision detection: ``dynid.monitor.detection_section``);
and the exact commands that produced the model and the report.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from dynid._files import atomic_write
from dynid._version import __version__
from dynid.data.dataset import Dataset
from dynid.evaluation.plots import (
    excitation_figure,
    figure_png,
    friction_figure,
    parameters_figure,
    torques_figure,
)
from dynid.evaluation.validate import ValidationReport
from dynid.metrics import NOT_FINITE, NOT_FINITE_NOTE, cell
from dynid.model.linear_model import STD_KINDS, LinearModel, bootstrap_table
from dynid.robot.inertia import to_com

__all__ = ["build_report", "figure_html", "table_html", "write_report"]

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { border-bottom: 2px solid #2a6; padding-bottom: .2em; }
h2 { margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: .6em 0; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 2px 7px; text-align: right; }
th { background: #f2f2f2; } td.text, th.text { text-align: left; }
td.bad { background: #fdd; } td.good { background: #dfd; }
img { max-width: 100%; border: 1px solid #eee; margin: .5em 0; }
code, pre { background: #f6f6f6; padding: 2px 4px; }
pre { padding: .6em; overflow-x: auto; white-space: pre-wrap; }
.note { color: #555; font-size: 13px; }
"""


def _e(value) -> str:
    return html.escape(str(value))


def table_html(header: Sequence[str], rows: Sequence[Sequence], *,
               text_columns: int = 1) -> str:
    """An HTML table in the report's style: the first ``text_columns`` columns left-aligned
    text, the others numbers; a cell ``(text, "bad" | "good")`` is shaded. A table showing
    ``NOT_FINITE`` (a figure that is NaN or inf, rendered by ``dynid.metrics.cell``) is followed
    by its footnote."""
    head = "".join(f"<th class='text'>{_e(h)}</th>" if k < text_columns else f"<th>{_e(h)}</th>"
                   for k, h in enumerate(header))
    body = []
    for row in rows:
        cells = []
        for k, entry in enumerate(row):
            css = "text" if k < text_columns else ""
            if isinstance(entry, tuple):  # (text, css class)
                entry, extra = entry
                css = f"{css} {extra}".strip()
            cells.append(f"<td class='{css}'>{_e(entry)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    table = f"<table><tr>{head}</tr>{''.join(body)}</table>"
    if NOT_FINITE in table:
        table += f"<p class='note'>{_e(NOT_FINITE_NOTE)}</p>"
    return table


def figure_html(figure, alt: str) -> str:
    """A matplotlib figure as an embedded PNG image."""
    data = base64.b64encode(figure_png(figure)).decode("ascii")
    return f"<img alt='{_e(alt)}' src='data:image/png;base64,{data}'>"


def _yes(value) -> tuple[str, str]:
    return ("yes", "good") if value else ("NO", "bad")


def build_report(model: LinearModel, data: Dataset, validation: ValidationReport, *,
                 identification: Dataset | None = None, data_name: str = "",
                 command: str = "", title: str | None = None,
                 sections: Sequence[tuple[str, str]] = ()) -> str:
    """The report of ``model`` validated on ``data`` (its ``validation``) as an HTML string.

    ``identification``: the data the model was fitted on, when at hand (its trajectory and
    conditioning are plotted); ``command``: the command line that made the report;
    ``sections``: more sections, ``(heading, HTML body)``, after the validation (a later
    stage's, e.g. ``dynid.monitor.detection_section``).
    """

    robot = model.robot
    n = robot.n_joints
    report = model.report
    parts = [f"<h1>{_e(title or f'dynid report: {robot.name}')}</h1>"]

    # the robot
    parts.append("<h2>Robot</h2>")
    parts.append(f"<p>{_e(robot.name)}: {_e(robot.description)} — {n} joints, "
                 f"{_e(robot.convention.upper())} convention, gravity "
                 f"{_e(np.round(robot.gravity, 5).tolist())} m/s².</p>")
    if robot.table is not None:
        fields = list(robot.table[0].__dataclass_fields__)
        parts.append(table_html(["joint", "type", *fields], [
            [f"{k + 1}", type(row).__name__, *[cell(getattr(row, f), ".5g") for f in fields]]
            for k, row in enumerate(robot.table)], text_columns=2))

    # the data
    parts.append("<h2>Data</h2>")
    steps = data.metadata.get("preprocessing", [])
    duration = data.t[-1] - data.t[0]
    parts.append(f"<p>Validation data {_e(data_name)}: {data.n_samples} samples over "
                 f"{duration:.2f} s ({(data.n_samples - 1) / duration:.4g} Hz mean rate). "
                 f"Preprocessing: {_e(', '.join(steps) or 'none')}.</p>")
    current = data.effort == "current"
    measured = model.measured_torque(data)  # a current log: K i, the model's gains
    rows = [["|q̇| max [rad/s]", *[cell(v, ".3g") for v in np.abs(data.dq).max(axis=0)]]]
    if current:
        parts.append("<p>A motor-current log: the torques below are K i with the model's "
                     "drive gains K.</p>")
        rows += [["RMS i [A]", *[cell(v, ".3g") for v in np.sqrt(np.mean(data.tau**2, axis=0))]],
                 ["|i| max [A]", *[cell(v, ".3g") for v in np.abs(data.tau).max(axis=0)]]]
    rows += [["RMS τ [N m]", *[cell(v, ".3g") for v in np.sqrt(np.mean(measured**2, axis=0))]],
             ["|τ| max [N m]", *[cell(v, ".3g") for v in np.abs(measured).max(axis=0)]]]
    parts.append(table_html(["", *[f"joint {j + 1}" for j in range(n)]], rows))
    if identification is not None and identification.ddq is not None:
        condition = report.get("condition_number")
        figure = excitation_figure(identification.t, identification.q, identification.dq,
                                   identification.ddq, robot.limits,
                                   condition_number=condition,
                                   title="identification trajectory")
        parts.append(figure_html(figure, "identification trajectory"))

    # the estimate
    parts.append("<h2>Estimate</h2>")
    figures = [("method", report.get("method", "?")), ("rank", report.get("rank")),
               ("rank the data determine (the prior and bounds set the rest)",
                report.get("data_rank") if "undetermined" in report else None),
               ("condition number", report.get("condition_number")),
               ("relative error [%]", report.get("relative_error_percent")),
               ("samples", report.get("n_samples")),
               ("friction columns", model.friction.name),
               ("fitted friction", model.fitted_friction.name
                if model.fitted_friction is not None else "none")]
    parts.append(table_html(["", "value"], [[k, cell(v, ".5g") if isinstance(v, float) else str(v)]
                                         for k, v in figures if v is not None]))
    rows = []
    for k, row in enumerate(model.table(), start=1):
        relative = row["relative_std_percent"]
        valid = row["std"] >= 0  # a negative σ (a tampered file) is no figure: "—"
        flag = "bad" if not valid or not relative <= 30 else ""
        rows.append([f"{k}", row["name"], row["expression"], cell(row["value"], ".6g"),
                     cell(row["std"], ".3g", nonnegative=True),
                     (cell(relative if valid else None, ".3g"), flag)])
    heading = "σ (lower bound)" if model.std_kind == "lower bound" else "σ"
    kind = STD_KINDS.get(model.std_kind, "")  # none for a file written before it was recorded
    parts.append("<p class='note'>Base parameters: value, standard deviation, relative σ "
                 f"(above 30 % in red: Gaz et al. drop those). {_e(kind[:1].upper() + kind[1:])}"
                 "</p>")
    parts.append(table_html(["#", "name", "regrouping", "value", heading, f"{heading} [%]"],
                            rows, text_columns=3))
    boot = bootstrap_table(model)
    if boot is not None:
        entry = report["bootstrap"]
        parts.append(
            f"<p>Bootstrap ({_e(entry.get('scheme', ''))}, {_e(entry.get('replicates'))} "
            f"replicates, blocks of {_e(entry.get('block_length'))} samples): standard "
            f"deviations and {100 * float(entry.get('level', 0.95)):.0f} % percentile "
            "intervals that hold under coloured noise and constraints, beside the formula "
            "σ above (which assumes white noise).</p>")
        formula = "σ (formula, lower bound)" if model.std_kind == "lower bound" else "σ (formula)"
        parts.append(table_html(["#", "name", "value", formula, "σ (bootstrap)",
                                 "interval low", "interval high"], [
            [f"{k}", row["name"], cell(row["value"], ".6g"), cell(sigma, ".3g", nonnegative=True),
             cell(row["std"], ".3g", nonnegative=True), cell(row["lower"], ".6g"),
             cell(row["upper"], ".6g")]
            for k, (row, sigma) in enumerate(zip(boot, model.std, strict=True), start=1)],
            text_columns=2))
    if model.drive_gains is not None:
        parts.append(_drive_gains_html(model))
    parts.append(figure_html(parameters_figure(
        model.base.base_names, model.coefficients, model.std), "base parameters"))
    physical = model.physical_parameters
    if physical is not None:

        rows = []
        for k, link in enumerate(physical):
            if link[0] <= 0:  # no CoM without mass
                rows.append([f"{k + 1}", cell(link[0], ".4g"), *["-"] * 9])
                continue
            mass, com, inertia = to_com(link)
            rows.append([f"{k + 1}", cell(mass, ".4g"), *[cell(v, ".4g") for v in com],
                         *[cell(inertia[a, b], ".3g") for a, b in ((0, 0), (1, 1), (2, 2),
                                                               (0, 1), (0, 2), (1, 2))]])
        parts.append("<p>Link parameters (a full physical set; inertia about the CoM, link "
                     "axes, kg m²):</p>")
        parts.append(table_html(["link", "m [kg]", "cx [m]", "cy [m]", "cz [m]", "Ixx", "Iyy",
                             "Izz", "Ixy", "Ixz", "Iyz"], rows))
        parts.append(identifiability_html(model))

    # consistency
    parts.append("<h2>Physical consistency</h2>")
    matrix = validation.mass_matrix
    parts.append(f"<p>M̂(q) ≻ 0 on {100 * matrix['positive_fraction']:.1f} % of "
                 f"{matrix['n_samples']} random poses within the limits (smallest eigenvalue "
                 f"{cell(matrix['min_eigenvalue'], '.3g')}).</p>")
    consistency = validation.consistency
    if consistency is None:
        parts.append("<p>This is a base-parameter estimate: it has no full set of link "
                     "parameters to check. <code>dynid retrieve</code> finds a feasible one.</p>")
    else:
        mark = {True: ("yes", "good"), False: ("NO", "bad"), None: ("-", "")}
        parts.append(table_html(["link", "mass > 0", "I_com ≻ 0", "triangle", "CoM in box",
                             "in ellipsoid", "min eig J"], [
            [f"{k + 1}", mark[consistency.mass_positive[k]],
             mark[consistency.inertia_positive[k]], mark[consistency.triangle[k]],
             mark[consistency.com_in_box[k] if consistency.com_in_box else None],
             mark[consistency.density_realizable[k] if consistency.density_realizable
                  else None],
             cell(consistency.pseudo_inertia_min_eigenvalue[k], ".3g")] for k in range(n)]))
        total = f"total mass {cell(consistency.total_mass, '.3f')} kg"
        if consistency.total_mass_in_range is not None:
            total += (" (within its range)" if consistency.total_mass_in_range
                      else " (OUTSIDE its range)")
        parts.append(f"<p>Physically consistent: {_yes(consistency.consistent)[0]}; within "
                     f"the bounds: {_e(consistency.bounds_verdict())}; {total}.</p>")
        skipped = consistency.not_checked()
        if consistency.within_bounds is not None and skipped:
            names = {"density_realizable": "in ellipsoid (density realizability)",
                     "total_mass_in_range": "total mass in its range"}
            parts.append("<p class='note'>Not checked: " + "; ".join(
                f"{_e(names.get(key, key))}: {_e(reason)}" for key, reason in skipped.items())
                + ".</p>")

    # validation
    parts.append("<h2>Validation</h2>")
    if validation.relative_error_percent is None:
        parts.append(f"<p>Relative error and w_r undefined: "
                     f"{_e(validation.undefined['relative_error_percent'])}. "
                     f"w = {cell(validation.w, '.4g')} N m (the Jaco2 paper's eq. 9).</p>")
    else:
        parts.append(f"<p>Relative error {cell(validation.relative_error_percent, '.3g')} %; "
                     f"w = {cell(validation.w, '.4g')} N m, w_r = {cell(validation.w_r, '.4g')} "
                     "(the Jaco2 paper's eq. 9).</p>")
    stats = validation.residuals
    parts.append(table_html(["", *[f"joint {j + 1}" for j in range(n)]], [
        ["RMSE [N m]", *[cell(v, ".4f") for v in validation.rmse]],
        ["MAE [N m]", *[cell(v, ".4f") for v in validation.mae]],
        ["RMSE without friction [N m]", *[cell(v, ".4f") for v in validation.rmse_rigid]],
        ["RMSE / RMS τ [%]", *[cell(100 * a / b, ".3g") if b > 0 else "undefined (τ = 0)"
                               for a, b in zip(validation.rmse, validation.rms_torque,
                                               strict=True)]],
        ["residual mean [N m]", *[cell(v, ".4f") for v in stats["mean"]]],
        ["residual |e| 95 % [N m]", *[cell(v, ".4f") for v in stats["p95_abs"]]],
        ["residual lag-1 autocorrelation", *[cell(v, ".3f") for v in
                                              stats["lag1_autocorrelation"]]]]))
    parts.append(_diagnostics_html(validation))
    amperes = validation.currents
    if amperes is not None:
        scored = validation.joints or list(range(1, n + 1))
        parts.append("<p>The same errors in motor current (the N m figures over each joint's "
                     "|K|):</p>")
        parts.append(table_html(["", *[f"joint {j}" for j in scored]], [
            ["RMSE [A]", *[cell(v, ".4g") for v in amperes["rmse_current"]]],
            ["MAE [A]", *[cell(v, ".4g") for v in amperes["mae_current"]]],
            ["RMSE without friction [A]", *[cell(v, ".4g") for v in
                                            amperes["rmse_rigid_current"]]],
            ["RMS i [A]", *[cell(v, ".4g") for v in amperes["rms_current"]]],
            ["residual mean [A]", *[cell(v, ".4g") for v in
                                    amperes["residual_mean_current"]]]]))
    rigid = model.rigid_torque(data.q, data.dq, data.ddq)
    predicted = rigid + model.friction_torque(data.dq, data.t)
    parts.append(figure_html(torques_figure(
        data.t, measured, predicted, rigid=rigid,
        title="validation: measured and predicted torques, with and without friction"),
        "torques"))
    if model.friction.name != "none" or model.fitted_friction is not None:
        curve = {"identified friction": lambda dq: model.friction_torque(dq)}
        parts.append(figure_html(friction_figure(data.dq, measured - rigid, curve),
                            "friction"))

    for heading, body in sections:
        parts.append(f"<h2>{_e(heading)}</h2>{body}")

    # provenance
    parts.append("<h2>How this was made</h2>")
    made = report.get("command")
    if made:
        parts.append(f"<p>The model: <code>{_e(made)}</code></p>")
    if command:
        parts.append(f"<p>This report: <code>{_e(command)}</code></p>")

    parts.append(f"<p class='note'>dynid {_e(__version__)}</p>")
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{_e(title or f'dynid report: {robot.name}')}</title>"
            f"<style>{_STYLE}</style></head><body>{''.join(parts)}</body></html>\n")


def identifiability_html(model: LinearModel) -> str:
    """Which of a full physical set's parameters the data determine and which the prior or a
    bound holds (``dynid.model.identifiability``): the model report's table (written by
    ``dynid identify``, with the bounds its solution sits on), else computed from the
    regrouping alone. A held mass is the prior's, not a measurement: marked."""
    from dynid.model.identifiability import Identifiability, physical_identifiability

    robot = model.robot
    entry = model.report.get("identifiability")
    try:
        found = (Identifiability.from_json(entry) if entry is not None else
                 physical_identifiability(model.base, robot.n_joints,
                                          rotor_inertia=model.rotor_inertia,
                                          link_names=robot.link_names,
                                          joint_names=robot.joint_names, std=model.std))
    except ValueError as error:
        return f"<p class='note'>Identifiability not shown: {_e(error)}</p>"
    flag = {"determined": "good", "partly": "", "held": "bad"}
    kinds = ["mass", "com", "inertia"] + (["rotor inertia"] if model.rotor_inertia else [])
    rows = [[owner, *[(row[kind].words(), flag[row[kind].status]) if kind in row else "-"
                      for kind in kinds]] for owner, row in found.by_link()]
    loose = [q for q in found.quantities if q.kind == "friction"
             and (q.status != "determined" or q.bound)]
    counts = found.counts()
    text = ("<p>What sets each physical parameter: the data determine it, only in "
            "combination with others, or not at all — then the prior (where the fit starts "
            "and what it is pulled to: by default the robot file's values) or a bound holds "
            "it, and its value above is not a measurement. "
            f"{counts['determined']} determined, {counts['partly']} only in combination, "
            f"{counts['held']} held (a CoM through its mass and first moments).</p>")
    text += table_html(["link", "mass", "CoM", "inertia",
                        *(["rotor inertia"] if model.rotor_inertia else [])], rows,
                       text_columns=len(kinds) + 1)
    if loose:
        text += ("<p>Friction: " + "; ".join(f"{_e(q.parameters[0])} {_e(q.words())}"
                                             for q in loose) + ".</p>")
    return text + "".join(f"<p class='note'>{_e(note)}</p>" for note in found.notes)


def _diagnostics_html(validation: ValidationReport) -> str:
    """The residual diagnostics (``dynid.evaluation.diagnostics``): per scored joint, the
    RMSE over the torque's variation about its mean (above 50 % in red: the model explains
    little there), what it is, the missing terms the residual names; then one line per flagged
    joint or named term, with the option that adds the term."""
    found = validation.diagnostics
    if not found:
        return ""
    status = {"explained": ("explained", "good"), "unexplained": ("UNEXPLAINED", "bad"),
              "unexcited": ("unexcited", "bad")}
    table = table_html(["", *[f"joint {d.joint}" for d in found]], [
        ["RMSE / σ_τ [%] (σ_τ about its mean)",
         *[(cell(100 * d.ratio, ".3g"), "bad" if d.flagged else "") for d in found]],
        ["verdict", *[status[d.status] for d in found]],
        ["residual points to", *[", ".join(d.named) or "-" for d in found]],
        ["best delay [ms]", *[cell(d.delay_ms, ".3g") if "delay" in d.named else "-"
                              for d in found]]])
    notes = [d.message(f"joint {d.joint}") if d.flagged else
             f"joint {d.joint}: its residual points to {d.describe_terms()}"
             for d in found if d.flagged or d.named]
    return ("<p>Residual diagnostics: a joint whose RMSE is above half its torque's variation "
            "is flagged (unexcited when that variation is within twice the noise); a missing "
            "term is named when it explains at least 20 % of the residual.</p>" + table
            + "".join(f"<p class='note'>{_e(note)}</p>" for note in notes))


def _drive_gains_html(model: LinearModel) -> str:
    """The drive gains of a model from motor currents: value, standard deviation, relative
    standard deviation, per joint (a gain that was given, not identified, has σ 0)."""
    known = model.report.get("drive_gains", {}).get("known", {}) \
        if isinstance(model.report.get("drive_gains"), dict) else {}
    rows = []
    for j, (name, value, sigma) in enumerate(zip(
            model.robot.joint_names, model.drive_gains, model.drive_gains_std, strict=True)):
        relative = 100 * sigma / abs(value) if np.isfinite(sigma) else None
        rows.append([f"{j + 1}", name, cell(value, ".6g"), cell(sigma, ".3g", nonnegative=True),
                     cell(relative, ".3g"), "given" if name in known else "identified"])
    return ("<p>Drive gains K (torque = K × current) identified with the dynamics from motor "
            "currents:</p>"
            + table_html(["joint", "name", "K [N m/A]", "σ [N m/A]", "σ [%]", "source"], rows,
                         text_columns=2))


def write_report(path: str | Path, text: str) -> Path:
    """Write the report atomically (no half-written file on failure)."""
    return atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
