"""The measuring instruments: dynid's benchmark suites, one module per suite, and their registry.

Each suite module has ``run(*, [robot=...,] progress=None, **options) -> dict`` (the figures,
JSON-ready) and ``summary(result) -> str`` (readable lines). ``SUITES`` lists them for
``dynid bench --suite NAME`` and ``make bench`` (``bench/run.py``); ``run_suite`` and
``summary`` dispatch by name. This module imports nothing heavy: a suite's module loads when it
runs. The library never imports from here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType, ModuleType

__all__ = ["MAKE_BENCH", "SUITES", "Suite", "run_suite", "summary"]


@dataclass(frozen=True)
class Suite:
    """One ``dynid bench`` suite: ``module`` under ``dynid.bench`` (``run`` and ``summary``),
    a one-line ``help``, the ``robot`` it runs on by default (None: its own fixed setting, no
    ``--robot``), fixed ``options`` passed to ``run``, and ``parts``: the suites a composite
    runs in turn (its result keyed by part)."""

    help: str
    module: str | None = None
    robot: str | None = None
    options: Mapping[str, object] = field(default_factory=dict)
    parts: tuple[str, ...] = ()

    def load(self) -> ModuleType:
        return importlib.import_module(f"dynid.bench.{self.module}")


SUITES: Mapping[str, Suite] = MappingProxyType({
    "dynamics": Suite("regressor, RNEA and forward dynamics against pinocchio in a Python loop",
                      "dynamics", robot="panda"),
    "identification": Suite("OLS from 1e5 samples, reverse engineering from 1010 poses, drive "
                            "gains from motor currents", "identification", robot="panda"),
    "consistency": Suite("CLS-3, NLS, SDP and penalty retrieval", "consistency", robot="panda"),
    "pipeline": Suite("excitation design and preprocessing of 1e6 samples", "pipeline",
                      robot="panda"),
    "compare": Suite("5 logs x the default methods, and the demo", "compare", robot="panda"),
    "all": Suite("dynamics, identification, consistency and compare in one run",
                 robot="panda", parts=("dynamics", "identification", "consistency", "compare")),
    "scale": Suite("the closed-loop twin idle and busy, 1e7 samples streamed from a "
                   "memory-mapped log (and on a Dask LocalCluster), excitation, the demo "
                   "(minutes; a few GB of disk in --folder)", "scale"),
    "codegen": Suite("the generated C's inverse dynamics and M(q) in ns per call beside "
                     "pinocchio's rnea and crba from Python", "codegen"),
    "nls": Suite("NLS with sigmoid, Stribeck and LuGre friction on 1e4 Panda twin samples, and "
                 "the drive gains cls3 identifies from motor currents", "nls", robot="panda"),
    "benchmark": Suite("the wall time of `dynid benchmark` (BIRDy's full protocol, 25 draws x 6 "
                       "profiles x every method, 2 workers: minutes to hours)", "benchmark",
                       robot="tx40"),
    "benchmark-quick": Suite("2 draws of the protocol, and the full protocol's time "
                             "extrapolated from it", "benchmark", robot="tx40",
                             options=MappingProxyType({"draws": 2, "duration": 10.0})),
    "estimators": Suite("DIDIM, PC-DIDIM and CLOE against OLS at high torque noise, the online "
                        "payload, the full protocol's time extrapolated from one draw",
                        "estimators"),
    "structure": Suite("the default path on twins whose truth differs from the description: "
                       "friction bias, the 95 % intervals' coverage over 200 draws, the "
                       "coupled wrist's gain, armature over the noise floor (MuJoCo), the EKF's "
                       "time: the figures of issue 32",
                       "structure"),
    "choice": Suite("the model structure chosen from the data on a twin with armature: "
                       "its overhead over the fixed fit and the held-out error over the noise "
                       "floor", "choice", robot="panda"),
    "filters": Suite("EKF on 3e4 samples of the closed-loop twin (ekf_seconds), the UKF's time "
                     "a sample", "filters", robot="panda"),
    "calibration": Suite("geometric calibration on the twin (5 mrad / 1 mm errors, 0.1 mm "
                         "noise), then the dynamics on nominal and corrected kinematics",
                         "calibration", robot="panda"),
    "armature": Suite("an arm with armature, damping and friction loss simulated by MuJoCo, "
                      "identified by default and with rotor inertia: armature_floor_ratio "
                      "(held-out error over the noise floor; needs mujoco)", "armature",
                      robot="panda"),
    "transmission": Suite("a coupled wrist identified from motor-side logs with and without "
                          "its coupling (coupled_wrist_gain)", "transmission", robot="tx40"),
})

#: the suites ``make bench`` runs (``bench/run.py``)
MAKE_BENCH = ("dynamics", "identification", "consistency", "pipeline", "compare")


def _suite(name: str) -> Suite:
    if name not in SUITES:
        raise ValueError(f"`suite` must be one of {', '.join(SUITES)}, got {name!r}")
    return SUITES[name]


def run_suite(name: str, *, robot: str | None = None,
              progress: Callable[[str], None] | None = None, **options) -> dict:
    """The figures of suite ``name`` (on ``robot``, default the suite's own; ``options`` to its
    ``run``); a composite's result has one entry per part. ``robot`` for a suite that runs on
    its own fixed setting is a ValueError."""
    suite = _suite(name)
    if robot is not None and suite.robot is None:
        raise ValueError(f"`robot`: the {name} suite runs on its own fixed setting")
    robot = robot or suite.robot
    if suite.parts:
        return {part: run_suite(part, robot=robot, progress=progress,
                                **(options if part == suite.parts[0] else {}))
                for part in suite.parts}
    given = {**suite.options, **options}
    if robot is not None:
        given["robot"] = robot
    return suite.load().run(progress=progress, **given)


def summary(name: str, result: dict) -> str:
    """The readable lines of suite ``name``'s ``result``."""
    suite = _suite(name)
    if suite.parts:
        return "\n".join(summary(part, result[part]) for part in suite.parts)
    return suite.load().summary(result)
