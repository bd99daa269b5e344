"""Method comparison as in the Jaco2 paper's Table 5: each trajectory in turn identifies, every
trajectory validates, for every method; errors ``w`` and ``w_r`` (eq. 9), the best and worst
per row, and the three consistency rows (feasibility (3), triangle inequality (4), first
moment (5)/(6)).

Methods: ``cad`` (the prior's parameters, no identification), ``ols``, ``wls``, ``iv`` (needs
the reference trajectories the controller tracked), ``cls1``, ``cls2``, ``cls3``,
``log-cholesky`` (``dynid.identification.constrained.cls``) and ``nls``
(``dynid.identification.nonlinear.nls``), and the registry's methods that need nothing but
the log (``REGISTERED_METHODS``: robust, errors-in-variables, penalised and recursive
estimators, through ``Method.fit``; no bootstrap). The fits run through a
``concurrent.futures.Executor`` (local processes by default; any cluster's executor from
Python), one task per (method, identification trajectory); validation runs here.

With ``bootstrap=B`` every fit (all but ``cad``) is bootstrapped in its task
(``dynid.identification.bootstrap``: B refits on resampled residual blocks), and every cell
gains the replicates' standard deviation and 95 % percentile interval of ``w`` and ``w_r``:
the errors that models refitted on equally noisy runs of the same trajectory give, so whether
one method's error is really below another's or within the data's noise. (On its own
identification data a fit sits at the low end of that range: least squares is optimistic
there.)

Motor-current logs (``effort="current"``): every method identifies the drive gains with the
dynamics (``dynid.identification._currents.fit_currents``, the dispatch the bootstrap uses too:
``ols`` is Gautier & Briot's), each fit given the same payload log and known payload and/or
known gains; ``cad``, ``wls`` and ``iv`` identify no gains and are refused. The errors stay in
N m: each model reads a log's currents as torques with its own gains (``K i``); the JSON lists
every fit's gains with their standard deviations (``drive_gains``).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from dynid._files import atomic_write, to_builtin
from dynid._parallel import run_parallel
from dynid.data.dataset import Dataset
from dynid.evaluation.validate import check_compatible
from dynid.friction.models import FrictionModel, NoFriction
from dynid.identification._currents import CURRENT_METHODS, current_scale, fit_currents
from dynid.identification.bootstrap import Bootstrap, bootstrap
from dynid.identification.constrained.cls import identify_constrained
from dynid.identification.drive_gains import KnownPayload
from dynid.identification.estimate import Problem
from dynid.identification.linear.estimators import ESTIMATORS
from dynid.identification.linear.idim import (
    identify,
    identify_iv,
    robot_model,
)
from dynid.identification.methods import find_method
from dynid.identification.nonlinear.nls import NLS_FRICTION_MODELS, identify_nls
from dynid.metrics import NOT_FINITE, NOT_FINITE_NOTE, any_not_finite, cell, w_errors
from dynid.model.base_parameters import default_friction
from dynid.model.consistency import check_consistency
from dynid.model.linear_model import LinearModel
from dynid.robot import Robot
from dynid.robot.bounds import ParameterBounds

__all__ = ["COMPARE_METHODS", "DEFAULT_METHODS", "Comparison", "compare_methods", "fit_method",
           "write_table"]

# the registry's methods that fit a log from itself with their defaults, through the one
# contract (``dynid.identification.IDENTIFICATION_METHODS``; ml needs its noise, the
# simulation-based methods the controller)
REGISTERED_METHODS = ("irls-huber", "irls-tukey", "tls", "ridge", "elastic-net",
                      "pc-irls-huber", "pc-irls-tukey", "pc-ridge", "pc-elastic-net", "rls",
                      "ekf", "srekf", "ukf", "srukf")
COMPARE_METHODS = ("cad", "ols", "wls", "iv", "cls1", "cls2", "cls3", "log-cholesky", "nls",
                   *REGISTERED_METHODS)
DEFAULT_METHODS = ("cad", "ols", "wls", "cls1", "cls2", "cls3", "log-cholesky", "nls")
CRITERIA = ("Physical feasibility (3)", "Triangle inequality (4)", "First moment (5)/(6)")

# What the table shows, written once for every format (Markdown, CSV, JSON): the errors of
# eq. 9 (dynid.metrics.w_errors) and the criteria that _criteria checks.
CAPTION = ("Torque prediction errors w [N m] and w_r [-] (Jaco2 eq. 9) of each method, in the "
           "Jaco2 paper's Table 5 layout: an 'Identification: A' row evaluates the model "
           "identified on trajectory A on A itself (the fit); the 'Validation: B' rows beneath "
           "it evaluate that same model on each other trajectory B. The last three rows: the "
           "physical-consistency criteria of each method's models (Yes/No).")
METRICS = {
    "w": "w = norm(e) / N [N m], with e = tau - tau_predicted stacked over the N samples and "
         "all joints, norm the Euclidean norm (Jaco2 eq. 9)",
    "w_r": "w_r = norm(e) / norm(tau) [-]: the same error relative to the measured torques "
           "(Jaco2 eq. 9)",
}
CRITERIA_DEFINITIONS = {
    "Physical feasibility (3)": "every link's mass is positive and its inertia tensor about "
                                "its centre of mass positive (semi-)definite",
    "Triangle inequality (4)": "every link's principal moments of inertia about its centre of "
                               "mass satisfy I_a + I_b >= I_c",
    "First moment (5)/(6)": "every link's centre of mass (first moment / mass) lies inside the "
                            "box of the robot file's parameter bounds; '-' where the robot has "
                            "no bounds",
}
CONVERGED_ROW = "Converged"
CONVERGED_RULE = ("Converged: Yes where every fit of the method met its own stopping rule; No "
                  "where at least one did not (an iteration limit, a divergence, an early "
                  "end: its errors are those of its last estimate, not of a converged one); "
                  "'-' for the closed forms.")
CURRENT_NOTE = ("Motor-current logs: each model reads the measured currents as torques K i with "
                "its own identified drive gains K; w [N m] and w_r compare those torques with "
                "its predictions.")
CRITERIA_RULE = ("Yes: the models identified on every trajectory pass; No: at least one fails. "
                 "A model without a full set of link parameters is checked on the equivalent "
                 "set it predicts with.")


@dataclass
class Comparison:
    """Errors ``w`` [N m] and ``w_r`` indexed (identification trajectory, evaluated
    trajectory, method), the consistency criteria per method, and the fit times."""

    methods: list[str]
    names: list[str]  # the trajectories
    w: NDArray
    w_r: NDArray
    criteria: dict  # criterion -> {method: True / False / None}
    seconds: dict  # method -> total fit time [s]
    models: dict = field(default_factory=dict, repr=False)  # (method, i) -> LinearModel
    # with a bootstrap: the replicates' std of w and w_r, and their percentile intervals
    # (..., 2) at ``level``, NaN for cad; the Bootstrap of each (method, i); its settings
    w_std: NDArray | None = None
    w_r_std: NDArray | None = None
    w_interval: NDArray | None = None
    w_r_interval: NDArray | None = None
    bootstraps: dict = field(default_factory=dict, repr=False)  # (method, i) -> Bootstrap
    bootstrap_settings: dict | None = None  # replicates, seed, level
    effort: str = "torque"  # "current": motor-current logs, every model with drive gains
    # method -> whether every fit met its method's stopping rule (None: nothing to stop);
    # the tables show it where a method iterates
    converged: dict = field(default_factory=dict)

    @property
    def iterative(self) -> bool:
        return any(value is not None for value in self.converged.values())

    def drive_gains(self) -> dict | None:
        """Motor-current logs: ``{method: [{"identification", "value", "std"}, ...]}``, the
        drive gains [N m/A] each fit identified, per identification trajectory; else None."""
        if self.effort != "current":
            return None
        return {method: [{"identification": self.names[i],
                          "value": self.models[(method, i)].drive_gains.tolist(),
                          "std": self.models[(method, i)].drive_gains_std.tolist()}
                         for i in range(len(self.names))] for method in self.methods}

    def rows(self) -> list[tuple[str, int, int]]:
        """Table 5's rows: (label, identification index, evaluated index)."""
        out = []
        for i, name in enumerate(self.names):
            out.append((f"Identification: {name}", i, i))
            out += [(f"  Validation: {other}", i, j)
                    for j, other in enumerate(self.names) if j != i]
        return out

    def validation_errors(self, metric: str = "w_r") -> NDArray:
        """``(methods, validation cases)``: every off-diagonal (identify i, validate j)."""
        values = self.w_r if metric == "w_r" else self.w
        cases = [(i, j) for i in range(len(self.names)) for j in range(len(self.names))
                 if i != j]
        return np.array([[values[i, j, m] for i, j in cases] for m in range(len(self.methods))])

    def to_json(self) -> dict:
        rows = [{"label": label.strip(), "identification": self.names[i],
                 "evaluated": self.names[j],
                 "w": dict(zip(self.methods, self.w[i, j], strict=True)),
                 "w_r": dict(zip(self.methods, self.w_r[i, j], strict=True)),
                 "best": self.methods[int(np.argmin(self.w[i, j]))],
                 "worst": self.methods[int(np.argmax(self.w[i, j]))],
                 **self._spread_json(i, j)}
                for label, i, j in self.rows()]
        out = {"methods": self.methods, "trajectories": self.names, "rows": rows,
               "criteria": self.criteria, "seconds": self.seconds,
               "caption": CAPTION, "metrics": METRICS,
               "criteria_definitions": {c: CRITERIA_DEFINITIONS[c] for c in CRITERIA},
               "criteria_rule": CRITERIA_RULE, "effort": self.effort,
               "converged": self.converged, "converged_rule": CONVERGED_RULE}
        if self.effort == "current":
            out["drive_gains"] = self.drive_gains()
            out["effort_note"] = CURRENT_NOTE
        if self.bootstrap_settings is not None:
            level = self.bootstrap_settings["level"]
            out["bootstrap"] = {
                **self.bootstrap_settings,
                "fits": [{"method": method, "identification": self.names[i],
                          "names": list(spread.names), **spread.to_report(level)}
                         for (method, i), spread in sorted(
                             self.bootstraps.items(),
                             key=lambda item: (self.methods.index(item[0][0]), item[0][1]))]}
        return to_builtin(out)

    def _spread_json(self, i: int, j: int) -> dict:
        """A row's bootstrap entries (none without a bootstrap; None for cad)."""
        if self.w_std is None:
            return {}

        def cells(values):
            return {m: (None if np.isnan(v).any() else v)
                    for m, v in zip(self.methods, values, strict=True)}

        return {"w_std": cells(self.w_std[i, j]), "w_r_std": cells(self.w_r_std[i, j]),
                "w_interval": cells(self.w_interval[i, j]),
                "w_r_interval": cells(self.w_r_interval[i, j])}

    def to_markdown(self) -> str:
        """Table 5: the best cell of each row in bold, the worst in italics."""
        head = "| Trajectory | " + " | ".join(f"{m} w [N m] | {m} w_r" for m in self.methods)
        lines = [head + " |", "|---" * (1 + 2 * len(self.methods)) + "|"]
        for label, i, j in self.rows():
            best, worst = _best_worst(self.w[i, j])
            cells = []
            for m in range(len(self.methods)):
                pair = [cell(self.w[i, j, m], ".5f"), cell(self.w_r[i, j, m], ".5f")]
                if m == best:
                    pair = [f"**{v}**" for v in pair]
                elif m == worst:
                    pair = [f"*{v}*" for v in pair]
                cells += pair
            lines.append(f"| {label.replace('  ', '&nbsp;&nbsp;')} | " + " | ".join(cells)
                         + " |")
        for criterion in CRITERIA:
            marks = [_mark(self.criteria[criterion][m]) for m in self.methods]
            cells = [cell for mark in marks for cell in (mark, "")]  # under w, w_r blank
            lines.append(f"| {criterion} | " + " | ".join(cells) + " |")
        if self.iterative:
            cells = [c for m in self.methods for c in (_mark(self.converged.get(m)), "")]
            lines.append(f"| {CONVERGED_ROW} | " + " | ".join(cells) + " |")
        if any_not_finite(*lines):
            lines += ["", NOT_FINITE_NOTE]
        if self.effort == "current":
            lines += ["", CURRENT_NOTE]
        lines += ["", f"Table: {CAPTION}", "",
                  "Bold: the smallest error of the row; italics: the largest (by w; w_r ranks "
                  "the same within a row).", "",
                  "Metrics:", *[f"- {METRICS[k]}" for k in ("w", "w_r")], "",
                  "Criteria rows (under each method's w column):",
                  *[f"- {c}: {CRITERIA_DEFINITIONS[c]}" for c in CRITERIA], "",
                  CRITERIA_RULE, *([CONVERGED_RULE] if self.iterative else [])]
        return "\n".join(lines) + "\n"

    def to_csv(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["row", "identification", "evaluated",
                         *[f"{m} {k}" for m in self.methods for k in ("w", "w_r")],
                         "best", "worst", "metric"])
        for label, i, j in self.rows():
            writer.writerow([label.strip(), self.names[i], self.names[j],
                             *[cell(v, ".6g") for m in range(len(self.methods))
                               for v in (self.w[i, j, m], self.w_r[i, j, m])],
                             *[self.methods[k] if k is not None else NOT_FINITE
                               for k in _best_worst(self.w[i, j])],
                             f"{METRICS['w']}; {METRICS['w_r']}; on the "
                             + ("identification trajectory itself" if i == j
                                else "validation trajectory")])
        for criterion in CRITERIA:
            writer.writerow([criterion, "", "",
                             *[v for m in self.methods
                               for v in (_mark(self.criteria[criterion][m]), "")], "", "",
                             f"Yes/No: {CRITERIA_DEFINITIONS[criterion]}. {CRITERIA_RULE}"])
        if self.iterative:
            writer.writerow([CONVERGED_ROW, "", "",
                             *[v for m in self.methods
                               for v in (_mark(self.converged.get(m)), "")], "", "",
                             CONVERGED_RULE])
        return out.getvalue()

    def lines(self) -> list[str]:
        """A terminal table of w_r (the best of each row marked ``*``)."""
        width = max(12, *(len(m) + 2 for m in self.methods))
        out = [f"  {'w_r [-] (Jaco2 eq. 9)':<28}" + "".join(f"{m:>{width}}" for m in self.methods)]
        for label, i, j in self.rows():
            best = _best_worst(self.w[i, j])[0]
            out.append(f"  {label:<28}" + "".join(
                f"{cell(self.w_r[i, j, m], '.4f'):>{width - 1}}{'*' if m == best else ' '}"
                for m in range(len(self.methods))))
        for criterion in CRITERIA:
            out.append(f"  {criterion:<28}" + "".join(
                f"{_mark(self.criteria[criterion][m]):>{width}}" for m in self.methods))
        if self.iterative:
            out.append(f"  {CONVERGED_ROW:<28}" + "".join(
                f"{_mark(self.converged.get(m)):>{width}}" for m in self.methods))
        out.append("  fit time [s]" + " " * 16 + "".join(
            f"{self.seconds[m]:>{width}.1f}" for m in self.methods))
        if self.effort == "current":
            out += ["", f"  {CURRENT_NOTE}", "  drive gains K [N m/A] per joint:"]
            for method, fits in self.drive_gains().items():
                for fit in fits:
                    out.append(f"  {method + ' on ' + fit['identification']:<28}" + " ".join(
                        f"{value:.5g} ± {cell(std, '.2g', nonnegative=True)}"
                        for value, std in zip(fit["value"], fit["std"], strict=True)))
        if self.w_std is not None:
            settings = self.bootstrap_settings
            wide = max(width, 20)
            out += ["", f"  bootstrap: {settings['replicates']} replicates of every fit "
                        f"(seed {settings['seed']}); w_r std and {settings['level']:.0%} "
                        "percentile interval",
                    f"  {'w_r std [-]':<28}" + "".join(f"{m:>{width}}" for m in self.methods)]
            for label, i, j in self.rows():
                out.append(f"  {label:<28}" + "".join(
                    f"{'-' if np.isnan(v) else f'{v:.2g}':>{width}}"
                    for v in self.w_r_std[i, j]))
            out.append(f"  {'w_r interval [-]':<28}"
                       + "".join(f"{m:>{wide}}" for m in self.methods))
            for label, i, j in self.rows():
                out.append(f"  {label:<28}" + "".join(
                    f"{'-' if np.isnan(low) else f'[{low:.4f}, {high:.4f}]':>{wide}}"
                    for low, high in self.w_r_interval[i, j]))
        stopped = [m for m in self.methods if self.converged.get(m) is False]
        if stopped:
            out.append(f"  {', '.join(stopped)}: did not meet its stopping rule, not converged "
                       "(the errors are its last estimate's)")
        if any_not_finite(*out):
            out.append(f"  {NOT_FINITE_NOTE}")
        return out


def _best_worst(errors) -> tuple[int | None, int | None]:
    """The methods of the smallest and largest finite error of a row (None: none finite)."""
    errors = np.asarray(errors, dtype=float)
    finite = np.flatnonzero(np.isfinite(errors))
    if not finite.size:
        return None, None
    return (int(finite[np.argmin(errors[finite])]), int(finite[np.argmax(errors[finite])]))


def _mark(value: bool | None) -> str:
    return {True: "Yes", False: "No", None: "-"}[value]


def _fit_options(method: str, robot: Robot, *, prior: Robot | None, reference,
                 nls_friction: str | None, friction: FrictionModel | None,
                 bounds: ParameterBounds | None) -> dict:
    """The keyword arguments of ``method``'s identification function (the same for its fit
    and its bootstrap's refits)."""
    if method in ("ols", "wls"):
        return {"estimator": ESTIMATORS[method](), "friction": friction}
    if method == "iv":
        return {"reference": reference, "friction": friction or default_friction(robot)}
    if method in ("cls1", "cls2", "cls3", "log-cholesky"):
        return {"friction": friction, "bounds": bounds,
                "prior": None if prior is None else prior.parameters}
    own = robot.friction.name if robot.friction.name in NLS_FRICTION_MODELS else None
    return {"friction": nls_friction or own or "stribeck", "bounds": bounds,
            "start": None if prior is None else prior.parameters}


def _current_options(method: str, robot: Robot, **settings) -> dict:
    """The keyword arguments of ``method``'s fit of motor-current logs (``fit_currents``),
    besides the payload and the known gains: Gautier & Briot's (``ols``) take the friction
    columns only; the constrained methods and NLS what they take from torques."""
    if method not in CURRENT_METHODS:
        raise ValueError(f"`method` {method!r} identifies no drive gains, so it cannot read "
                         f"motor-current logs: choose among {CURRENT_METHODS}")
    if method == "ols":
        return {"friction": settings["friction"]}
    return _fit_options(method, robot, **settings)


def fit_method(method: str, robot: Robot, data: Dataset, *, prior: Robot | None = None,
               reference=None, nls_friction: str | None = None,
               friction: FrictionModel | None = None,
               bounds: ParameterBounds | None = None, payload_data: Dataset | None = None,
               payload: KnownPayload | None = None, gains: dict | None = None) -> LinearModel:
    """One method's model of ``robot`` from ``data`` (see the module for the methods);
    ``friction``: the linear friction columns of the linear and constrained methods (default
    ``default_friction``), ``bounds``: the constrained methods' and NLS's (default the
    robot's). A motor-current log: the method identifies the drive gains too, its scale fixed
    by the payload log ``payload_data`` with its ``payload`` and/or the known ``gains``
    (``fit_currents``)."""

    if method not in COMPARE_METHODS:
        raise ValueError(f"`method` must be one of {COMPARE_METHODS}, got {method!r}")
    if data.effort == "current":
        options = _current_options(method, robot, prior=prior, reference=reference,
                                   nls_friction=nls_friction, friction=friction,
                                   bounds=bounds)
        result = fit_currents(method, robot, data, payload_data=payload_data,
                              payload=payload, gains=gains, **options)
        return result if isinstance(result, LinearModel) else result.model
    if payload_data is not None or payload is not None or gains is not None:
        raise ValueError("`payload_data`, `payload` and `gains` fix the drive gains of "
                         "motor-current logs, and `data` holds joint torques")
    if method == "iv" and reference is None:
        raise ValueError("`iv` needs the reference trajectory of each log (`references`)")
    if method == "cad":
        source = prior if prior is not None else robot
        body = robot.with_parameters(source.parameters).with_friction(
            NoFriction(robot.n_joints)).with_rotor_inertia(None)  # the CAD rigid body alone
        return dataclasses.replace(robot_model(body), report={"method": "cad"})
    if method in REGISTERED_METHODS:
        registered = find_method(method)
        start = None if prior is None else prior.parameters  # as NLS's start
        options = {"bounds": bounds} if registered.family == "constrained" else {}
        estimate = registered.fit(Problem(robot, data, friction=friction, start=start),
                                  **options)
        iterated = estimate.iterations > 0 or not estimate.converged
        return _converged(estimate.model, estimate.converged) if iterated else estimate.model
    options = _fit_options(method, robot, prior=prior, reference=reference,
                           nls_friction=nls_friction, friction=friction, bounds=bounds)
    if method in ("ols", "wls"):
        return identify(robot, data, **options)
    if method == "iv":
        return identify_iv(robot, data, **options)
    if method == "nls":
        result = identify_nls(robot, data, **options)
        return _converged(result.model, result.success)
    return identify_constrained(robot, data, method=method, **options).model


def _converged(model: LinearModel, converged: bool) -> LinearModel:
    """``model`` with ``report["converged"]``: whether its method's stopping rule was met."""
    return dataclasses.replace(model, report={**model.report, "converged": bool(converged)})


def _convergence(models: Sequence[LinearModel]) -> bool | None:
    """Whether every fit of a method met its stopping rule; None where the method has no
    iterations to stop (a closed form, or a solver that reports none)."""
    said = [model.report.get("converged") for model in models]
    return None if all(v is None for v in said) else all(v is not False for v in said)


def _task(task: dict) -> dict:
    """One (method, identification trajectory) fit, and its bootstrap, in a worker."""
    clock = time.perf_counter()
    settings = {key: task[key] for key in ("prior", "reference", "nls_friction", "friction",
                                           "bounds")}
    scale = task["scale"] or {}
    model = fit_method(task["method"], task["robot"], task["data"], **settings, **scale)
    spread = None
    if task["bootstrap"] is not None and task["method"] != "cad":
        options = (_current_options if scale else _fit_options)(task["method"], task["robot"],
                                                                 **settings)
        spread = bootstrap(task["robot"], task["data"], method=task["method"], model=model,
                           replicates=task["bootstrap"], block_length=task["block_length"],
                           seed=task["seed"], **scale, **options)
        model = spread.annotate(model)
    return {"method": task["method"], "index": task["index"], "model": model,
            "bootstrap": spread, "seconds": time.perf_counter() - clock}


def _replicate_errors(spread: Bootstrap, data: Dataset, picked: list[int],
                      reestimate: bool) -> tuple[NDArray, NDArray]:
    """Every replicate's ``w`` and ``w_r`` on ``data`` ``(B,)`` each (``reestimate``: with
    the log's own offsets, each replicate's mean residual per joint removed)."""
    own = spread.drive_gains is not None and data.effort == "current"
    if own:  # a current log: each replicate reads it with its own drive gains
        gains = spread.drive_gains[:, picked]  # (B, p)
        currents = np.asarray(data.tau)[:, picked]
        measured_norm = np.sqrt(np.einsum("np,bp->b", currents**2, gains**2))
    else:
        measured = spread.model.measured_torque(data)[:, picked]
        measured_norm = float(np.linalg.norm(measured))
    sums = np.zeros((spread.replicates, len(picked)))
    squares = np.zeros_like(sums)
    for rows, predicted in spread.predictions(data):
        target = (currents[rows][None] * gains[:, None, :] if own
                  else measured[rows][None])
        error = target - predicted[:, :, picked]
        sums += error.sum(axis=1)
        squares += (error**2).sum(axis=1)
    count = data.n_samples
    if reestimate:
        squares = squares - sums**2 / count
    norm = np.sqrt(np.maximum(squares, 0.0).sum(axis=1))
    return norm / count, norm / measured_norm


def _criteria(model: LinearModel, robot: Robot, bounds: ParameterBounds | None
              ) -> tuple[bool, bool, bool | None]:
    """Jaco2 Table 5's three rows for one model: its full parameter set when it has one, else
    the equivalent set it predicts with (a base-parameter estimate)."""
    parameters = model.physical_parameters
    if parameters is None:
        parameters = model.equivalent_parameters[: model.n_rigid].reshape(-1, 10)
    report = check_consistency(parameters, bounds if bounds is not None else robot.bounds)
    feasible = all(report.mass_positive) and all(report.inertia_positive)
    first_moment = all(report.com_in_box) if report.com_in_box else None
    return feasible, all(report.triangle), first_moment


def compare_methods(robot: Robot, datasets: Sequence[Dataset], *,
                    names: Sequence[str] | None = None,
                    methods: Sequence[str] = DEFAULT_METHODS, prior: Robot | None = None,
                    references: Sequence | None = None, nls_friction: str | None = None,
                    friction: FrictionModel | None = None,
                    bounds: ParameterBounds | None = None,
                    joints: Sequence[int | str] | None = None,
                    reestimate_offsets: bool = False,
                    bootstrap: int | None = None, block_length: int | str = "auto",
                    seed: int | None = None, level: float = 0.95,
                    payload_data: Dataset | None = None, payload: KnownPayload | None = None,
                    gains: dict | None = None,
                    executor: Executor | None = None,
                    progress: Callable[[str], None] | None = None) -> Comparison:
    """Table 5 for ``robot`` over ``datasets`` (at least two), see the module.

    ``prior``: the CAD robot (the ``cad`` row, the constrained methods' regulariser and the
    NLS start; default the robot's own parameters); ``references``: for ``iv``, the trajectory
    each log tracked; ``nls_friction``: the NLS friction model (default the robot file's when
    it can be fitted, else viscous-coulomb); ``friction``: the linear friction columns of the
    other methods (default ``default_friction``); ``bounds``: of the constrained methods and
    NLS (default the robot's). ``joints`` (names or numbers from 1): score only these (a dead
    sensor); ``reestimate_offsets``: each validation log's own torque offsets (its mean
    residual per joint) replace the model's, as ``validate_model`` does.
    ``bootstrap``: B replicates of every fit but cad (see the module; ``block_length`` and a
    ``seed`` >= 0 as ``dynid.identification.bootstrap``: each fit draws from its own stream
    of ``seed``, default fresh and recorded), with intervals at ``level``.
    Motor-current ``datasets`` (see the module): ``payload_data`` (a current log with the
    known ``payload`` on the last link) and/or known ``gains`` go to every fit (and every
    bootstrap refit); ``methods`` among ``CURRENT_METHODS``.
    """
    if len(datasets) < 2:
        raise ValueError(f"`datasets` must hold at least two trajectories (one identifies, "
                         f"the others validate), got {len(datasets)}")
    names = [f"Traj {k + 1}" for k in range(len(datasets))] if names is None else list(names)
    if len(names) != len(datasets):
        raise ValueError(f"`names` must name the {len(datasets)} datasets, got {len(names)}")
    for method in methods:
        if method not in COMPARE_METHODS:
            raise ValueError(f"`methods` must be among {COMPARE_METHODS}, got {method!r}")
    refitted = [m for m in methods if m in REGISTERED_METHODS]
    if bootstrap is not None and refitted:
        raise ValueError(f"`bootstrap` refits ols, wls, iv, the constrained methods and nls, "
                         f"not {', '.join(refitted)}")
    bounded = [m for m in methods if m in ("cls1", "cls2", "cls3", "log-cholesky")]
    picked = robot.joint_indices(joints) if joints is not None else list(range(robot.n_joints))
    if not picked:
        raise ValueError("`joints` is empty: name at least one joint to score")
    if bounded and robot.bounds is None and bounds is None:
        raise ValueError(f"`methods` {', '.join(bounded)} need parameter bounds, and "
                         f"{robot.name!r} has none: give a robot file with `bounds`, or leave "
                         "them out")
    if "iv" in methods and (references is None or len(references) != len(datasets)):
        raise ValueError("`iv` needs `references`: one trajectory per dataset")
    if prior is not None and prior.n_joints != robot.n_joints:
        raise ValueError(f"`prior` has {prior.n_joints} joints, the robot {robot.n_joints}")
    for data in datasets:
        if data.n_joints != robot.n_joints:
            raise ValueError(f"a dataset has {data.n_joints} joints, the robot "
                             f"{robot.n_joints}")
        if data.ddq is None:
            raise ValueError("every dataset needs accelerations (ddq): preprocess the logs")
    scale = current_scale(robot, datasets, methods, payload_data, payload, gains, data="datasets",
                          method="methods")
    say = progress or (lambda _line: None)
    if bootstrap is not None:
        if isinstance(bootstrap, bool) or not isinstance(bootstrap, (int, np.integer)) or \
                bootstrap < 2:
            raise ValueError(f"`bootstrap` must be an integer >= 2 (replicates) or None, got "
                             f"{bootstrap!r:.40}")
        if not 0 < level < 1:
            raise ValueError(f"`level` must be a fraction in (0, 1), got {level!r:.40}")
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % 2**32)
        elif isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"`seed` must be an integer >= 0 or None, got {seed!r:.40}")
    tasks = [{"method": method, "index": i, "robot": robot, "data": data, "prior": prior,
              "reference": None if references is None else references[i],
              "nls_friction": nls_friction, "friction": friction, "bounds": bounds,
              "bootstrap": bootstrap, "block_length": block_length, "scale": scale,
              "seed": None if bootstrap is None else int(np.random.SeedSequence(
                  seed, spawn_key=(COMPARE_METHODS.index(method), i)).generate_state(
                  1, np.uint64)[0])}
             for method in methods for i, data in enumerate(datasets)]
    results = {}

    def arrived(result: dict) -> None:
        results[(result["method"], result["index"])] = result
        say(f"compare: {len(results)}/{len(tasks)} fits done ({result['method']} on "
            f"{names[result['index']]}, {result['seconds']:.1f} s)")

    run_parallel(_task, tasks, executor=executor, on_result=arrived)
    k = len(datasets)
    w = np.empty((k, k, len(methods)))
    w_r = np.empty_like(w)
    spreads = np.full((2, k, k, len(methods)), np.nan)  # the std of w and of w_r
    intervals = np.full((2, k, k, len(methods), 2), np.nan)
    tails = [50.0 * (1 - level), 50.0 * (1 + level)]
    criteria = {criterion: {} for criterion in CRITERIA}
    for m, method in enumerate(methods):
        verdicts = []
        for i in range(k):
            model = results[(method, i)]["model"]
            spread = results[(method, i)]["bootstrap"]
            verdicts.append(_criteria(model, robot, bounds))
            for j, data in enumerate(datasets):
                check_compatible(model, data)
                measured = model.measured_torque(data)
                predicted = model.predict(data.q, data.dq, data.ddq, data.t)
                if reestimate_offsets and i != j:
                    predicted = predicted + np.mean(measured - predicted, axis=0)
                w[i, j, m], w_r[i, j, m] = w_errors(measured[:, picked], predicted[:, picked])
                if spread is not None:
                    for which, values in enumerate(_replicate_errors(
                            spread, data, picked, reestimate_offsets and i != j)):
                        spreads[which, i, j, m] = values.std(ddof=1)
                        intervals[which, i, j, m] = np.percentile(values, tails)
        for c, criterion in enumerate(CRITERIA):
            values = [v[c] for v in verdicts]
            criteria[criterion][method] = None if None in values else all(values)
    boot = bootstrap is not None
    return Comparison(methods=list(methods), names=names, w=w, w_r=w_r, criteria=criteria,
                      seconds={method: sum(results[(method, i)]["seconds"] for i in range(k))
                               for method in methods},
                      models={key: value["model"] for key, value in results.items()},
                      w_std=spreads[0] if boot else None, w_r_std=spreads[1] if boot else None,
                      w_interval=intervals[0] if boot else None,
                      w_r_interval=intervals[1] if boot else None,
                      bootstraps={key: value["bootstrap"] for key, value in results.items()
                                  if value["bootstrap"] is not None},
                      bootstrap_settings={"replicates": bootstrap, "seed": seed,
                                          "level": level} if boot else None,
                      effort="current" if scale is not None else "torque",
                      converged={method: _convergence([results[(method, i)]["model"]
                                                       for i in range(k)])
                                 for method in methods})


def write_table(comparison: Comparison, path, *, suffix: str | None = None) -> None:
    """``.md``, ``.csv`` or ``.json`` after the suffix (of ``suffix``, a name, when given),
    atomically."""
    from pathlib import Path

    suffix = Path(suffix or path).suffix.lower()
    if suffix == ".md":
        text = comparison.to_markdown()
    elif suffix == ".csv":
        text = comparison.to_csv()
    elif suffix == ".json":
        text = json.dumps(comparison.to_json(), indent=2) + "\n"
    else:
        raise ValueError(f"`path` must end in .md, .csv or .json, got {str(path)!r}")
    atomic_write(path, lambda tmp: tmp.write_text(text))
