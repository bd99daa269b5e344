"""Uncertainty that survives constraints: a residual moving-block bootstrap for every
identification method (OLS, WLS, IDIM-IV, CLS-1/2/3, log-Cholesky, NLS).

The formula ``sigma^2 (W^T W)^-1`` assumes white torque noise and an unconstrained linear
estimate. Neither holds on a real arm: a torque sensor's noise is coloured (filters, drive
ripple, unmodelled slow effects), which makes that formula several times too optimistic, and a
bound or an LMI that is active changes the estimate's distribution. The bootstrap measures the
spread by refitting instead.

The scheme (fixed design, the trajectory kept):

1. fit the method once: the point estimate, its predicted torques ``tau^`` on every log (with
   each log's own offsets) and the residuals ``e = tau - tau^``, centred per log and joint and
   scaled by ``sqrt(m / (m - r))`` (m equations, r base parameters: residuals are smaller than
   the noise they estimate);
2. each replicate draws, for each log, blocks of ``L`` consecutive residual samples (all joints
   of a sample together: their cross-correlation stays) at uniformly random starts and lays
   them end to end over the log's length (the moving-block bootstrap of Künsch 1989), giving
   ``tau* = tau^ + e*``, and refits the same method, with the same options, on the same
   ``q, dq, ddq``;
3. the replicates' coefficients give standard deviations and percentile intervals, and so do
   the torques they predict on any dataset.

Residuals, not time blocks of the log, are resampled: an excitation trajectory is designed as a
whole (its conditioning, both directions of every joint), and resampled time blocks of it
would excite some parameters poorly or not at all. Keeping the regressor also keeps a stateful
friction's time series and costs a linear fit nothing but the new targets: for OLS the
replicates are solved together from the point fit's triangular factor (the same numbers as a
refit, to rounding). What it assumes: the noise is stationary over a log and enters the
torques, not the regressor (the noise of measured positions that IDIM-IV guards against, and
the closed-loop feedback of torque noise into the motion, are not resampled).

``L`` (``block_length="auto"``): the Politis & White (2004) rule for the moving-block
bootstrap, with the correction of Patton, Politis & White (2009), on each joint's residual
series of each log, the largest over them: L grows with the residuals' correlation time, and
white residuals give L = 1 (the ordinary residual bootstrap).

Motor-current logs (``effort="current"``) are resampled in current units: the point fit (a
method that identifies drive gains, ``dynid.identification._currents.fit_currents``: ``ols`` is
Gautier & Briot's) predicts each log's currents ``i^ = (tau^ + o_l) / K`` (the payload log's
with the known payload's torque), the residuals ``i - i^`` of every log, the payload log
included, are centred, scaled and resampled in blocks as above, and each replicate refits the
same method with the same payload and known gains on ``i^ + e*``. The replicates' drive gains
``(B, n)`` give the gains' spread (``Bootstrap.gain_std``, ``gain_interval``) beside the
coefficients'.

Replicates are reproducible: replicate b draws from ``SeedSequence(seed, spawn_key=(b,))``,
whatever runs it and in which order; they run in batches through any
``concurrent.futures.Executor`` (local processes, a Dask client's ``get_executor()``), and only
their coefficients ``(B, r)`` are kept (NLS: and the fitted friction's values).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.linalg
from numpy.typing import NDArray

from dynid._parallel import run_parallel
from dynid._progress import Progress
from dynid._validation import frozen_copy
from dynid.data.dataset import Dataset
from dynid.identification._currents import (
    current_scale,
    fit_currents,
    payload_torque,
)
from dynid.identification._logs import as_logs, deviation_names
from dynid.identification._stream import CHUNK_SAMPLES, _with_deviations, fold_logs
from dynid.identification.constrained.cls import CONSTRAINED_METHODS, identify_constrained
from dynid.identification.drive_gains import KnownPayload
from dynid.identification.linear.estimators import OLS, WLS
from dynid.identification.linear.idim import identify, identify_iv
from dynid.identification.nonlinear.nls import identify_nls
from dynid.model.linear_model import LinearModel
from dynid.robot import Robot

__all__ = ["BOOTSTRAP_METHODS", "MAX_REPLICATES", "Bootstrap", "BootstrapWarning",
           "bootstrap"]

BOOTSTRAP_METHODS = ("ols", "wls", "iv", *CONSTRAINED_METHODS, "nls")
# more replicates than this is a typo (memory (B, r), and hours of refits), not a need
MAX_REPLICATES = 100_000
SCHEME = "residual moving-block bootstrap (fixed design)"
# tasks for an executor, at most: enough to spread over workers and to show progress, and a
# bound on the copies of the logs in flight (each task carries them), whatever B
_TASKS = 32
_BATCH_HERE = 256  # replicates per batch of joint OLS solves run here (one regressor pass)
_VALUES = 1 << 22  # doubles of one chunk of replicate torques (B x samples x n): 32 MB


class BootstrapWarning(RuntimeWarning):
    """Some replicates' solvers did not report success (their estimates are kept)."""


@dataclass(frozen=True, eq=False)
class Bootstrap:
    """``B`` replicates of a fit (see the module).

    ``model``: the point estimate; ``coefficients`` ``(B, r)``: each replicate's base
    coefficients, in the order of ``model.base.base_names``; ``friction`` ``(B, n, k)``: each
    replicate's fitted friction values (``model.fitted_friction``'s ``per_joint`` table; NLS),
    else None; ``block_length`` [samples] and ``block_rule`` (how it was chosen); ``seed``: the
    seed that reproduces the replicates; ``unsuccessful``: replicates whose solver did not
    report success; ``drive_gains`` ``(B, n)``: each replicate's drive gains [N m/A] (a fit of
    motor-current logs), else None.
    """

    method: str
    model: LinearModel
    coefficients: NDArray
    block_length: int
    block_rule: str
    seed: int
    friction: NDArray | None = None
    unsuccessful: int = 0
    scheme: str = SCHEME
    drive_gains: NDArray | None = None

    def __post_init__(self) -> None:
        coefficients = frozen_copy(self.coefficients)
        if coefficients.ndim != 2 or coefficients.shape[1] != self.model.base.rank:
            raise ValueError(f"`coefficients` must be (B, {self.model.base.rank}), got "
                             f"{coefficients.shape}")
        object.__setattr__(self, "coefficients", coefficients)
        if self.friction is not None:
            object.__setattr__(self, "friction", frozen_copy(self.friction))
        if self.drive_gains is not None:
            gains = frozen_copy(self.drive_gains)
            n = self.model.robot.n_joints
            if gains.shape != (coefficients.shape[0], n):
                raise ValueError(f"`drive_gains` must be (B, {n}) (one row per replicate), got "
                                 f"{gains.shape}")
            object.__setattr__(self, "drive_gains", gains)

    @property
    def replicates(self) -> int:
        return self.coefficients.shape[0]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.model.base.base_names)

    @property
    def estimate(self) -> NDArray:
        """``(r,)``: the point estimate's coefficients."""
        return self.model.coefficients

    @property
    def std(self) -> NDArray:
        """``(r,)``: the replicates' standard deviation of each coefficient."""
        return self.coefficients.std(axis=0, ddof=1)

    def interval(self, level: float = 0.95) -> tuple[NDArray, NDArray]:
        """Percentile bounds ``(lower, upper)``, each ``(r,)``, holding ``level`` of the
        replicates (0.95: the 2.5 % and 97.5 % percentiles)."""
        low, high = _tails(level)
        return (np.percentile(self.coefficients, low, axis=0),
                np.percentile(self.coefficients, high, axis=0))

    @property
    def gain_std(self) -> NDArray | None:
        """``(n,)``: the replicates' standard deviation of each drive gain [N m/A] (None
        without drive gains)."""
        return None if self.drive_gains is None else self.drive_gains.std(axis=0, ddof=1)

    def gain_interval(self, level: float = 0.95) -> tuple[NDArray, NDArray] | None:
        """Percentile bounds ``(lower, upper)``, each ``(n,)``, of the drive gains at
        ``level`` (None without drive gains)."""
        low, high = _tails(level)
        if self.drive_gains is None:
            return None
        return (np.percentile(self.drive_gains, low, axis=0),
                np.percentile(self.drive_gains, high, axis=0))

    def predictions(self, data: Dataset) -> Iterator[tuple[slice, NDArray]]:
        """Each replicate's predicted torques on ``data``, chunk by chunk: ``(rows, (B, c,
        n))`` for the samples ``rows`` (the whole log at once for a stateful fitted
        friction, LuGre, whose state runs along it)."""
        model = self.model
        if data.n_joints != model.robot.n_joints:
            raise ValueError(f"`data` has {data.n_joints} joints, the model "
                             f"{model.robot.n_joints}")
        if data.ddq is None:
            raise ValueError("`data` has no accelerations (ddq): differentiate the "
                             "velocities first")
        n, count = model.robot.n_joints, self.replicates
        extra = model.fitted_friction
        stateful = extra is not None and extra.stateful
        if stateful and count * data.n_samples * n > 16 * _VALUES:
            raise ValueError(f"`data`: {data.n_samples} samples x {count} replicates of a "
                             "stateful friction's torques do not fit in memory; give a "
                             "shorter log or fewer replicates")
        step = data.n_samples if stateful else max(1, min(CHUNK_SAMPLES,
                                                          _VALUES // (count * n)))
        for start in range(0, data.n_samples, step):
            rows = slice(start, min(start + step, data.n_samples))
            q, dq, ddq = (np.asarray(getattr(data, name)[rows]) for name in ("q", "dq", "ddq"))
            out = np.einsum("cnr,br->bcn", model.base_regressor(q, dq, ddq),
                            self.coefficients)
            if extra is not None:
                t = np.asarray(data.t[rows])
                if self.friction is None:
                    out += extra.torque_along(t, dq) if stateful else extra.torque(dq)
                else:
                    for b in range(count):
                        own = extra.from_per_joint(self.friction[b])
                        out[b] += own.torque_along(t, dq) if stateful else own.torque(dq)
            yield rows, out

    def torque_std(self, data: Dataset) -> NDArray:
        """``(N, n)``: the replicates' standard deviation of the predicted torque at each
        sample of ``data``."""
        out = np.empty((data.n_samples, data.n_joints))
        for rows, values in self.predictions(data):
            out[rows] = values.std(axis=0, ddof=1)
        return out

    def torque_interval(self, data: Dataset, level: float = 0.95) -> tuple[NDArray, NDArray]:
        """Percentile bounds ``(lower, upper)``, each ``(N, n)``, of the predicted torque at
        each sample of ``data`` (the model's uncertainty, not the noise of a new
        measurement)."""
        low, high = _tails(level)
        lower = np.empty((data.n_samples, data.n_joints))
        upper = np.empty_like(lower)
        for rows, values in self.predictions(data):
            lower[rows], upper[rows] = np.percentile(values, [low, high], axis=0)
        return lower, upper

    def to_report(self, level: float = 0.95) -> dict:
        """The model report's ``bootstrap`` entry: how the replicates were drawn, and each
        coefficient's bootstrap std and percentile interval at ``level``."""
        lower, upper = self.interval(level)
        out = {"scheme": self.scheme, "method": self.method, "replicates": self.replicates,
               "block_length": self.block_length, "block_rule": self.block_rule,
               "seed": self.seed, "level": float(level), "unsuccessful": self.unsuccessful,
               "std": self.std.tolist(), "lower": lower.tolist(), "upper": upper.tolist()}
        if self.drive_gains is not None:
            low, high = self.gain_interval(level)
            out["drive_gains"] = {"std": self.gain_std.tolist(), "lower": low.tolist(),
                                  "upper": high.tolist()}
        return out

    def annotate(self, model: LinearModel | None = None, level: float = 0.95) -> LinearModel:
        """``model`` (default the point estimate) with ``to_report(level)`` as its report's
        ``bootstrap`` entry: saved and loaded with the model (``bootstrap_table`` reads it)."""
        model = self.model if model is None else model
        if tuple(model.base.base_names) != self.names:
            raise ValueError("`model` has other base parameters than the bootstrapped fit")
        return dataclasses.replace(model, report={**model.report,
                                                  "bootstrap": self.to_report(level)})


def bootstrap(robot: Robot, data: Dataset | Sequence[Dataset], *,
              method: str | Callable = "ols", replicates: int = 200,
              block_length: int | Literal["auto"] = "auto", seed: int | None = None,
              model: LinearModel | None = None,
              payload_data: Dataset | None = None, payload: KnownPayload | None = None,
              gains: dict | None = None,
              executor: Executor | Literal["processes"] | None = None,
              progress: Callable[[str], None] | None = None, **options) -> Bootstrap:
    """``replicates`` refits of ``method`` on ``data`` (one log or several) with resampled
    residual blocks (see the module).

    ``method``: one of ``BOOTSTRAP_METHODS``, run by ``identify`` (ols, wls: ``options`` may
    hold an unfitted ``estimator``), ``identify_iv`` (``options`` hold its ``reference``),
    ``identify_constrained`` or ``identify_nls``; or a function ``method(robot, data,
    **options)`` returning a LinearModel or a result with ``.model`` (module-level, to be sent
    to worker processes). ``options`` go to every fit; a constrained ``weight="auto"`` is
    chosen on the data once, and the replicates use that weight. ``model``: the point
    estimate when already fitted (with the same method and options), else it is fitted here.
    ``block_length``: samples per block, or ``"auto"`` (Politis-White on the residuals).
    ``seed``: an integer >= 0 (default: fresh entropy, recorded in the result).
    ``executor``: None runs the replicates here, one after another; ``"processes"`` on local
    worker processes (one per usable CPU); or any ``concurrent.futures.Executor``. The results
    are the same either way. ``progress(line)`` hears how many replicates are done.

    Motor-current logs (see the module): ``method`` one of ``CURRENT_METHODS`` (``ols``:
    Gautier & Briot, ``identify_drive_gains``; cls1..3, log-cholesky: ``identify_constrained``;
    nls: ``identify_nls``) or a function taking ``payload_data``, ``payload`` and ``gains``
    too; ``payload_data`` (a current log with the known ``payload`` on the last link) and/or
    ``gains`` (known gains) fix the scale as for ``identify_drive_gains``, and go to every
    refit; the payload log's residuals are resampled with the others'. The result holds the
    replicates' drive gains.
    """
    name = _method_name(method)
    count = _replicate_count(replicates)
    seed = _seed(seed)
    if executor is not None and executor != "processes" and not isinstance(executor, Executor):
        raise TypeError(f"`executor` must be None, 'processes' or a concurrent.futures."
                        f"Executor, got {type(executor).__name__}")
    for reserved in ("client", "progress"):
        if reserved in options:
            raise ValueError(f"`{reserved}` is not passed to the fits: give "
                             + ("`executor=client.get_executor()`" if reserved == "client"
                                else "`progress` to bootstrap itself"))
    logs = as_logs(data, effort=None)
    scale = current_scale(robot, logs, [method], payload_data, payload, gains)
    every = logs if scale is None or payload_data is None else [*logs, payload_data]
    for k, log in enumerate(every):
        if log.n_joints != robot.n_joints:
            where = ("`payload_data`" if k == len(logs) else "`data`" if len(logs) == 1
                     else f"`data[{k}]`")
            raise ValueError(f"{where} has {log.n_joints} joints, `robot` {robot.n_joints}")
    shortest = min(log.n_samples for log in every)
    given = _given_block_length(block_length, shortest)
    if model is None:
        model, _, _ = _fit(method, robot, _one_or_all(logs), options, scale)
    elif not isinstance(model, LinearModel):
        raise TypeError(f"`model` must be a LinearModel (the point estimate), got "
                        f"{type(model).__name__}")
    elif model.robot.n_joints != robot.n_joints:
        raise ValueError(f"`model` has {model.robot.n_joints} joints, `robot` "
                         f"{robot.n_joints}")
    if scale is not None and model.drive_gains is None:
        raise ValueError("`model`: the point estimate of motor-current logs must carry drive "
                         "gains (a fit from currents)")
    if options.get("weight") == "auto" and "prior_weight" in model.report:
        options = {**options, "weight": float(model.report["prior_weight"])}
    if scale is None:
        predicted, residuals = _residuals(model, logs)
    else:
        predicted, residuals = _current_residuals(model, robot, logs, payload_data, payload)
    if given is None:
        length = min(max(_politis_white(e) for e in residuals), shortest)
        rule = "auto: Politis-White (2004, 2009) on the residuals, the largest over joints"
    else:
        length, rule = given, "given"
    fast = scale is None and _fast_ols(name, options, model)
    shared = {"method": method, "robot": robot, "logs": every, "options": options,
              "scale": scale, "n_logs": len(logs),
              "predicted": predicted, "residuals": residuals, "length": length, "seed": seed,
              "rank": model.base.rank, "names": tuple(model.base.base_names),
              "friction": model.fitted_friction is not None}
    if fast:
        deviations = len(deviation_names(model, logs, model.report.get("offsets",
                                                                         "per-log")))
        factor = fold_logs(model, logs, deviations).stacked()[:-1, :-1]
        shared.update(model=model, deviations=deviations, factor=factor)
    if executor is None:  # here: the joint OLS solves in big batches, refits one by one
        size = _BATCH_HERE if fast else 1
    else:
        size = math.ceil(count / _TASKS)
    tasks = [{**shared, "first": first, "stop": min(first + size, count)}
             for first in range(0, count, size)]
    coefficients = np.empty((count, model.base.rank))
    friction_shape = (count, *model.fitted_friction.per_joint().shape) \
        if model.fitted_friction is not None else None
    friction = np.empty(friction_shape) if friction_shape else None
    drive = np.empty((count, robot.n_joints)) if scale is not None else None
    state = {"done": 0, "unsuccessful": 0}
    meter = Progress(progress, f"bootstrap ({name}, block length {length})", count)

    def arrived(result: dict) -> None:
        rows = slice(result["first"], result["stop"])
        coefficients[rows] = result["coefficients"]
        if friction is not None:
            friction[rows] = result["friction"]
        if drive is not None:
            drive[rows] = result["drive_gains"]
        state["done"] += rows.stop - rows.start
        state["unsuccessful"] += result["unsuccessful"]
        meter.update(state["done"])

    function = _ols_replicates if fast else _replicates
    if executor is None:
        for task in tasks:
            arrived(function(task))
    else:
        run_parallel(function, tasks, executor=None if executor == "processes" else executor,
                     on_result=arrived)
    if state["unsuccessful"]:
        warnings.warn(f"{state['unsuccessful']} of {count} bootstrap replicates' solvers did "
                      "not report success (their estimates are kept): the spread may be "
                      "overstated", BootstrapWarning, stacklevel=2)
    return Bootstrap(method=name, model=model, coefficients=coefficients,
                     block_length=int(length), block_rule=rule, seed=seed, friction=friction,
                     unsuccessful=state["unsuccessful"], drive_gains=drive)


def _current_residuals(model: LinearModel, robot: Robot, logs: Sequence[Dataset],
                       payload_data: Dataset | None, payload: KnownPayload | None
                       ) -> tuple[list[NDArray], list[NDArray]]:
    """Each current log's predicted currents ``(tau^ + o_l) / K`` (the payload log, last,
    with the payload's torque) and its residuals in A, centred per joint and scaled to the
    noise's size (base parameters and gains fitted)."""
    every = [*logs] + ([payload_data] if payload_data is not None else [])
    gains = np.asarray(model.drive_gains, dtype=float)
    predicted, residuals = [], []
    for k, (log, shift) in enumerate(zip(every, _log_shifts(model, len(every)), strict=True)):
        torque = model.predict(log.q, log.dq, log.ddq, log.t) + shift
        if k == len(logs):  # the payload log
            torque = torque + payload_torque(model, robot, log, payload,
                                             np.asarray(log.tau) * gains - shift)
        predicted.append(torque / gains)
        residuals.append(np.asarray(log.tau) - torque / gains)
    rows = sum(e.size for e in residuals)
    scale = math.sqrt(rows / max(rows - model.base.rank - gains.size, 1))
    return predicted, [scale * (e - e.mean(axis=0)) for e in residuals]


def _one_or_all(logs: list[Dataset]) -> Dataset | list[Dataset]:
    return logs[0] if len(logs) == 1 else logs


def _method_name(method) -> str:
    if callable(method) and not isinstance(method, str):
        return getattr(method, "__name__", type(method).__name__)
    if method not in BOOTSTRAP_METHODS:
        raise ValueError(f"`method` must be one of {BOOTSTRAP_METHODS} or a function "
                         f"(robot, data, **options), got {method!r}")
    return method


def _replicate_count(replicates) -> int:
    if isinstance(replicates, bool) or not isinstance(replicates, (int, np.integer)):
        raise ValueError(f"`replicates` must be an integer in [2, {MAX_REPLICATES}], got "
                         f"{replicates!r:.40}")
    if not 2 <= replicates <= MAX_REPLICATES:
        raise ValueError(f"`replicates` must be in [2, {MAX_REPLICATES}] (a spread needs two "
                         f"replicates; 200 give stds, 1000 stable 95 % bounds), got "
                         f"{replicates}")
    return int(replicates)


def _seed(seed) -> int:
    if seed is None:  # fresh, and small enough to be typed back (`dynid identify --seed`)
        return int(np.random.SeedSequence().entropy % 2**32)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"`seed` must be an integer >= 0 or None, got {seed!r:.40}")
    return int(seed)


def _given_block_length(block_length, shortest: int) -> int | None:
    """None for "auto", else the checked length."""
    if isinstance(block_length, str) and block_length == "auto":
        return None
    if isinstance(block_length, bool) or not isinstance(block_length, (int, np.integer)):
        raise ValueError(f"`block_length` must be 'auto' or an integer number of samples, "
                         f"got {block_length!r:.40}")
    if not 1 <= block_length <= shortest:
        raise ValueError(f"`block_length` must be in [1, {shortest}] (the shortest log's "
                         f"samples), got {block_length}")
    return int(block_length)


def _tails(level: float) -> tuple[float, float]:
    """The percentiles of a two-sided interval at ``level``."""
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
        raise ValueError(f"`level` must be a fraction in (0, 1), e.g. 0.95, got {level!r:.40}")
    return 50.0 * (1 - level), 50.0 * (1 + level)


def _fit(method, robot: Robot, data, options: dict, scale: dict | None = None
         ) -> tuple[LinearModel, bool, NDArray | None]:
    """One fit of ``method``: the model, whether the solver reported success, and the fitted
    friction's ``per_joint`` table (None without one). ``scale``: the payload log, payload and
    known gains of motor-current logs (``fit_currents``), None for torque logs."""
    if callable(method) and not isinstance(method, str):
        result = method(robot, data, **(scale or {}), **options)
    elif scale is not None:
        result = fit_currents(method, robot, data, **scale, **options)
    elif method in ("ols", "wls"):
        estimator = options.get("estimator")
        estimator = (OLS if method == "ols" else WLS)() if estimator is None \
            else copy.deepcopy(estimator)
        result = identify(robot, data, **{**options, "estimator": estimator})
    elif method == "iv":
        result = identify_iv(robot, data, **options)
    elif method == "nls":
        result = identify_nls(robot, data, **options)
    else:
        result = identify_constrained(robot, data, method=method, **options)
    model = result if isinstance(result, LinearModel) else getattr(result, "model", None)
    if not isinstance(model, LinearModel):
        raise TypeError(f"`method` must return a LinearModel or a result with `.model`, got "
                        f"{type(result).__name__}")
    success = bool(getattr(result, "success", model.report.get("converged", True)))
    extra = model.fitted_friction
    return model, success, None if extra is None else extra.per_joint()


def _fast_ols(name: str, options: dict, model: LinearModel) -> bool:
    """Whether the replicates are plain OLS fits of the model's own columns: solved together
    from the point fit's factor (a coefficient-dropping or weighted fit is refitted)."""
    estimator = options.get("estimator")
    plain = estimator is None or (type(estimator) is OLS
                                  and estimator.drop_above_percent is None)
    return (name == "ols" and plain and model.fitted_friction is None
            and model.report.get("method") == "ols" and not model.report.get("dropped")
            and not model.report.get("structure", {}).get("dropped"))  # all columns fitted


def _log_shifts(model: LinearModel, n_logs: int) -> list[NDArray]:
    """Each log's torque offsets minus the model's own (their mean), from the report of a fit
    over several logs; zeros otherwise."""
    per_log = model.report.get("log_offsets")
    n = model.robot.n_joints
    if not per_log or len(per_log) != n_logs:
        return [np.zeros(n)] * n_logs
    offsets = np.array([entry["offsets"] for entry in per_log], dtype=float)
    return list(offsets - offsets.mean(axis=0))


def _residuals(model: LinearModel, logs: Sequence[Dataset]
               ) -> tuple[list[NDArray], list[NDArray]]:
    """Each log's predicted torques (with its own offsets) and its residuals, centred per
    joint and scaled to the noise's size (see the module)."""
    predicted, residuals = [], []
    for log, shift in zip(logs, _log_shifts(model, len(logs)), strict=True):
        torque = model.predict(log.q, log.dq, log.ddq, log.t) + shift
        predicted.append(torque)
        residuals.append(np.asarray(log.tau) - torque)
    rows = sum(e.size for e in residuals)
    scale = math.sqrt(rows / max(rows - model.base.rank, 1))
    return predicted, [scale * (e - e.mean(axis=0)) for e in residuals]


def _politis_white(residuals: NDArray) -> int:
    """The moving-block bootstrap's block length for the residuals ``(N, n)``: the largest of
    the joints' Politis-White lengths (Politis & White 2004; Patton, Politis & White 2009),
    at least 1."""
    count = residuals.shape[0]
    if count < 4:
        return 1
    k_n = max(5, math.ceil(math.sqrt(math.log10(count))))
    m_max = min(math.ceil(math.sqrt(count)) + k_n, count - 1)
    b_max = max(1, math.ceil(min(3 * math.sqrt(count), count / 3)))
    threshold = 2.0 * math.sqrt(math.log10(count) / count)
    size = 1 << (2 * count - 1).bit_length()
    spectra = np.fft.rfft(residuals - residuals.mean(axis=0), n=size, axis=0)
    covariances = np.fft.irfft(np.abs(spectra) ** 2, n=size, axis=0)[:m_max + 1] / count
    best = 1.0
    for j in range(residuals.shape[1]):
        covariance = covariances[:, j]
        if covariance[0] <= 0:
            continue
        rho = np.abs(covariance / covariance[0])
        m_hat = m_max  # the first lag after which k_n lags in a row are insignificant
        for m in range(0, m_max - k_n + 1):
            if (rho[m + 1:m + 1 + k_n] < threshold).all():
                m_hat = m
                break
        big_m = min(2 * m_hat, m_max)
        lags = np.arange(-big_m, big_m + 1)
        ratio = np.abs(lags) / big_m if big_m else np.zeros(1)
        window = np.where(ratio <= 0.5, 1.0, np.where(ratio <= 1.0, 2.0 * (1.0 - ratio), 0.0))
        values = covariance[np.abs(lags)]
        g = float(np.sum(window * np.abs(lags) * values))
        spectrum = float(np.sum(window * values))
        if spectrum <= 0:
            continue
        d_mbb = 4.0 / 3.0 * spectrum**2
        best = max(best, min((2.0 * g**2 / d_mbb) ** (1 / 3) * count ** (1 / 3), b_max))
    return max(1, math.ceil(best))


def _resampled(residuals: NDArray, length: int, rng: np.random.Generator) -> NDArray:
    """Blocks of ``length`` consecutive rows at random starts, end to end, cut to N rows."""
    count = residuals.shape[0]
    starts = rng.integers(0, count - length + 1, size=-(-count // length))
    return residuals[(starts[:, None] + np.arange(length)).ravel()[:count]]


def _generator(seed: int, replicate: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(replicate,)))


def _replicates(task: dict) -> dict:
    """Replicates ``first..stop`` of a bootstrap, each refitted (see the module)."""
    count = task["stop"] - task["first"]
    coefficients = np.empty((count, task["rank"]))
    drive = np.empty((count, task["robot"].n_joints)) if task["scale"] is not None else None
    friction, unsuccessful = [], 0
    for i, b in enumerate(range(task["first"], task["stop"])):
        rng = _generator(task["seed"], b)
        logs = [dataclasses.replace(log, tau=torque + _resampled(e, task["length"], rng))
                for log, torque, e in zip(task["logs"], task["predicted"], task["residuals"],
                                          strict=True)]
        scale = task["scale"]
        if scale is not None and scale["payload_data"] is not None:  # the payload log, last
            scale = {**scale, "payload_data": logs[task["n_logs"]]}
        with warnings.catch_warnings():  # one summary for all replicates, not one each
            warnings.simplefilter("ignore")
            model, success, table = _fit(task["method"], task["robot"],
                                         _one_or_all(logs[:task["n_logs"]]), task["options"],
                                         scale)
        if tuple(model.base.base_names) != task["names"] or \
                (table is not None) != task["friction"]:
            raise ValueError(f"bootstrap replicate {b}: the refit has other base parameters "
                             "or friction than the point estimate")
        coefficients[i] = model.coefficients
        if drive is not None:
            if model.drive_gains is None:
                raise ValueError(f"bootstrap replicate {b}: the refit of the current logs "
                                 "gave no drive gains")
            drive[i] = model.drive_gains
        friction.append(table)
        unsuccessful += not success
    return {"first": task["first"], "stop": task["stop"], "coefficients": coefficients,
            "friction": np.array(friction) if task["friction"] else None,
            "unsuccessful": unsuccessful, "drive_gains": drive}


def _ols_replicates(task: dict) -> dict:
    """Replicates ``first..stop`` of an OLS bootstrap, solved together: ``x_b = R^-1 R^-T
    W^T tau*_b`` with the point fit's factor ``R`` of W (base and offset columns), the
    products ``W^T tau*_b`` accumulated chunk by chunk over the logs (one regressor pass for
    the batch; each replicate's own products, so that batching does not change a digit)."""
    model, factor = task["model"], task["factor"]
    first, stop, length = task["first"], task["stop"], task["length"]
    n = model.robot.n_joints
    products = np.zeros((stop - first, factor.shape[0]))
    draws = []  # the block starts of _resampled: each replicate's stream, log after log
    for b in range(first, stop):
        rng = _generator(task["seed"], b)
        draws.append([rng.integers(0, log.n_samples - length + 1,
                                   size=-(-log.n_samples // length)) for log in task["logs"]])
    for k, (log, torque, e) in enumerate(zip(task["logs"], task["predicted"],
                                             task["residuals"], strict=True)):
        samples = log.n_samples
        starts = [own[k] for own in draws]
        for begin in range(0, samples, CHUNK_SAMPLES):
            rows = np.arange(begin, min(begin + CHUNK_SAMPLES, samples))
            q, dq, ddq = (np.asarray(getattr(log, name)[begin:rows[-1] + 1])
                          for name in ("q", "dq", "ddq"))
            w = _with_deviations(model.base_regressor(q, dq, ddq), k, task["deviations"], n)
            w = w.reshape(-1, w.shape[-1])
            block, offset = rows // length, rows % length
            for i, own in enumerate(starts):
                products[i] += (torque[rows] + e[own[block] + offset]).ravel() @ w
    coefficients = np.empty((stop - first, task["rank"]))
    for i, product in enumerate(products):
        middle = scipy.linalg.solve_triangular(factor, product, trans="T", check_finite=False)
        coefficients[i] = scipy.linalg.solve_triangular(factor, middle,
                                                        check_finite=False)[:task["rank"]]
    return {"first": first, "stop": stop, "coefficients": coefficients, "friction": None,
            "unsuccessful": 0, "drive_gains": None}
