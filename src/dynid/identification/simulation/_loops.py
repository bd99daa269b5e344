"""What the simulation-based methods share: the logs with the reference each one tracked and the
controller that ran, checked once (``ClosedLoops``); the closed loop of an estimate simulated
again on every log, as the twin simulates the truth (``ClosedLoops.simulate``); the start.

An estimate is carried as its full parameter vector ``[pi (10 n), Ia (n, when identified),
friction coefficients]`` (``BaseParameters.names``' order): the physical set of a consistent
method, or the equivalent vector of a base-parameter estimate (its coefficients at the
representatives, zero elsewhere: ``LinearModel.equivalent_parameters``), whose dynamics are the
coefficients' exactly. A step between two vectors is a step between their coefficients, and a
convex combination of two consistent sets is consistent (the constraints are convex).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from dynid._validation import as_link_table
from dynid.data.dataset import Dataset, sample_count
from dynid.data.preprocess import uniform_step
from dynid.friction.models import FrictionModel
from dynid.identification._logs import per_log
from dynid.identification.linear.idim import linear_template
from dynid.model.base_parameters import default_friction
from dynid.model.linear_model import LinearModel
from dynid.robot import Robot
from dynid.robot.inertia import N_LINK_PARAMETERS
from dynid.simulate import ClosedLoopError, Controller
from dynid.simulate._substeps import RESIMULATION_STEP_TIMES_RATE
from dynid.simulate.twin import Resimulation

__all__ = ["MAX_HALVINGS", "NEGLIGIBLE_STEP", "ClosedLoops", "check_iterations", "within_std"]

# a step is halved at most this often (1 / 2^6 of the proposed step) before a fit stops
MAX_HALVINGS = 6


def within_std(step: NDArray, std: NDArray, fraction: float = 1.0) -> bool:
    """Whether a step of the coefficients lies within ``fraction`` of their standard
    deviations: its RMS in units of each one's std is at most ``fraction`` (1: the noise
    level; an undetermined coefficient, std inf, counts as within)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(std > 0, np.abs(step) / std, np.where(step == 0, 0.0, np.inf))
    return bool(np.sqrt(np.mean(ratio**2)) <= fraction)


# an accepted step below this fraction of the coefficients' standard deviations ends a fit: it
# moves the estimate by a tenth of its own uncertainty (a step of a noise-free fit, whose
# residual is the model's own error and not noise, stays above it until the end). TX40, high
# torque noise, 10 s at 1 kHz: 0.1 instead of 0.01 ends CLOE after 4 iterations, not 10
# (4.7 -> 1.35 s), its parameter error 0.179 % instead of 0.167 %
NEGLIGIBLE_STEP = 0.1


def check_iterations(max_iterations, tolerance) -> None:
    if isinstance(max_iterations, bool) or not (isinstance(max_iterations, (int, np.integer))
                                                and max_iterations >= 1):
        raise ValueError(f"`max_iterations` must be an integer >= 1, got {max_iterations!r:.40}")
    if isinstance(tolerance, bool) or not (isinstance(tolerance, (int, float, np.floating))
                                           and 0 < tolerance < 1):
        raise ValueError(f"`tolerance` must be a number in (0, 1), got {tolerance!r:.40}")


class ClosedLoops:
    """The logs of a simulation-based fit, each with its reference and controller (see the
    module). ``template``: the model whose base coefficients are fitted (the robot's base
    parameters with ``friction``'s columns and, when the robot states them, rotor inertias).
    ``torques``: whether the method fits the logged torques (then every log needs them)."""

    def __init__(self, robot: Robot, logs: Dataset | Sequence[Dataset], references,
                 controller, *, friction: FrictionModel | None, torques: bool = True) -> None:
        if not isinstance(robot, Robot):
            raise TypeError(f"`robot` must be a dynid Robot, got {type(robot).__name__}")
        listed = [logs] if isinstance(logs, Dataset) else list(logs) if isinstance(
            logs, (list, tuple)) else None
        if not listed or not all(isinstance(log, Dataset) for log in listed):
            raise ValueError(f"`logs` must be a Dataset or a non-empty list of Datasets, got "
                             f"{type(logs).__name__}")
        n = robot.n_joints
        self.references = per_log("references", references, len(listed))
        self.controllers = per_log("controller", controller, len(listed))
        for k, (log, path, law) in enumerate(zip(listed, self.references, self.controllers,
                                                 strict=True)):
            where = "" if len(listed) == 1 else f"[{k}]"
            if log.n_joints != n:
                raise ValueError(f"`logs{where}` has {log.n_joints} joints, `robot` {n}")
            if torques and log.tau is None:
                raise ValueError(f"`logs{where}` has no joint torques, which this method fits")
            if torques and log.effort != "torque":
                raise ValueError(f"`logs{where}` holds motor {log.effort}s: the simulation-"
                                 "based methods fit joint torques (scale the currents by the "
                                 "drive gains first)")
            if not callable(getattr(path, "sample", None)) or \
                    getattr(path, "n_joints", None) != n:
                raise ValueError(f"`references{where}` must be a trajectory of {n} joints with "
                                 f"`sample(t) -> (q, dq, ddq)`, got {type(path).__name__}")
            if not isinstance(law, Controller):
                raise ValueError(f"`controller{where}` must be a dynid.simulate.Controller, "
                                 f"got {type(law).__name__}")
            law.model_for(robot)  # its model has the robot's joints
            step = uniform_step(log)
            if log.n_samples < 2 or not math.isclose(step * law.rate, 1.0, rel_tol=1e-6) or \
                    sample_count(log.duration, law.rate) != log.n_samples:
                raise ValueError(f"`logs{where}` must be sampled once per control period "
                                 f"(1 / {law.rate:g} Hz), as the controller ran, got "
                                 f"{log.n_samples} samples {step:.6g} s apart")
        self.robot, self.logs = robot, listed
        self.loops = [Resimulation(robot, path, duration=log.duration, controller=law,
                                   start=float(log.t[0]))
                      for log, path, law in zip(listed, self.references, self.controllers,
                                                strict=True)]
        self.substeps: list[int | None] = [None] * len(listed)  # per log, chosen at the start
        friction = default_friction(robot) if friction is None else friction
        if not isinstance(friction, FrictionModel) or not friction.linear:
            raise ValueError(f"`friction` must be a linear friction model, got "
                             f"{getattr(friction, 'name', type(friction).__name__)!r}")
        self.template = linear_template(robot, friction,
                                        rotor_inertia=bool(robot.rotor_inertia.any()))
        if torques:
            self.measured = [np.asarray(log.tau, dtype=float) for log in listed]
            self.torque_norm = math.sqrt(sum(float(np.sum(tau**2)) for tau in self.measured))
            if not self.torque_norm > 0:
                raise ValueError("`logs` hold no torque (all zero)")

    @property
    def friction(self) -> FrictionModel:
        return self.template.friction

    def start_vector(self, start) -> NDArray:
        """The full vector of the start: ``start`` ``(n, 10)`` link parameters (None: the
        robot's own, its nominal values), with the robot's rotor inertias and its friction
        coefficients where its friction model is the fitted one (else zero friction)."""
        robot = self.robot
        links = robot.parameters if start is None else as_link_table("start", start,
                                                                     robot.n_joints)
        own = robot.friction
        friction = (own.coefficients if type(own) is type(self.friction)
                    and own.coefficients.size == self.friction.coefficients.size
                    else np.zeros(self.friction.coefficients.size))
        return np.concatenate([np.ravel(links),
                               robot.rotor_inertia if self.template.rotor_inertia else [],
                               friction])

    def model(self, full: NDArray) -> LinearModel:
        """The base-parameter model of the full vector ``full``."""
        return dataclasses.replace(self.template,
                                   coefficients=self.template.base.regrouping @ full)

    def links(self, full: NDArray) -> NDArray:
        """The link parameters ``(n, 10)`` of a full vector ``[pi, I_a, f]`` (a copy)."""
        return np.array(full[:self.template.n_rigid]).reshape(self.robot.n_joints,
                                                              N_LINK_PARAMETERS)

    def rotors(self, full: NDArray) -> NDArray:
        """The rotor inertias ``(n_rotor,)`` of a full vector ``[pi, I_a, f]``."""
        start = self.template.n_rigid
        return np.array(full[start:start + self.template.n_rotor])

    def simulate_start(self, model: LinearModel) -> list[Dataset]:
        """``simulate`` of the start model: a ValueError naming `start` where it is no plant."""
        runs = self.simulate(model)
        if runs is None:
            raise ValueError("`start`: its closed loop under `controller` cannot be simulated "
                             "(it diverges, or M(q) is not positive definite): check the "
                             "controller's gains and rate against the log's, or start from a "
                             "plausible estimate")
        return runs

    def simulate(self, model: LinearModel) -> list[Dataset] | None:
        """The closed-loop runs of ``model`` (its ``plant``) on every log's reference under its
        controller, from the log's first time stamp; None where a run diverges, the model's
        ``M(q)`` is not positive definite on it, its dynamics are not finite or too fast to
        integrate at the control rate, or its link parameters are no robot's (a negative
        mass: an estimate that is no plant).

        Each log's loop is sampled once (``dynid.simulate.Resimulation``) and its RK4 substeps
        chosen once, for the first plant simulated (the start), with the re-simulation's bound
        ``h rho <= RESIMULATION_STEP_TIMES_RATE``; a later plant whose run fails is checked
        again and, when it needs more substeps, run with them (kept for the rest of the fit).
        """
        try:
            plant = model.plant
        except ValueError:  # the template is the robot's: only the values can be refused
            return None
        runs = []
        for k, loop in enumerate(self.loops):
            try:
                if self.substeps[k] is None:
                    self.substeps[k] = loop.substeps(
                        plant, step_times_rate=RESIMULATION_STEP_TIMES_RATE)
                try:
                    run = loop.run(plant, self.substeps[k])
                except ClosedLoopError:  # a plant faster than the start: more substeps?
                    needed = loop.substeps(plant, step_times_rate=RESIMULATION_STEP_TIMES_RATE)
                    if needed <= self.substeps[k]:
                        return None
                    self.substeps[k] = needed
                    run = loop.run(plant, needed)
            except ClosedLoopError:  # no plant: diverging, M(q) indefinite, dynamics not
                return None  # finite or too fast to integrate at the control rate
            runs.append(run)
        return runs

    def torque_cost(self, runs: list[Dataset]) -> float:
        """``|tau_measured - tau_simulated| / |tau_measured|`` over every log."""
        return math.sqrt(sum(float(np.sum((tau - run.tau) ** 2))
                             for tau, run in zip(self.measured, runs, strict=True))) \
            / self.torque_norm

    def regression_logs(self, runs: list[Dataset]) -> list[Dataset]:
        """The measured torques on the simulated states: DIDIM's regression data."""
        return [Dataset(t=log.t, q=run.q, dq=run.dq, ddq=run.ddq, tau=tau,
                        metadata={"source": f"simulated closed loop of log {k + 1}"})
                for k, (log, run, tau) in enumerate(zip(self.logs, runs, self.measured,
                                                        strict=True))]
