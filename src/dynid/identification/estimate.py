"""The one contract of every estimator family: what a method is given (``Problem``), what it
returns (``Estimate``), and how it is listed (``Method``).

A family's entry point keeps its own keyword arguments (``identify_constrained(robot, data,
method=..., bounds=...)``); ``Method.fit(problem, **options)`` is the common face that the
comparison, the Monte-Carlo benchmark and the command line call, whatever the family:

- ``Problem``: the robot (its structure; its parameters are the nominal ones, never read as
  truth), the logs, the linear friction columns, and what some families need besides: the
  reference trajectory and controller of each log (simulation-based methods and IV), a start
  (the initial estimate of iterative and recursive methods: BIRDy's draws around the truth),
  a prior.
- ``Estimate``: the identified ``LinearModel`` (base coefficients and friction: what validate,
  report, export and codegen read), the full physical parameters where the method yields them,
  the wall time, whether the method's own stopping rule was met (``converged``), its word
  (``status``), its iterations, and the method's own figures (``details``).
- ``Method``: name, family, whether its estimate is physically consistent by construction,
  what it needs of the problem (``needs``), the literature it follows, and ``fit``.

Convergence, one notion for every iterative method (``with_convergence``): ``converged`` is
True when the method's own stopping rule was met (a tolerance on the step or the cost, a fixed
point within the noise) and False when it stopped otherwise: its iteration budget ran out, no
step lowered the error, the iterates moved apart, or it diverged (a filter's covariance or
state, an estimate whose ``M(q)`` is not positive definite on the data's poses). The model
carries it in ``report["converged"]`` and the reason, in the method's words, in
``report["convergence"]`` (both saved in the model file), so that a command can refuse to write
an unconverged model and a model file says how its fit ended.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from dynid.data.dataset import Dataset
from dynid.friction.models import FrictionModel
from dynid.model.linear_model import LinearModel
from dynid.robot import Robot

__all__ = ["COUPLING_METHODS", "FAMILIES", "NEEDS", "Estimate", "Method", "Problem",
           "refuse_coupling", "with_convergence"]

#: The estimator families, one sub-package each (``dynid.identification.<family>``).
FAMILIES = ("linear", "constrained", "nonlinear", "simulation", "recursive")

# the methods whose columns come from the shared model building (``model_columns``, the
# streamed factors), and so carry a coupled transmission's rotor and friction columns
COUPLING_METHODS = ("ols", "wls", "cls1", "cls2", "cls3", "log-cholesky")


def refuse_coupling(robot, method: str) -> None:
    """ValueError where ``robot``'s transmission couples motors and ``method`` simulates the
    arm or fits friction functions of its own (IV, NLS, the simulation-based and recursive
    families): they would model each joint's rotor and friction alone, a wrong answer."""
    if not robot.transmission.uncoupled:
        raise ValueError(f"`--method {method}` does not model a coupled transmission (the "
                         f"rotors and friction of {robot.name!r}'s coupled motors): use one "
                         f"of {', '.join(COUPLING_METHODS)}")

#: What a method may need of a ``Problem`` besides the robot and the logs: measured
#: accelerations (``ddq``) and efforts (``effort``) in the logs, each log's ``reference`` and
#: ``controller``, a ``start``.
NEEDS = frozenset({"ddq", "effort", "reference", "controller", "start"})


@dataclass(frozen=True)
class Problem:
    """What an estimator is given.

    ``robot``: the structure (kinematics, joint count, friction and rotor-inertia columns,
    bounds); its parameters are the nominal (CAD) ones. ``logs``: one or several datasets.
    ``friction``: the linear friction columns identified with the rigid body (None: the
    method's default, ``dynid.identification.linear.idim.default_friction``).
    ``references``: per log, the reference trajectory the controller tracked (an object with
    ``sample(t) -> (q_d, dq_d, ddq_d)``), or None. ``controller``: per log, the control law
    that ran (``dynid.simulate.Controller``), or None. ``start``: (n, 10) link parameters of
    the initial estimate of an iterative or recursive method (None: the method's own start).
    ``prior``: (n, 10) link parameters the constrained methods are pulled towards.
    """

    robot: Robot
    logs: tuple[Dataset, ...]
    friction: FrictionModel | None = None
    references: tuple | None = None
    controller: tuple | None = None
    start: NDArray | None = None
    prior: NDArray | None = None

    def __post_init__(self) -> None:
        logs = (self.logs,) if isinstance(self.logs, Dataset) else tuple(self.logs)
        if not logs or not all(isinstance(log, Dataset) for log in logs):
            raise ValueError("`logs` must be a Dataset or a non-empty sequence of them")
        object.__setattr__(self, "logs", logs)
        for name in ("references", "controller"):
            value = getattr(self, name)
            if value is None:
                continue
            value = tuple(value) if isinstance(value, Sequence) else (value,) * len(logs)
            if len(value) != len(logs):
                raise ValueError(f"`{name}` must be one for all logs or one per log "
                                 f"({len(logs)}), got {len(value)}")
            object.__setattr__(self, name, value)
        n = self.robot.n_joints
        for name in ("start", "prior"):
            value = getattr(self, name)
            if value is None:
                continue
            array = np.array(value, dtype=float)
            if array.shape != (n, 10) or not np.isfinite(array).all():
                raise ValueError(f"`{name}` must be finite link parameters of shape ({n}, 10), "
                                 f"got shape {array.shape}")
            array.setflags(write=False)
            object.__setattr__(self, name, array)

    def missing(self, needs: frozenset[str]) -> list[str]:
        """The needs of a method this problem does not meet, in words."""
        words = []
        if "ddq" in needs and any(log.ddq is None for log in self.logs):
            words.append("measured or differentiated accelerations (`ddq`) in every log")
        if "effort" in needs and any(log.tau is None for log in self.logs):
            words.append("joint efforts in every log")
        if "reference" in needs and self.references is None:
            words.append("the reference trajectory of each log (`references`)")
        if "controller" in needs and self.controller is None:
            words.append("the controller of each log (`controller`)")
        if "start" in needs and self.start is None:
            words.append("an initial estimate (`start`)")
        return words


@dataclass(frozen=True)
class Estimate:
    """What every method returns (see the module). ``parameters``: (n, 10) physical link
    parameters where the method yields them (the consistent ones: constrained, nonlinear,
    PC-DIDIM), else None."""

    method: str
    model: LinearModel
    seconds: float
    converged: bool
    status: str
    iterations: int = 0
    parameters: NDArray | None = None
    details: Mapping = field(default_factory=dict)


def with_convergence(model: LinearModel, converged: bool, reason: str) -> LinearModel:
    """``model`` with ``report["converged"]`` (whether its method's stopping rule was met) and
    ``report["convergence"]`` (the method's word why, or why not: see the module)."""
    return dataclasses.replace(model, report={**model.report, "converged": bool(converged),
                                              "convergence": str(reason)})


@dataclass(frozen=True)
class Method:
    """One estimator as the comparison and the benchmark see it: ``run(problem, **options)``
    returns an ``Estimate`` without its time; ``fit`` times it and checks the needs first."""

    name: str
    family: str
    consistent: bool
    needs: frozenset[str]
    citation: str
    run: Callable[..., Estimate]

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"`family` must be one of {FAMILIES}, got {self.family!r}")
        unknown = set(self.needs) - NEEDS
        if unknown:
            raise ValueError(f"`needs` must be among {sorted(NEEDS)}, got {sorted(unknown)}")

    def fit(self, problem: Problem, **options) -> Estimate:
        missing = problem.missing(self.needs)
        if missing:
            raise ValueError(f"method {self.name!r} needs " + "; ".join(missing))
        if self.family in ("simulation", "recursive") or self.name in ("iv", "nls"):
            refuse_coupling(problem.robot, self.name)
        began = time.perf_counter()
        estimate = self.run(problem, **options)
        seconds = time.perf_counter() - began
        model = estimate.model
        if estimate.iterations > 0 or not estimate.converged:  # an iterative method's end
            model = with_convergence(model, estimate.converged, estimate.status)
        return Estimate(method=self.name, model=model, seconds=seconds,
                        converged=estimate.converged, status=estimate.status,
                        iterations=estimate.iterations, parameters=estimate.parameters,
                        details=estimate.details)
