"""The benchmark's HTML page, self-contained (the box plots embedded as PNG data): the
settings, per method and noise profile the bias, spread, errors, time and convergence rate,
the methods ranked by their median parameter error over the profiles, and beside each the
reason the literature gives for how such a method behaves (``LITERATURE``, keyed by method
name, else by family: data, not results)."""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from dynid._files import atomic_write

__all__ = ["LITERATURE", "ranking", "write_page"]

#: What the literature says of a method (by name) or of its family, with the source.
LITERATURE: dict[str, str] = {
    "ols": "IDIM-OLS: the regressor is built from noisy, filtered positions and their "
           "numerical derivatives, so the noise in the accelerations enters the regressor "
           "and biases the estimate (errors in variables; Leboutet et al. 2021 §3, Janot et al. "
           "2014); cheap and exact on noise-free data.",
    "wls": "IDIM-WLS: weighting each joint by its residual variance (Gautier & Poignet 2001) "
           "evens out the joints but keeps IDIM-OLS's errors-in-variables bias.",
    "iv": "IDIM-IV: instruments from the simulated model are uncorrelated with the measurement "
          "noise, which removes the bias of IDIM-OLS (Janot, Vandanjon & Gautier 2014).",
    "cls1": "Bounded least squares: box bounds keep the estimate near the prior without "
            "making it physical; the noise bias of IDIM-OLS remains.",
    "cls2": "LMI-constrained least squares: physical feasibility regularises badly excited "
            "directions, lowering the spread; the least-squares bias remains (Sousa & Cortesao "
            "2014).",
    "cls3": "Physically consistent least squares (pseudo-inertia LMI, Wensing et al. 2017): "
            "consistent estimates whatever the noise, robust in badly excited directions "
            "(BIRDy's PC-IDIM family).",
    "log-cholesky": "Log-Cholesky parametrisation (Rucker & Wensing 2022): consistent by "
                    "construction, the same optimum as the LMI form with a smooth solver.",
    "nls": "Nonlinear least squares on the physical parameters: consistent, but an iterative "
           "local search whose result and convergence depend on the start (Gilbert et al.).",
    "irls": "IDIM-IRLS (Huber, Tukey weights): robust to outlying samples; under Gaussian "
            "noise it behaves as IDIM-OLS, errors-in-variables bias included.",
    "tls": "IDIM-TLS: models noise in the regressor as well as in the torques (errors in "
           "variables), which removes the OLS bias when both noises are i.i.d. of known ratio; "
           "sensitive to that ratio (Leboutet et al. 2021 §3).",
    "ml": "IDIM-ML (errors in variables, Gleser 1981): maximum likelihood with a known "
          "covariance of the regressor's and the torques' noise; the benchmark cannot give "
          "it, so it fails there with that reason.",
    "ridge": "Ridge regression: shrinkage trades bias for a smaller spread in badly excited "
             "directions.",
    "didim": "DIDIM: the regressor is built from the closed loop simulated with the current "
             "estimate, free of measurement noise: unbiased under position noise (Gautier, "
             "Janot & Vandanjon 2013); a simulation per iteration, start-dependent.",
    "cloe": "CLOE: closed-loop output error on the positions; robust to torque noise, a "
            "nonconvex search whose convergence depends on the start (Landau).",
    "rls": "Recursive least squares: IDIM-OLS sample by sample; the same noise bias.",
    "ekf": "Extended Kalman filter on the state and parameters: start- and tuning-dependent, "
           "may diverge (Leboutet et al. 2021 §5).",
    "ukf": "Unscented Kalman filter: no linearisation of the model, still start- and "
           "tuning-dependent (Leboutet et al. 2021 §5).",
    "linear": "Inverse-model least squares: closed form, independent of the start; biased "
              "when noisy positions and their derivatives build the regressor.",
    "constrained": "Physically constrained least squares (convex): consistent and independent "
                   "of the start up to the prior's pull; keeps the least-squares noise bias.",
    "nonlinear": "Nonlinear physical-parameter fits: iterative, start-dependent.",
    "simulation": "Simulation-based (DIDIM, CLOE): the regressor is built from the simulated "
                  "closed loop, free of measurement noise, hence robust to position noise "
                  "(Gautier, Janot & Vandanjon 2013); costly (a simulation per iteration) and "
                  "start-dependent.",
    "recursive": "Recursive (RLS, EKF/UKF): online and start-dependent; Kalman filters need "
                 "tuned covariances and may diverge from a poor start (Leboutet et al. 2021 "
                 "§5: the DDIM family).",
}


def _reason(method: str, family: str | None) -> str:
    return LITERATURE.get(method) or LITERATURE.get(family or "", "")


def ranking(rows: Sequence[dict]) -> list[tuple[str, str | None, float]]:
    """Methods by their median over the profiles of the median parameter error (best first;
    methods without a fitted run last)."""
    by_method: dict[str, list[float]] = {}
    family: dict[str, str | None] = {}
    for row in rows:
        family[row["method"]] = row.get("family")
        values = by_method.setdefault(row["method"], [])
        if row.get("median_parameter_error") is not None:
            values.append(row["median_parameter_error"])
    scored = [(m, family[m], float(np.median(v)) if v else float("inf"))
              for m, v in by_method.items()]
    return sorted(scored, key=lambda item: item[2])


def _number(value, percent: bool = False) -> str:
    if value is None:
        return "–"
    return f"{100 * value:.3g} %" if percent else f"{value:.3g}"


def write_page(rows: Sequence[dict], settings: dict, figures: Sequence[Path],
               path: Path) -> Path:
    """``path`` (``.html``), written atomically."""
    e = html.escape
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'>",
             f"<title>dynid benchmark: {e(str(settings.get('robot')))}</title>",
             "<style>body{font-family:sans-serif;max-width:70em;margin:auto}"
             "table{border-collapse:collapse;font-size:90%}td,th{border:1px solid #ccc;"
             "padding:2px 6px;text-align:right}td.l,th.l{text-align:left}</style>",
             "</head><body>",
             f"<h1>BIRDy benchmark of {e(str(settings.get('robot')))}</h1>",
             "<p>Settings: " + ", ".join(f"{e(str(k))} = {e(str(v))}"
                                         for k, v in settings.items()) + ".</p>",
             "<p>Bias and spread: over the draws, of the base-parameter error relative to the "
             "truth's norm; errors are medians over the draws; the torque error is on a "
             "noise-free validation log; time is the method's own.</p>",
             "<h2>Ranking</h2><table><tr><th>#</th><th class='l'>method</th>"
             "<th>median parameter error</th><th class='l'>why (literature)</th></tr>"]
    for k, (method, family, value) in enumerate(ranking(rows), 1):
        parts.append(f"<tr><td>{k}</td><td class='l'>{e(method)}</td>"
                     f"<td>{_number(value if np.isfinite(value) else None, True)}</td>"
                     f"<td class='l'>{e(_reason(method, family))}</td></tr>")
    parts.append("</table><h2>Per method and noise profile</h2><table><tr>"
                 "<th class='l'>method</th><th class='l'>profile</th><th>runs</th>"
                 "<th>bias</th><th>spread</th><th>parameter error</th><th>torque error</th>"
                 "<th>time [s]</th><th>converged</th><th class='l'>note</th></tr>")
    for row in rows:
        note = row.get("skipped") or (f"{row['failed']} failed: {row.get('failure') or ''}"
                                      if row.get("failed") else "")
        rate = row.get("convergence_rate")
        parts.append(
            f"<tr><td class='l'>{e(row['method'])}</td><td class='l'>{e(row['profile'])}</td>"
            f"<td>{row.get('runs') or 0}</td><td>{_number(row.get('bias'), True)}</td>"
            f"<td>{_number(row.get('spread'), True)}</td>"
            f"<td>{_number(row.get('median_parameter_error'), True)}</td>"
            f"<td>{_number(row.get('median_torque_error'), True)}</td>"
            f"<td>{_number(row.get('median_seconds'))}</td>"
            f"<td>{'–' if rate is None else f'{100 * rate:.0f} %'}</td>"
            f"<td class='l'>{e(note)}</td></tr>")
    parts.append("</table>")
    for figure in figures:
        data = base64.b64encode(Path(figure).read_bytes()).decode("ascii")
        parts.append(f"<h2>{e(Path(figure).stem.replace('_', ' '))}</h2>"
                     f"<img alt='{e(Path(figure).stem)}' src='data:image/png;base64,{data}'>")
    parts.append("</body></html>")
    text = "\n".join(parts)
    return atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
