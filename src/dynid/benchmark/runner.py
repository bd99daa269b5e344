"""The Monte-Carlo runner: every method x noise profile x initial estimate, in parallel
(``dynid._parallel``), resumable.

Every run's result is a small JSON file in the output folder,
``runs/<profile>/<method>/draw-<k>.json`` (``draw-all.json`` for a method the draws cannot
change, see ``start_free``), written atomically by the worker that fitted it (a fit
that raises is stored too, as a failure with its error: one method's crash does not stop the
benchmark): a run stopped by Ctrl-C or a crash leaves finished runs whole and no half-written
file, and the next run with the same settings (``settings.json``) fits only what is missing.
The methods come only from the registry
(``dynid.identification.methods.IDENTIFICATION_METHODS``): a method another family adds is
benchmarked without a change here; one that needs what the problem lacks (``Method.needs``) is
skipped with the reason.

Each run records (``score``): the relative error of the estimate's rigid-body and rotor base
coefficients against the truth's in the same base, ``||beta^ - beta|| / ||beta||`` (and the
signed error vector, from which the table takes bias and spread); the torque error of the model
on the noise-free validation log, ``||tau^ - tau|| / ||tau||`` and its RMS [N m]; the method's
own wall time, convergence flag, status and iterations.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

from dynid._files import atomic_write, to_builtin
from dynid._reading import FileError, read_json
from dynid.benchmark.protocol import (
    DEFAULT_DRAWS,
    DEFAULT_DURATION,
    DEFAULT_SPREAD,
    PROFILES,
    ControlGains,
    Experiment,
    NoiseProfile,
    control_gains,
    draw_drive_starts,
    draw_starts,
    experiment,
    noisy_log,
    nominal_robot,
    raw_log,
)
from dynid.metrics import w_errors
from dynid.robot import Robot

__all__ = ["SETTINGS_FILE", "START_DEPENDENT_METHODS", "START_FREE_FAMILIES",
           "START_FREE_METHODS", "BenchmarkRun", "check_settings", "collect", "pending_runs",
           "read_record", "run_benchmark", "score", "skip_reason", "start_free"]

SETTINGS_FILE = "settings.json"

#: Families whose estimate is a closed form of the data alone: neither the start nor the
#: nominal parameters enter it, so one fit per noise profile serves every draw (BIRDy's
#: IDIM-OLS gives the same estimate from every initial point). ``tests/test_benchmark.py``
#: checks it for every registered method of these families.
START_FREE_FAMILIES = frozenset({"linear"})
#: methods of other families whose estimate reads neither the start nor the nominal
#: parameters: recursive least squares (started exactly from the data, no prior)
START_FREE_METHODS = frozenset({"rls"})
#: methods of the start-free families that read the nominal parameters all the same: IDIM-IV
#: takes its first instruments from the robot's nominal parameters where the OLS estimate is
#: no plant (TX40, sigma_q 1e-2 deg: every noise draw), so one fit per draw
START_DEPENDENT_METHODS = frozenset({"iv"})


def start_free(method) -> bool:
    """Whether ``method``'s estimate is the same from every draw (one fit per profile)."""
    return ((method.family in START_FREE_FAMILIES or method.name in START_FREE_METHODS)
            and method.name not in START_DEPENDENT_METHODS)


def _registry() -> dict:
    from dynid.identification.methods import IDENTIFICATION_METHODS

    return IDENTIFICATION_METHODS


def _draw_key(method, draw: int) -> str:
    return "draw-all" if start_free(method) else f"draw-{draw:02d}"


@dataclasses.dataclass(frozen=True)
class BenchmarkRun:
    """Where and what: the robot, the settings that make results comparable, the output
    folder; ``methods`` and ``profiles`` by name."""

    robot: Robot
    methods: tuple[str, ...]
    profiles: tuple[NoiseProfile, ...] = PROFILES
    draws: int = DEFAULT_DRAWS
    duration: float = DEFAULT_DURATION
    spread: float = DEFAULT_SPREAD
    seed: int = 0
    out: Path = Path("benchmark")

    def settings(self) -> dict:
        """What a stored run must share with this benchmark to be reused."""
        from dynid._version import __version__
        from dynid.benchmark import protocol

        loop = protocol.control_gains(self.robot)
        settings = {
            "schema": "dynid-benchmark/1", "robot": self.robot.name,
            "parameters_sha": _digest(self.robot), "duration": self.duration,
            "spread": self.spread, "seed": self.seed, "dynid": __version__,
            # the protocol's constants: a stored run made under others is not reused
            "protocol": {"cutoff_hz": protocol.CUTOFF_HZ,
                         "decimated_rate": protocol.DECIMATED_RATE,
                         "smooth_coulomb": protocol.SMOOTH_COULOMB,
                         "excitation_period": protocol.EXCITATION_PERIOD,
                         "drawn": ["links", "friction", "rotor_inertia"],
                         "loop": {"control_rate": loop.control_rate,
                                  "sample_rate": loop.sample_rate, "source": loop.source},
                         "profiles": [dataclasses.asdict(p) for p in protocol.PROFILES]}}
        return json.loads(json.dumps(settings))  # as settings.json holds it (lists, not tuples)

    def path(self, profile: str, method: str, key: str) -> Path:
        return self.out / "runs" / profile / method / f"{key}.json"


def _digest(robot: Robot) -> str:
    import hashlib

    data = np.concatenate([np.ravel(robot.parameters), robot.rotor_inertia,
                           np.ravel(robot.friction.coefficients)
                           if hasattr(robot.friction, "coefficients") else []])
    return hashlib.sha256(np.ascontiguousarray(data).tobytes()).hexdigest()[:16]


def check_settings(run: BenchmarkRun) -> None:
    """That ``run`` may store its runs in ``run.out``, before anything is made there: a folder
    dynid may write in, or one it may create, that holds no other benchmark's
    ``settings.json`` (ValueError naming ``out`` otherwise). ``run_benchmark`` creates the
    folder and its settings only once its closed loop is simulated: a benchmark refused
    before its first run leaves nothing behind."""
    out = run.out
    settings = run.settings()
    existing = out.absolute()
    while not (existing.exists() or existing.is_symlink()):
        existing = existing.parent
    if not existing.is_dir():
        raise ValueError(f"`out`: {str(existing)!r} is not a folder; give a folder (new, or "
                         "one of an earlier benchmark to resume)")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"`out`: folder {str(existing)!r} is not writable"
                         + ("" if existing == out.absolute() else
                            f" (to create {str(out)!r} in)"))
    file = out / SETTINGS_FILE
    if existing != out.absolute() or not (file.exists() or file.is_symlink()):
        return
    try:
        stored = read_json(file, what="the benchmark's settings")
    except FileError as error:
        raise FileError(f"`out`: {error}: choose another folder") from None
    if not isinstance(stored, dict):
        raise FileError(f"`out`: the benchmark's settings {str(file)!r} hold a JSON "
                        f"{_kind(stored)}, not an object: choose another folder")
    if stored != settings:
        changed = sorted(k for k in settings if stored.get(k) != settings[k])
        raise ValueError(f"`out`: {str(out)!r} holds a benchmark with other settings "
                         f"({', '.join(changed) or 'other keys'}): choose another folder or "
                         "the same settings")


def _store_settings(run: BenchmarkRun) -> None:
    """``run.out`` with ``run``'s ``settings.json`` (checked by ``check_settings``)."""
    run.out.mkdir(parents=True, exist_ok=True)
    file = run.out / SETTINGS_FILE
    if not file.exists():
        text = json.dumps(run.settings(), indent=2)
        atomic_write(file, lambda tmp: tmp.write_text(text))


def skip_reason(method, gains: ControlGains | None = None) -> str | None:
    """Why the benchmark cannot run ``method`` (what it needs that the protocol does not
    give), or None: the protocol gives every problem accelerations (inverse-model methods'
    logs), efforts, the reference trajectory, a start, and the controller — to the
    simulation-based methods only where the loop ran once per logged sample (``gains``: the
    run's loop; they re-simulate one control period per logged sample)."""
    given = {"ddq", "effort", "reference", "start"}
    every_sample = gains is None or gains.control_rate == gains.sample_rate
    if every_sample:
        given.add("controller")
    missing = sorted(set(method.needs) - given)
    if missing == ["controller"] and not every_sample:
        if "ddq" in method.needs:  # IV: the prepared log, every whole number of periods
            return (f"re-simulates the loop at {gains.control_rate:g} Hz and compares it "
                    f"with the prepared log's samples, every whole number of control periods; "
                    f"the loop ran at {gains.control_rate:g} Hz, logged at "
                    f"{gains.sample_rate:g} Hz")
        return (f"re-simulates the loop once per logged sample; the loop ran at "
                f"{gains.control_rate:g} Hz, logged at {gains.sample_rate:g} Hz")
    return f"needs {', '.join(missing)}, which the protocol does not give" if missing else None


def _remove_temporaries(run: BenchmarkRun) -> None:
    """The temporary files of writes that a killed worker left (``.draw-NN.*.json``, never a
    result: results appear by renaming)."""
    folder = run.out / "runs"
    if folder.is_dir():
        for stale in folder.glob("*/*/.draw-*.json"):
            stale.unlink(missing_ok=True)


def pending_runs(run: BenchmarkRun) -> list[tuple[str, str, int, str]]:
    """``(profile, method, draw, key)`` of every run not stored yet (one per key)."""
    methods, loop = _registry(), control_gains(run.robot)
    out, seen = [], set()
    for noise in run.profiles:
        for name in run.methods:
            method = methods[name]
            if skip_reason(method, loop):
                continue
            for draw in range(run.draws):
                key = _draw_key(method, draw)
                if (noise.name, name, key) in seen:
                    continue
                seen.add((noise.name, name, key))
                if not run.path(noise.name, name, key).exists():
                    out.append((noise.name, name, draw, key))
    return out


def score(estimate, truth: Robot, validation) -> dict:
    """The run's figures (see the module) for ``estimate`` (an ``Estimate``)."""
    model = estimate.model
    base = model.base
    stop = model.n_rigid + model.n_rotor
    rows = np.flatnonzero(base.independent < stop)
    own = np.concatenate([np.ravel(truth.parameters),
                          truth.rotor_inertia if model.rotor_inertia else []])
    true = base.regrouping[rows, :stop] @ own
    found = np.asarray(model.coefficients)[rows]
    size = max(float(np.linalg.norm(true)), np.finfo(float).tiny)
    predicted = model.predict(validation.q, validation.dq, validation.ddq, validation.t)
    residual = predicted - validation.tau
    return {
        "parameter_error": float(np.linalg.norm(found - true) / size),
        "signed_error": ((found - true) / size).tolist(),
        "coefficient_names": [base.base_names[i] for i in rows],
        "torque_error": w_errors(validation.tau, predicted)[1],
        "torque_rms": float(np.sqrt(np.mean(residual**2))),
    }


def _fit_task(task: dict) -> dict:
    """One run in a worker: fit, score, store atomically; a failure is a result too, and the
    method's warnings are kept in the record (``warnings``), not printed once per fit."""
    method = _registry()[task["method"]]
    record = {"profile": task["profile"], "method": method.name, "family": method.family,
              "draw": task["draw"] if task["key"] != "draw-all" else None, "key": task["key"]}
    began = time.perf_counter()
    caught: list = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")  # kept in the record, not printed per fit
            estimate, figures = _fit(method, task)
        finite = np.isfinite(figures["parameter_error"]) and np.isfinite(figures["torque_error"])
        record.update(ok=True, seconds=estimate.seconds,
                      converged=bool(estimate.converged and finite),
                      status=str(estimate.status), iterations=int(estimate.iterations),
                      **figures)
    except Exception as error:  # a method's failure is a result of the benchmark
        # (a solver's own error types included); Ctrl-C (BaseException) still stops the run
        record.update(ok=False, converged=False, seconds=time.perf_counter() - began,
                      status=f"failed: {' '.join(str(error).split())[:300]}",
                      error=type(error).__name__,
                      where=traceback.format_exc(limit=-1).strip().splitlines()[-1][:200])
    if caught:
        record["warnings"] = sorted({_one_line(w) for w in caught})
    path = Path(task["path"])
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(to_builtin(record, nonfinite_as_none=True))
    atomic_write(path, lambda tmp: tmp.write_text(text))
    return record


def _one_line(warning) -> str:
    text = " ".join(str(warning.message).split())
    return f"{warning.category.__name__}: {text}"[:200]


def _fit(method, task: dict):
    """The method's estimate on the task's problem, and its figures."""
    from dynid.identification.estimate import Problem

    truth: Robot = task["truth"]
    start = task["start"]
    problem = Problem(nominal_robot(truth, start, task["drives"]), (task["log"],),
                      friction=task["friction"],
                      references=(task["trajectory"],), controller=task["controller"],
                      start=start)
    estimate = method.fit(problem)
    return estimate, score(estimate, truth, task["validation"])


def _controller(run_data: Experiment):
    """The control law that ran, as ``dynid.simulate.Controller``: the PD loop (a joint
    impedance on no model) at the logged rate (``skip_reason``: the simulation-based methods
    run only where the loop ran once per logged sample)."""
    from dynid.simulate import Controller

    gains = run_data.gains
    return Controller.impedance(gains.stiffness, gains.damping, model=None,
                                rate=gains.sample_rate)


def _reads_raw(method) -> bool:
    """Simulation-based: the method simulates the loop (needs the controller) and reads no
    accelerations: the unfiltered log at the sampling rate (``protocol.raw_log``)."""
    return "controller" in method.needs and "ddq" not in method.needs


def run_benchmark(run: BenchmarkRun, *, jobs: int = 1,
                  progress: Callable[[str], None] | None = None) -> list[dict]:
    """Fit every pending run of ``run`` (``jobs`` worker processes; 1: here, in turn) and
    return every stored record of its methods, profiles and draws, plus one ``skipped``
    record per (method, profile) that the protocol cannot run (``skip_reason``)."""
    from dynid._parallel import run_parallel

    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"`jobs` must be an integer >= 1, got {jobs!r}")
    methods = _registry()
    unknown = [m for m in run.methods if m not in methods]
    if unknown:
        raise ValueError(f"`methods`: unknown {', '.join(map(repr, unknown))}: choose among "
                         f"{', '.join(sorted(methods))}")
    check_settings(run)
    _remove_temporaries(run)
    say = progress or (lambda line: None)
    pending = pending_runs(run)
    if pending:
        say(f"benchmark {run.robot.name}: simulating the closed loop ({run.duration:g} s, "
            "identification and validation logs)")
        data = experiment(run.robot, duration=run.duration, seed=run.seed)
        controller = _controller(data)
        starts = draw_starts(run.robot, run.draws, spread=run.spread, seed=run.seed)
        drives = draw_drive_starts(run.robot, run.draws, spread=run.spread, seed=run.seed)
        logs = {p.name: noisy_log(data, p, seed=run.seed) for p in run.profiles}
        raws = {p.name: raw_log(data, p, seed=run.seed) for p in run.profiles}
        _store_settings(run)  # the loop and its logs are there: the runs can be stored
        tasks = [{"profile": p, "method": m, "draw": d, "key": key, "truth": data.truth,
                  "friction": data.friction,
                  "start": starts[d], "drives": drives[d],
                  "log": raws[p] if _reads_raw(methods[m]) else logs[p],
                  "validation": data.validation,
                  "trajectory": data.trajectory, "controller": controller,
                  "path": str(run.path(p, m, key))}
                 for p, m, d, key in pending]
        done = [0]

        def arrived(record: dict) -> None:
            done[0] += 1
            figure = (f"parameter error {100 * record['parameter_error']:.3g} %, torque "
                      f"error {100 * record['torque_error']:.3g} %" if record.get("ok")
                      else record["status"][:80])
            say(f"[{done[0]}/{len(tasks)}] {record['method']} {record['profile']} "
                f"{record['key']}: {figure}, {record['seconds']:.2f} s")

        say(f"benchmark {run.robot.name}: {len(tasks)} runs to fit, {jobs} "
            f"worker{'s' if jobs > 1 else ''}")
        if jobs == 1:
            for task in tasks:
                arrived(_fit_task(task))
        else:
            run_parallel(_fit_task, tasks, max_workers=jobs, on_result=arrived)
    else:
        _store_settings(run)
        say(f"benchmark {run.robot.name}: every run is stored in {str(run.out)!r}; nothing "
            "to fit")
    return collect(run)


def collect(run: BenchmarkRun) -> list[dict]:
    """Every stored record of ``run``'s methods, profiles and draws (a ``draw-all`` record
    once), and a ``skipped`` record for each method the protocol cannot run."""
    methods, loop = _registry(), control_gains(run.robot)
    records = []
    for noise in run.profiles:
        for name in run.methods:
            reason = skip_reason(methods[name], loop)
            if reason:
                records.append({"profile": noise.name, "method": name,
                                "family": methods[name].family, "skipped": reason})
                continue
            keys = sorted({_draw_key(methods[name], d) for d in range(run.draws)})
            for key in keys:
                path = run.path(noise.name, name, key)
                if path.exists():
                    records.append(read_record(path, noise.name, name, key))
    return records


# what the table reads of every stored run, and of a fitted one's (ok) figures
_RECORD_FIELDS = {"profile": "a string", "method": "a string", "key": "a string",
                  "ok": "true or false", "converged": "true or false", "status": "a string",
                  "seconds": "a number"}
_FIGURES = ("parameter_error", "torque_error", "torque_rms")


def read_record(path: Path, profile: str, method: str, key: str) -> dict:
    """The stored run at ``path`` (``_fit_task``'s record) of ``profile``, ``method`` and
    ``key``, with every field the table reads (a FileError naming the file and the field
    otherwise: a truncated, corrupt or edited file, which is removed to fit the run again)."""
    where = f"stored run {str(path)!r}"
    again = "remove it to fit the run again"
    try:
        record = read_json(path, what="stored run")
    except FileError as error:
        raise FileError(f"{error}: {again}") from None
    if not isinstance(record, dict):
        raise FileError(f"{where} holds a JSON {_kind(record)}, not a run's record: {again}")

    def check(field: str, expected: str, value) -> None:
        if not _matches(value, expected):
            raise FileError(f"{where}: field {field!r} must be {expected}, got "
                            f"{_kind(value)} {json.dumps(value)[:40]}: {again}")

    for field, expected in _RECORD_FIELDS.items():
        if field not in record:
            raise FileError(f"{where} lacks the field {field!r}: {again}")
        check(field, expected, record[field])
    for field, value in (("profile", profile), ("method", method), ("key", key)):
        if record[field] != value:
            raise FileError(f"{where} holds the run of {field} {record[field]!r:.40}, not "
                            f"{value!r}: {again}")
    if "family" in record:
        check("family", "a string or null", record["family"])
    if record["ok"]:  # a fitted run: its figures (null: not finite)
        for field in (*_FIGURES, "signed_error"):
            if field not in record:
                raise FileError(f"{where} lacks the field {field!r} of a fitted run: {again}")
        for field in _FIGURES:
            check(field, "a number or null", record[field])
        check("signed_error", "a list of numbers", record["signed_error"])
    return record


def _matches(value, expected: str) -> bool:
    def number(x) -> bool:
        return isinstance(x, (int, float)) and not isinstance(x, bool)

    return {"a string": isinstance(value, str),
            "a string or null": value is None or isinstance(value, str),
            "true or false": isinstance(value, bool),
            "a number": number(value),
            "a number or null": value is None or number(value),
            "a list of numbers": isinstance(value, list)
            and all(x is None or number(x) for x in value)}[expected]


def _kind(value) -> str:
    """A JSON value's kind, as JSON names it."""
    return {dict: "object", list: "array", str: "string", bool: "boolean",
            type(None): "null"}.get(type(value), "number")


