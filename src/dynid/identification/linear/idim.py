"""Linear identification of base parameters from time series.

- ``identify(robot, data)``: the torque regressor along the data with linear friction columns
  (and rotor inertias), reduced to the base parameters, fitted by an estimator (OLS, WLS); one
  log or several, each with its own torque offsets.
- ``identify_iv(robot, data, reference)``: IDIM-IV, instruments from the closed-loop twin of the
  current estimate.

The reverse engineering from a controller's M(q), g(q) lives in
``dynid.identification.linear.reverse_engineering``.

Before fitting, the data's own base regressor is checked: base parameters that the data do not
excite (a joint that never moves, too few poses) raise a ValueError that names them.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import warnings
from collections.abc import Callable, Sequence

import numpy as np

from dynid.data.dataset import Dataset, sample_count
from dynid.data.preprocess import uniform_step
from dynid.friction.models import FrictionModel, NoFriction
from dynid.identification._fitting import check_rows, fit_base, fit_report
from dynid.identification._logs import (
    Offsets,
    as_logs,
    deviation_names,
    excitation_faults,
    log_offsets,
    per_log,
)
from dynid.identification._stream import CHUNK_SAMPLES, Factors, Moments, fold_logs
from dynid.identification.estimate import refuse_coupling, with_convergence
from dynid.identification.linear.estimators import IV, OLS, WLS
from dynid.identification.structure import (
    DEFAULT_BLOCKS,
    STRUCTURES,
    Structure,
    TooShortError,
    choose_folded,
    expand,
    restricted,
    restricted_layout,
)
from dynid.model.base_parameters import Method, default_friction, robot_base_parameters
from dynid.model.linear_model import LinearModel
from dynid.robot import Robot
from dynid.simulate.controller import Controller
from dynid.simulate.twin import closed_loop_pieces

__all__ = [
    "IVConvergenceWarning",
    "identify",
    "identify_iv",
    "linear_template",
    "robot_model",
]


class IVConvergenceWarning(RuntimeWarning):
    """IDIM-IV stopped at its iteration limit while its estimate was still changing."""


def identify(robot: Robot, data: Dataset | Sequence[Dataset], *,
             friction: FrictionModel | None = None,
             estimator=None,
             method: Method = "rref", rotor_inertia: bool | None = None,
             offsets: Offsets = "per-log",
             progress: Callable[[int], None] | None = None, client=None,
             structure: str | Structure = "fixed") -> LinearModel:
    """Fit base parameters (and linear friction, and rotor inertias) to ``data``: one log, or
    several logs stacked.

    ``friction``: a linear friction model whose columns are identified jointly (default
    ``default_friction(robot)``); ``NoFriction`` for rigid-body only. ``estimator``: ``OLS()``
    (default) or ``WLS(...)``, unfitted; it is fitted here and its figures go to the report;
    with several logs WLS estimates one noise level per log and joint. The robust and
    regularised estimators work here too (``dynid.identification.linear.robust``: IRLS, TLS,
    ML; ``.regularised``: Ridge, ElasticNet): IRLS folds the logs again, weighted, at each of
    its passes (an estimator whose ``refolds`` is true is given ``refold(weights)``); the
    others fit the factors folded once. Their own figures (IRLS's scales and
    rejected rows, the penalty) join the report.
    ``rotor_inertia``: identify each drive's reflected rotor inertia ``Ia_j`` too (default:
    when the robot states rotor inertias). ``offsets``: with several logs, ``"per-log"``
    (default) gives each log its own torque offsets around the friction model's offset term,
    which becomes their mean (``dynid.identification._logs``; the report's ``log_offsets``
    lists them with their std); ``"shared"`` fits one offset for all logs.
    Needs ``ddq`` (differentiate filtered velocities first for real logs) and torque logs
    (motor currents: ``identify_drive_gains``). Logs of any length: they are folded chunk by
    chunk (``dynid.identification._stream``), the regressor never held whole;
    ``progress(samples)`` hears of every chunk. ``client``: a Dask ``distributed.Client``
    whose workers fold the logs' pieces (a fleet's logs, days of 1 kHz data); the result is
    the local one to rounding.
    ``structure``: "fixed" (default: the columns the options name, every joint alike),
    "auto" (``dynid.identification.structure``: what the options leave open — each joint's
    rotor inertia when ``rotor_inertia`` is None, each friction coefficient when ``friction``
    is None, each joint's per-log offsets — is kept only where the held-out error over time
    blocks supports it; the report's ``structure`` says what was chosen and what each term
    gained), or a ``Structure`` chosen before (a bootstrap's refits keep the point fit's). A
    term left out is fixed at zero (std 0) in the model's columns. Logs too short to hold out
    time blocks (``structure.MIN_BLOCK_SAMPLES`` per block) are fitted as "fixed" (the
    report then has no ``structure``). The library's default is
    "fixed": its callers (comparisons, bootstraps, benchmarks, the nonlinear methods' starts)
    ask for columns and get them; ``dynid identify`` chooses by default.
    """
    logs = as_logs(data)
    for k, log in enumerate(logs):
        if log.n_joints != robot.n_joints:
            where = "`data`" if len(logs) == 1 else f"`data[{k}]`"
            raise ValueError(f"{where} has {log.n_joints} joints, `robot` {robot.n_joints}")
    if friction is not None and not friction.linear:
        raise ValueError(f"`friction` must be linear in its parameters, got {friction.name!r}")
    chosen = None  # the cross-validation's template, factors and unknowns, reused here
    if isinstance(structure, str) and structure == "auto":
        structure, chosen = _auto(robot, logs, estimator, friction=friction,
                                  rotor_inertia=rotor_inertia, offsets=offsets, method=method,
                                  progress=progress, client=client)
    elif isinstance(structure, str) and structure != "fixed":
        raise ValueError(f"`structure` must be one of {STRUCTURES} or a Structure, got "
                         f"{structure!r}")
    elif not isinstance(structure, (str, Structure)):
        raise TypeError(f"`structure` must be one of {STRUCTURES} or a Structure, got "
                        f"{type(structure).__name__}")
    if isinstance(structure, Structure):
        friction, rotor_inertia = _follow(structure, friction, rotor_inertia, offsets)
    friction = default_friction(robot) if friction is None else friction
    rotor = bool(robot.rotor_inertia.any()) if rotor_inertia is None else rotor_inertia
    estimator = OLS() if estimator is None else estimator
    template = chosen[0] if chosen and chosen[0].rotor_inertia == rotor else \
        linear_template(robot, friction, method=method, rotor_inertia=rotor)
    base = template.base
    deviations = deviation_names(template, logs, offsets)
    names = [*base.base_names, *deviations]
    n_samples = sum(log.n_samples for log in logs)
    check_rows(n_samples * robot.n_joints, len(names), "the data")
    dropped = [] if isinstance(structure, str) else _positions(structure, names)
    kept_names = [name for k, name in enumerate(names) if k not in set(dropped)]
    factors = _reused(chosen, kept_names) if chosen else None
    if factors is None:
        factors = restricted(fold_logs(template, logs, len(deviations), progress=progress,
                                       client=client), dropped)
    options = {"by_group": len(logs) > 1} if isinstance(estimator, WLS) else {}
    if getattr(estimator, "refolds", False):  # IRLS: the rows again, weighted, every pass
        position = np.full(len(names), -1)
        position[np.setdiff1d(np.arange(len(names)), dropped)] = np.arange(len(kept_names))

        def refold(weights):
            return restricted(fold_logs(
                template, logs, len(deviations), progress=progress,
                weights=lambda key, layout, rows: weights(
                    key, restricted_layout(layout, position) if dropped else layout, rows)),
                dropped)

        options = {"refold": refold}
    faults = excitation_faults(logs, robot.joint_names)
    fit_base(estimator, factors, kept_names, "the data",
             "; ".join(faults) if faults else
             "every joint must move, in both directions for Coulomb friction", **options)
    if dropped:
        expand(estimator, dropped, len(names))
    extra = {} if isinstance(structure, str) else {"structure": structure.to_json()}
    report = fit_report(estimator, kind="torque", n_samples=n_samples,
                        **getattr(estimator, "details_", {}), **extra)
    if len(logs) > 1:
        report.update(_logs_report(template, logs, estimator, offsets, len(deviations)))
    return dataclasses.replace(template, coefficients=estimator.coef_[:base.rank],
                               std=estimator.std_[:base.rank], report=report)


def _auto(robot: Robot, logs: list[Dataset], estimator, *, friction, rotor_inertia, offsets,
          method, progress, client) -> tuple[Structure | str, list | None]:
    """``structure="auto"``: the chosen structure and the cross-validation's template,
    factors and unknowns (for the fit to reuse; None: it folds the rows itself), or "fixed"
    for logs too short to hold out time blocks. A robust estimator (IRLS: ``refolds``) first
    fits the full structure, and the choice is made on the rows as it weighs them: outliers
    would otherwise decide it (a spike's square outweighs a friction term's gain)."""
    weights = None
    if getattr(estimator, "refolds", False):
        first = copy.deepcopy(estimator)
        try:
            identify(robot, logs, friction=friction, estimator=first, method=method,
                     rotor_inertia=True if rotor_inertia is None else rotor_inertia,
                     offsets=offsets, progress=progress)
            weights = first.row_weights()
        except ValueError:  # data that leave the full structure undetermined: the choice
            pass  # unweighted, and the fit names what is missing
    try:
        structure, *chosen = choose_folded(
            robot, logs, friction=friction, rotor_inertia=rotor_inertia, offsets=offsets,
            blocks=DEFAULT_BLOCKS, method=method, progress=progress, client=client,
            weights=weights)
    except TooShortError:  # no blocks to hold out: the options as given
        return "fixed", None
    return structure, None if weights is not None else chosen  # weighted: not the rows


def _follow(structure: Structure, friction: FrictionModel | None, rotor_inertia: bool | None,
            offsets: Offsets) -> tuple[FrictionModel, bool]:
    """The friction columns and rotor switch of a chosen ``structure``, checked against the
    options also given (a bootstrap passes both: they must agree)."""
    if friction is not None and friction.to_dict() != structure.friction.to_dict():
        raise ValueError(f"`friction` ({friction.name!r}) is not the chosen structure's "
                         f"({structure.friction.name!r}): leave it out")
    if rotor_inertia is not None and rotor_inertia != structure.rotor_inertia:
        raise ValueError(f"`rotor_inertia` ({rotor_inertia}) is not the chosen structure's "
                         f"({structure.rotor_inertia}): leave it out")
    if offsets != structure.offsets:
        raise ValueError(f"`offsets` ({offsets!r}) is not the chosen structure's "
                         f"({structure.offsets!r})")
    return structure.friction, structure.rotor_inertia


def _positions(structure: Structure, names: list[str]) -> list[int]:
    """Where the unknowns a structure leaves out sit among ``names``; a ValueError for one
    that is not there (a structure chosen for other logs or another robot)."""
    index = {name: k for k, name in enumerate(names)}
    missing = [name for name in structure.dropped if name not in index]
    if missing:
        raise ValueError(f"`structure` leaves out {', '.join(missing)}, which this fit does "
                         "not have (a structure chosen on other logs or another robot)")
    return sorted(index[name] for name in structure.dropped)


def _reused(chosen: list, kept_names: list[str]) -> Factors | None:
    """The cross-validation's factors without the unknowns this fit does not keep, when what
    is left is exactly this fit's unknowns (a base column is its representative's regressor
    column, whatever regroups into it), else None (fold again)."""
    _, factors, names = chosen
    keep = set(kept_names)
    if [name for name in names if name in keep] != kept_names:
        return None
    return restricted(factors, [k for k, name in enumerate(names) if name not in keep],
                      merge_blocks=True)


def linear_template(robot: Robot, friction: FrictionModel, *, method: Method = "rref",
                    rotor_inertia: bool = False) -> LinearModel:
    """A LinearModel of ``robot`` with ``friction`` columns (and rotor inertias) and zero
    coefficients: the base parameters and the regressor of a fit."""
    base = robot_base_parameters(robot, friction=friction, method=method,
                                 rotor_inertia=rotor_inertia)
    return LinearModel(robot=robot, friction=friction, base=base,
                       coefficients=np.zeros(base.rank), std=np.zeros(base.rank),
                       rotor_inertia=rotor_inertia)


def robot_model(robot: Robot) -> LinearModel:
    """A robot's own link parameters (and rotor inertias) and friction as a model — a CAD
    prior, a retrieved set, the twin's truth — to validate, monitor or generate code from like
    an identified one: its rigid body's base parameters, its friction model as the fitted
    friction (none for ``NoFriction``)."""
    if not isinstance(robot, Robot):
        raise TypeError(f"`robot` must be a dynid Robot, got {type(robot).__name__}")
    rotor = bool(np.any(robot.rotor_inertia > 0))
    template = linear_template(robot, NoFriction(robot.n_joints), rotor_inertia=rotor)
    full = np.concatenate([robot.parameters.ravel(), robot.rotor_inertia if rotor else []])
    return dataclasses.replace(
        template, coefficients=template.base.base(full), report={"method": "robot parameters"},
        fitted_friction=None if robot.friction.name == "none" else robot.friction)


def identify_iv(robot: Robot, data: Dataset | Sequence[Dataset], reference, *,
                natural_frequency=None, controller: Controller | Robot | None = None,
                friction: FrictionModel | None = None, iterations: int = 5,
                tolerance: float = 1e-2, method: Method = "rref",
                rotor_inertia: bool | None = None, offsets: Offsets = "per-log"
                ) -> LinearModel:
    """IDIM-IV (Janot et al. 2014) for logs recorded in closed loop: one log, or several.

    Starting from OLS, the identified model (its equivalent parameters and friction) is
    simulated in closed loop under the controller that ran, tracking the same ``reference``
    trajectory (one for all logs, or a list: one per log); the regressor of that noise-free
    simulation is the instrument matrix, and the estimate is refreshed until it changes by less
    than ``tolerance`` (relative; iterates wander at the noise level, so 1 % by default) or
    after ``iterations`` — then an ``IVConvergenceWarning``; ``report["converged"]`` says which.
    Where the OLS start is no plant (position noise in the regressor: M(q) indefinite), the
    first instruments come from the robot's own model (its link parameters and, when it is the
    fitted kind, its friction; ``report["first_instruments"]`` is "nominal"). An estimate that
    is no plant ends the fit on it (it gives no instruments), a step larger than the one before
    (iterates moving apart) on the estimate before that step; both with an
    ``IVConvergenceWarning``.
    Unlike OLS it stays unbiased when the regressor is built from noisy, filtered
    measurements. Every log must be uniformly sampled (resample first). ``rotor_inertia`` and
    ``offsets`` (each log its own torque offsets) as in ``identify``; the offsets' deviation
    columns are their own instruments.

    ``controller``: the control law that ran, a ``dynid.simulate.Controller`` (computed torque
    or a joint impedance, a pure PD loop included, with its rate and encoders; one for all logs
    or one per log; ``natural_frequency`` stays None), simulated at its own rate and taken at
    the log's samples (each log sampled every whole number of control periods, e.g. decimated
    after filtering); or the shorthand: a computed-torque law on the model ``controller`` (a
    ``Robot``; default the ``robot`` as given) with ``natural_frequency`` w [rad/s] (default
    20), run at the log's own rate.
    """

    refuse_coupling(robot, "iv")
    if not (isinstance(iterations, int) and iterations >= 1):
        raise ValueError(f"`iterations` must be an integer >= 1, got {iterations}")
    logs = as_logs(data)
    references = per_log("reference", reference, len(logs))
    steps = [uniform_step(log) for log in logs]
    for k, (log, step) in enumerate(zip(logs, steps, strict=True)):
        if sample_count(log.duration, 1.0 / step) != log.n_samples:
            raise ValueError(f"log {k + 1}: its {log.n_samples} samples are not a uniform grid "
                             f"over {log.duration:.6g} s at {1.0 / step:.6g} Hz (resample it "
                             "first)")
    laws, strides = _iv_controllers(robot, logs, steps, controller, natural_frequency)
    model = identify(robot, logs[0] if len(logs) == 1 else logs, friction=friction,
                     method=method, rotor_inertia=rotor_inertia, offsets=offsets)
    deviations = deviation_names(model, logs, offsets)
    factors = fold_logs(model, logs, len(deviations))
    n_samples = sum(log.n_samples for log in logs)
    rank = model.base.rank
    coefficients = np.concatenate([model.coefficients, np.zeros(len(deviations))])
    history: list[float] = []
    first_plant = "ols"

    def instruments(plant: Robot) -> Moments:
        # the plant's closed loop on each log's reference, simulated piece by piece as the
        # fold takes its rows: a log of any length, one piece of its twin in memory at a time
        moments = Moments(factors.n_columns)
        if laws is None:  # the shorthand: computed torque at the log's rate
            simulated = [closed_loop_pieces(
                plant, path, duration=log.duration, rate=1.0 / step,
                natural_frequency=20.0 if natural_frequency is None else natural_frequency,
                controller=controller or robot, start=float(log.t[0]),
                piece_samples=CHUNK_SAMPLES)
                for log, path, step in zip(logs, references, steps, strict=True)]
        else:  # the law that ran, at its rate, taken at the log's samples
            simulated = [_every(closed_loop_pieces(
                plant, path, duration=log.duration, controller=law, start=float(log.t[0]),
                piece_samples=CHUNK_SAMPLES * stride), stride)
                for log, path, law, stride in zip(logs, references, laws, strides,
                                                  strict=True)]
        fold_logs(model, logs, len(deviations), factors=Factors(factors.n_columns),
                  instruments=simulated, moments=moments)
        return moments

    for iteration in range(1, iterations + 1):
        try:
            moments = instruments(model.plant)
        except ValueError as error:
            if iteration > 1:  # an iterate that is no plant: the last instruments' fit
                why = (f"IV iteration {iteration}: the estimate cannot be simulated in closed "
                       f"loop ({error}); kept the fit on the last simulated instruments (not "
                       "converged: the log may be too noisy for IV's iterates to be plants)")
                warnings.warn(why, IVConvergenceWarning, stacklevel=2)
                return with_convergence(model, False, f"diverged: {why}")
            # OLS on noisy regressors may be no plant (M(q) indefinite): the first instruments
            # from the robot's own (nominal, CAD) link parameters with OLS's friction instead,
            # as IDIM-IV may start from a priori values (Janot, Vandanjon & Gautier 2014)
            own = robot.friction
            nominal = robot if (type(own) is type(model.friction) and own.coefficients.size
                                == model.friction.coefficients.size) else \
                robot.with_friction(model.friction.with_coefficients(model.friction_parameters))
            try:
                moments = instruments(nominal)
            except ValueError as second:
                why = (f"both: {error}" if str(second) == str(error) else
                       f"the OLS estimate: {error}; the nominal parameters: {second}")
                raise ValueError(
                    f"IV: neither the OLS estimate nor the robot's nominal parameters can be "
                    f"simulated in closed loop ({why}): check the controller and the robot's "
                    "parameters, or use OLS/WLS") from None
            first_plant = "nominal"
        estimator = IV().fit_moments(moments, factors)
        change = float(np.linalg.norm(estimator.coef_[:rank] - coefficients[:rank])
                       / np.linalg.norm(coefficients[:rank]))
        converged = change < tolerance
        if not converged and history and change > history[-1]:
            # the iterates move apart (the instruments of a noisier estimate are weaker):
            # the last estimate, with the step that went away named
            why = (f"IV iteration {iteration}: the estimate moved by {change:.2g}, more than "
                   f"the {history[-1]:.2g} before: the iterates diverge; kept iteration "
                   f"{iteration - 1}'s estimate (not converged)")
            warnings.warn(why, IVConvergenceWarning, stacklevel=2)
            return with_convergence(model, False, f"diverged: {why}")
        coefficients = estimator.coef_
        history.append(change)
        report = fit_report(estimator, kind="torque", n_samples=n_samples,
                            iterations=iteration, changes=history, converged=converged,
                            first_instruments=first_plant)
        if len(logs) > 1:
            report.update(_logs_report(model, logs, estimator, offsets, len(deviations)))
        model = dataclasses.replace(model, coefficients=estimator.coef_[:rank],
                                    std=estimator.std_[:rank], report=report)
        if converged:
            return with_convergence(model, True, f"converged: the estimate changed by "
                                                 f"{change:.2g} < tolerance {tolerance:g}")
    why = (f"IV did not converge in {iterations} iterations (last relative changes "
           f"{', '.join(f'{c:.2g}' for c in history[-3:])}): the estimate still moves")
    warnings.warn(why, IVConvergenceWarning, stacklevel=2)
    return with_convergence(model, False, f"stopped: {why}")


def _iv_controllers(robot: Robot, logs: Sequence[Dataset], steps: Sequence[float], controller,
                    natural_frequency) -> tuple[list[Controller] | None, list[int] | None]:
    """IV's control laws, one per log, and each log's step in control periods; ``(None,
    None)`` for the computed-torque shorthand (``controller`` a Robot or None)."""
    listed = controller if isinstance(controller, (list, tuple)) else [controller]
    if not any(isinstance(law, Controller) for law in listed):
        if controller is not None and not isinstance(controller, Robot):
            raise TypeError(f"`controller` must be a dynid.simulate.Controller (or one per "
                            f"log), a Robot (the model of a computed-torque law) or None, got "
                            f"{type(controller).__name__}")
        return None, None
    if natural_frequency is not None:
        raise ValueError("`natural_frequency` belongs to the computed-torque shorthand; a "
                         "Controller states its own gains: leave it out")
    laws = per_log("controller", controller, len(logs))
    strides = []
    for k, (law, step) in enumerate(zip(laws, steps, strict=True)):
        where = "" if len(logs) == 1 else f"[{k}]"
        if not isinstance(law, Controller):
            raise TypeError(f"`controller{where}` must be a dynid.simulate.Controller, got "
                            f"{type(law).__name__}")
        law.model_for(robot)  # its model has the robot's joints
        periods = step * law.rate
        if round(periods) < 1 or not math.isclose(periods, round(periods), rel_tol=1e-6):
            raise ValueError(f"`data{where}` is sampled every {step:.6g} s, not a whole number "
                             f"of the controller's periods (1 / {law.rate:g} Hz): resample it "
                             "to a divisor of the control rate")
        strides.append(round(periods))
    return laws, strides


def _every(pieces, stride: int):
    """The pieces of a run at the control rate, every ``stride``-th sample of the whole."""
    done = 0
    for piece in pieces:
        rows = np.arange((-done) % stride, piece.n_samples, stride)
        done += piece.n_samples
        if rows.size:
            yield piece if stride == 1 else piece.select(rows)


def _logs_report(model: LinearModel, logs: Sequence[Dataset], estimator, offsets: Offsets,
                 n_deviations: int) -> dict:
    """The report's entries for a fit on several logs: the logs, and each one's offsets."""
    out = {"logs": [{"source": str(log.metadata.get("source", f"log {k + 1}")),
                     "n_samples": log.n_samples} for k, log in enumerate(logs)],
           "offsets": offsets}
    per_log = log_offsets(model, logs, estimator.coef_, estimator.covariance_, n_deviations)
    if per_log is not None:
        out["log_offsets"] = per_log
    return out
