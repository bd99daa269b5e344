"""The digital twin: what a real robot would log along a trajectory.

- ``simulate_open_loop``: the robot follows the trajectory exactly; the torque is
  ``rnea(q, dq, ddq) + tau_f(dq)`` with the robot's own (truth) parameters and friction.
- ``simulate_closed_loop``: computed-torque control tracks the trajectory (Gilbert et al. 2024,
  eq. 23-27): ``tau = M^(q) (ddq_d + Kd (dq_d - dq) + Kp (q_d - q)) + c^(q, dq) + g^(q)`` with
  ``Kp = w^2``, ``Kd = 2 w`` (critically damped, natural frequency ``w``), computed from the
  controller's model at each sample from the *measured* state (quantised positions, velocities
  from encoder differences when the sensor model says so: measurement noise enters the torques
  through the feedback, as on a real robot) and held for one period; the
  truth robot's forward dynamics, with its friction (a LuGre state integrated alongside), are
  integrated by RK4, in as many steps per period as its fastest dynamics need
  (``_substeps``). The logged torque is the applied one. With ``stiffness`` and ``damping``
  the feedback is a joint impedance in torque units on top of the model's feedforward instead:
  ``tau = M^(q) ddq_d + c^(q, dq) + g^(q) + K (q_d - q) + D (dq_d - dq)``; its error does not
  scale with the controller's (possibly poor) inertia estimate. The control periods run in one
  compiled serial loop (``_closed_loop``), in blocks of about 0.1 s of wall time between which
  progress is reported and Ctrl-C is seen.

Both pass their exact signals through a ``SensorModel``: torque noise and bias, position
quantisation, velocity from encoder differences, timing jitter and dropped samples.

Both take ``contacts`` (``dynid.simulate.Contact``): external forces on the arm (a pulse at the
tool, a constant push), whose joint torques ``tau_ext = J(q)^T F`` act on the truth
(``M q'' + c + g + tau_f = tau + tau_ext``); the log's metadata lists them (``contacts``) so
that a collision detector can be scored.

A motor-current log (``SensorModel(drive_gains=K)``) holds ``i = tau / K`` of the same torque:
rigid body, the rotor inertias' ``Ia ddq`` and friction. ``with_payload`` puts a known payload
on the last link, for the payload log that fixes the scale of drive gains identified from
currents (Gautier & Briot 2014; ``dynid.identification.identify_drive_gains``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._progress import Progress
from dynid._validation import as_vector
from dynid.data.dataset import Dataset, sample_count, sample_times
from dynid.dynamics import rnea
from dynid.dynamics._chain import chain_arrays
from dynid.friction._compiled import compiled_friction
from dynid.robot import Robot
from dynid.robot.inertia import from_com, transform_parameters
from dynid.simulate._closed_loop import (
    DIVERGED,
    NOT_POSITIVE_DEFINITE,
    model_arrays,
    run_block,
)
from dynid.simulate._substeps import ClosedLoopError, rk4_substeps
from dynid.simulate.contacts import Contact, contact_table, external_torques
from dynid.simulate.controller import Controller

__all__ = ["PAYLOAD_RADIUS", "PIECE_SAMPLES", "Resimulation", "SensorModel",
           "closed_loop_pieces", "simulate_closed_loop", "simulate_open_loop", "with_payload"]

# the payload of ``with_payload``: a uniform solid sphere of this radius [m] about its CoM
PAYLOAD_RADIUS = 0.05


def with_payload(robot: Robot, mass: float, com: ArrayLike | None = None) -> Robot:
    """``robot`` carrying a payload rigidly on its last link: ``mass`` [kg] with its centre of
    mass at ``com`` ``(3,)`` [m] in the tool frame (``robot.tool``; default the tool point,
    ``(0, 0, 0)``), its inertia a uniform solid sphere of radius ``PAYLOAD_RADIUS``
    (``I_com = 2/5 m r^2`` on the diagonal). The payload's 10 parameters, moved from the tool
    frame to the last link's frame, are added to the last link's; the name stays the robot's
    (the log is of the same arm)."""
    if isinstance(mass, bool) or not (isinstance(mass, (int, float, np.floating))
                                      and np.isfinite(mass) and mass > 0):
        raise ValueError(f"`mass` must be a number > 0 kg, got {mass!r:.60}")
    com = np.zeros(3) if com is None else as_vector("com", com, 3)
    sphere = np.eye(3) * 0.4 * float(mass) * PAYLOAD_RADIUS**2
    tool = from_com(float(mass), com, sphere)
    link = transform_parameters(tool, robot.tool[:3, :3], robot.tool[:3, 3])
    parameters = np.array(robot.parameters, dtype=float)
    parameters[-1] += link
    return robot.with_parameters(parameters)


@dataclass(frozen=True)
class SensorModel:
    """How the exact signals are logged. Scalars apply to every joint; (n,) per joint.

    - ``torque_noise_std`` [N m], ``torque_bias`` [N m]: Gaussian noise and a constant offset;
    - ``position_resolution`` [rad]: positions quantised to this step (an encoder);
    - ``velocity_from_positions``: velocities as backward differences of the logged positions
      (instead of the exact ones);
    - ``jitter_std`` [s]: Gaussian error of each time stamp (sorted to stay increasing);
    - ``drop_probability``: each sample lost with this probability (gaps in the log);
    - ``drive_gains`` [N m/A]: the drives log motor currents ``(tau + bias + noise) / K``
      instead of torques (noise and bias stay given in N m); ``effort="current"``;
    - ``torque_delay`` [s]: the torque channel lags the positions by this much, as on arms
      whose drives report torque a few milliseconds late: the torque logged at ``t`` is the
      one applied at ``t - torque_delay`` (linear between samples; exact for a whole number
      of sample periods), and the log starts ``torque_delay`` late, where the late channel
      has its first value.
    """

    torque_noise_std: ArrayLike = 0.0
    torque_bias: ArrayLike = 0.0
    position_resolution: float = 0.0
    velocity_from_positions: bool = False
    jitter_std: float = 0.0
    drop_probability: float = 0.0
    drive_gains: ArrayLike | None = None
    torque_delay: float = 0.0

    def __post_init__(self) -> None:
        if not (self.position_resolution >= 0 and self.jitter_std >= 0):  # NaN fails too
            raise ValueError("`position_resolution` and `jitter_std` must be >= 0, got "
                             f"{self.position_resolution}, {self.jitter_std}")
        if not (self.torque_delay >= 0 and np.isfinite(self.torque_delay)):
            raise ValueError(f"`torque_delay` must be a finite number of seconds >= 0, got "
                             f"{self.torque_delay}")
        if not 0 <= self.drop_probability < 1:
            raise ValueError(f"`drop_probability` must be in [0, 1), got {self.drop_probability}")

    def record(self, t: NDArray, q: NDArray, dq: NDArray, ddq: NDArray | None, tau: NDArray,
               rng: np.random.Generator, metadata: dict) -> Dataset:
        n = q.shape[1]
        sigma = as_vector("torque_noise_std", self.torque_noise_std, n)
        if (sigma < 0).any():
            raise ValueError(f"`torque_noise_std` must be >= 0, got {sigma}")
        if self.torque_delay > 0:
            t, q, dq, ddq, tau = _delayed(t, q, dq, ddq, tau, self.torque_delay)
        tau = tau + as_vector("torque_bias", self.torque_bias, n)
        tau = tau + rng.standard_normal(tau.shape) * sigma
        effort = "torque"
        gains = None
        if self.drive_gains is not None:
            gains = as_vector("drive_gains", self.drive_gains, n)
            if not (np.abs(gains) > 0).all():
                raise ValueError(f"`drive_gains` must be nonzero, got {gains}")
            tau, effort = tau / gains, "current"
        if self.position_resolution > 0:
            q = np.round(q / self.position_resolution) * self.position_resolution
        if self.velocity_from_positions:
            dq = np.vstack([dq[:1], np.diff(q, axis=0) / np.diff(t)[:, None]])
            ddq = None  # a real log has no accelerations
        if self.jitter_std > 0:
            t = np.sort(t + self.jitter_std * rng.standard_normal(t.size))
        keep = slice(None)  # every sample: views, no copies
        if self.drop_probability > 0:
            keep = rng.uniform(size=t.size) >= self.drop_probability
            keep[[0, -1]] = True
        if self.jitter_std > 0 or self.drop_probability > 0:
            ddq = None  # accelerations of an irregular log come from preprocessing
        return Dataset(t=t[keep], q=q[keep], dq=dq[keep], tau=tau[keep],
                       ddq=None if ddq is None else ddq[keep], effort=effort,
                       metadata={**metadata, "sensor": {
                           "torque_noise_std": sigma.tolist(),
                           "position_resolution": self.position_resolution,
                           "velocity_from_positions": self.velocity_from_positions,
                           "jitter_std": self.jitter_std,
                           "drop_probability": self.drop_probability,
                           "torque_delay": self.torque_delay,
                           **({} if gains is None else {"drive_gains": gains.tolist()})}})


def _delayed(t: NDArray, q: NDArray, dq: NDArray, ddq: NDArray | None, tau: NDArray,
             delay: float) -> tuple:
    """The signals with the torque channel ``delay`` s late: from the first sample whose
    ``t - delay`` the run covers, the torque interpolated there (linearly; at a sample itself
    for a whole number of periods)."""
    late = t - delay
    rows = late >= t[0] - 1e-9 * (t[-1] - t[0])  # round-off of t - delay on a sample
    if rows.sum() < 2:
        raise ValueError(f"`torque_delay` ({delay:g} s) leaves fewer than 2 samples of a "
                         f"{t[-1] - t[0]:g} s run")
    shifted = np.column_stack([np.interp(np.maximum(late[rows], t[0]), t, tau[:, j])
                               for j in range(tau.shape[1])])
    return (t[rows], q[rows], dq[rows], None if ddq is None else ddq[rows], shifted)


# The compiled loop runs in blocks of samples, each about _BLOCK_SECONDS of wall time: progress
# lines and Ctrl-C (which a compiled loop cannot see) are handled between blocks.
_BLOCK_SECONDS = 0.1
_FIRST_BLOCK = 256
_MAX_BLOCK = 65536


# samples per piece of closed_loop_pieces: 64 k samples of a 7-joint arm are 18 MB of signals
PIECE_SAMPLES = 1 << 16


def _next_block(block: int, seconds: float) -> int:
    """The next block's samples after ``block`` took ``seconds``: aimed at ``_BLOCK_SECONDS``,
    at most 4x larger per step (a block can be quick by chance; the first one is small, as it
    may include compilation)."""
    target = block * _BLOCK_SECONDS / max(seconds, 1e-6)
    return int(min(_MAX_BLOCK, 4 * block, max(16, target)))


def _check(robot: Robot, trajectory) -> None:
    if trajectory.n_joints != robot.n_joints:
        raise ValueError(
            f"`trajectory` has {trajectory.n_joints} joints, `robot` {robot.n_joints}"
        )


def _contacts_metadata(robot: Robot, contacts: Sequence[Contact] | None, t: NDArray) -> dict:
    """``{"contacts": [...]}`` (each ``Contact.to_dict``, open-ended ones stopped at the log's
    end), or nothing without contacts; the table validates every contact against ``robot``."""
    contact_table(robot, contacts)
    if not contacts:
        return {}
    listed = [contacts] if isinstance(contacts, Contact) else list(contacts)
    end = float(t[-1] + (t[1] - t[0] if t.size > 1 else 0.0))
    return {"contacts": [c.to_dict(robot, end) for c in listed]}


def simulate_open_loop(robot: Robot, trajectory, *, duration: float, rate: float = 1000.0,
                       sensor: SensorModel | None = None, seed: int = 0,
                       contacts: Sequence[Contact] | None = None) -> Dataset:
    """Sample ``trajectory`` for ``duration`` s at ``rate`` Hz and log the torques that realise
    it exactly (rigid body + friction; a stateful friction model with its state integrated
    along the samples). ``contacts``: external wrenches on the arm; the motion stays the
    prescribed one, so the drives supply ``tau = rnea + tau_f - J^T F``."""
    _check(robot, trajectory)
    t = sample_times(duration, rate)
    extra = _contacts_metadata(robot, contacts, t)
    q, dq, ddq = trajectory.sample(t)
    tau = rnea(robot, q, dq, ddq) + robot.friction.torque_along(t, dq)
    if extra:
        tau = tau - external_torques(robot, q, t, contacts)
    return (sensor or SensorModel()).record(
        t, q, dq, ddq, tau, np.random.default_rng(seed),
        {"robot": robot.name, "source": "digital twin (open loop)", "rate_hz": rate,
         "friction": robot.friction.name, "seed": seed, **extra})


def simulate_closed_loop(robot: Robot, trajectory, *, duration: float,
                         rate: float | None = None,
                         natural_frequency: ArrayLike | None = None,
                         stiffness: ArrayLike | None = None, damping: ArrayLike | None = None,
                         controller: Controller | Robot | None = None,
                         sensor: SensorModel | None = None,
                         substeps: int | None = None, start: float = 0.0, seed: int = 0,
                         progress: Callable[[str], None] | None = None,
                         contacts: Sequence[Contact] | None = None) -> Dataset:
    """Closed-loop tracking of ``trajectory`` by the truth ``robot`` (see the module).

    ``controller``: the control law that runs, a ``Controller`` (its gains, control rate,
    substeps and encoders; then ``natural_frequency``, ``stiffness``, ``damping`` and
    ``substeps`` stay None and ``rate``, if given, is its rate), or the shorthand: the model
    inside the law (a ``Robot``; default the truth without friction — a perfect rigid-body
    model) with ``natural_frequency`` w [rad/s] per joint (``Kp = w^2``, ``Kd = 2 w``, default
    w = 20 rad/s), or ``stiffness`` K [N m/rad] and ``damping`` D [N m s/rad] per joint (a
    joint impedance instead of the computed-torque feedback), at ``rate`` Hz (default 1000),
    reading the encoders as the ``sensor`` logs them (its ``position_resolution`` and
    ``velocity_from_positions``). The torque is held over each period ``1 / rate`` and the
    dynamics integrated by ``substeps`` RK4 steps per period (default: the fewest that the
    truth's fastest dynamics along the reference allow, ``h |lambda| <= 0.5``; see
    ``dynid.simulate._substeps``), from the reference state at ``start`` [s]. The dataset's
    metadata holds the tracking error (RMS per joint) and the substeps (``rk4_substeps``).
    ``progress`` receives a line every few seconds (samples done, time left).
    ``contacts``: external wrenches on the arm (``Contact``), their ``J(q)^T F`` added to the
    applied torque in the truth's dynamics at every RK4 stage (not to the logged torque: the
    drives do not feel it); listed in the metadata (``contacts``).
    A run longer than memory: ``closed_loop_pieces``.
    """
    sensor = sensor or SensorModel()
    run = _ClosedLoop(robot, trajectory, duration=duration, rate=rate,
                      natural_frequency=natural_frequency, stiffness=stiffness,
                      damping=damping, controller=controller, sensor=sensor,
                      substeps=substeps, start=start, contacts=contacts)
    (piece,) = run.pieces(run.n_samples, progress)  # one piece: the whole run, no copy
    return sensor.record(piece.t, piece.q, piece.dq, piece.ddq, piece.tau,
                         np.random.default_rng(seed), {**run.metadata(), "seed": seed})


def closed_loop_pieces(robot: Robot, trajectory, *, duration: float,
                       rate: float | None = None,
                       natural_frequency: ArrayLike | None = None,
                       stiffness: ArrayLike | None = None, damping: ArrayLike | None = None,
                       controller: Controller | Robot | None = None,
                       sensor: SensorModel | None = None,
                       substeps: int | None = None, start: float = 0.0,
                       contacts: Sequence[Contact] | None = None,
                       piece_samples: int = PIECE_SAMPLES,
                       progress: Callable[[str], None] | None = None) -> Iterator[Dataset]:
    """The run of ``simulate_closed_loop`` (the same arguments), ``piece_samples`` samples at a
    time: the exact signals (positions, velocities, accelerations and the applied torques,
    before the sensor's noise), whatever the run's length in the memory of one piece. The
    encoders the controller reads act inside the loop (a ``Controller``'s own, or the
    ``sensor``'s resolution and velocity differencing with the shorthand keywords); the
    sensor's noise, bias, jitter and drops are not applied. The pieces joined
    are ``simulate_closed_loop``'s exact signals, bit for bit."""
    if not (isinstance(piece_samples, int) and piece_samples >= 1):
        raise ValueError(f"`piece_samples` must be an integer >= 1, got {piece_samples!r}")
    run = _ClosedLoop(robot, trajectory, duration=duration, rate=rate,
                      natural_frequency=natural_frequency, stiffness=stiffness,
                      damping=damping, controller=controller, sensor=sensor or SensorModel(),
                      substeps=substeps, start=start, contacts=contacts)
    return run.pieces(piece_samples, progress)



def _as_controller(robot: Robot, controller: Controller | Robot | None, *, rate, natural_frequency,
                   stiffness, damping, substeps, sensor: SensorModel) -> Controller:
    """The control law of a closed-loop run: ``controller`` itself, or the one the shorthand
    keywords describe (see ``simulate_closed_loop``)."""
    if isinstance(controller, Controller):
        given = [name for name, value in (("natural_frequency", natural_frequency),
                                          ("stiffness", stiffness), ("damping", damping),
                                          ("substeps", substeps)) if value is not None]
        if given:
            raise ValueError(f"`controller` is a Controller: set {', '.join(given)} in it, not "
                             "beside it")
        if rate is not None and rate != controller.rate:
            raise ValueError(f"`rate` ({rate!r:.30} Hz) differs from the controller's rate "
                             f"({controller.rate} Hz): leave it out")
        return controller
    if controller is not None and not isinstance(controller, Robot):
        raise TypeError(f"`controller` must be a Controller, a Robot (the model of the law) or "
                        f"None, got {type(controller).__name__}")
    model = robot if controller is None else controller
    encoders = {"rate": 1000.0 if rate is None else rate, "substeps": substeps,
                "resolution": sensor.position_resolution,
                "velocity_from_positions": bool(sensor.velocity_from_positions)}
    if stiffness is not None or damping is not None:
        if natural_frequency is not None:
            raise ValueError("give `natural_frequency` (computed torque) or `stiffness` and "
                             "`damping` (joint impedance), not both")
        if stiffness is None or damping is None:
            raise ValueError("a joint impedance needs both `stiffness` and `damping`")
        return Controller.impedance(stiffness, damping, model=model, **encoders)
    return Controller.computed_torque(
        model, 20.0 if natural_frequency is None else natural_frequency, **encoders)


class _ClosedLoop:
    """One closed-loop run's settings, checked, and its pieces (see ``simulate_closed_loop``)."""

    def __init__(self, robot: Robot, trajectory, *, duration: float, rate: float | None,
                 natural_frequency, stiffness, damping, controller: Controller | Robot | None,
                 sensor: SensorModel, substeps: int | None, start: float, contacts) -> None:
        _check(robot, trajectory)
        law = _as_controller(robot, controller, rate=rate, natural_frequency=natural_frequency,
                             stiffness=stiffness, damping=damping, substeps=substeps,
                             sensor=sensor)
        controller = law.model_for(robot)  # its model has the robot's joints
        n = robot.n_joints
        kp, kd = law.gains(n)
        self.gains = ({"stiffness": kp.tolist(), "damping": kd.tolist()} if law.is_impedance
                      else {"natural_frequency": np.sqrt(kp).tolist()})  # kp = w^2
        rate, substeps, impedance = law.rate, law.substeps, law.is_impedance
        self.law = law
        self.n_samples = sample_count(duration, rate)
        if substeps is None:
            substeps = rk4_substeps(robot, trajectory, duration=duration, rate=rate, start=start)
        self.robot, self.controller, self.trajectory = robot, controller, trajectory
        self.duration, self.rate, self.start, self.substeps = duration, rate, start, substeps
        self.impedance, self.sensor, self.contacts = impedance, sensor, contacts
        self.kp = np.ascontiguousarray(kp, dtype=float)
        self.kd = np.ascontiguousarray(kd, dtype=float)
        self.table = contact_table(robot, contacts)
        self.tracking = None  # squared tracking errors summed, once run

    def metadata(self) -> dict:
        """The log's metadata (after the run: its tracking error)."""
        last = sample_times(self.duration, self.rate, self.start,
                            rows=slice(self.n_samples - 2, None))
        extra = _contacts_metadata(self.robot, self.contacts, last)
        return {"robot": self.robot.name, "source": "digital twin (closed loop, "
                f"{'joint impedance' if self.impedance else 'computed torque'})",
                "rate_hz": self.rate, "rk4_substeps": self.substeps, **self.gains,
                "friction": self.robot.friction.name,
                "controller": self.controller.name if self.law.model is not None
                else "none (PD)",
                "tracking_rms": np.sqrt(self.tracking / self.n_samples).tolist(), **extra}

    def pieces(self, piece_samples: int,
               progress: Callable[[str], None] | None) -> Iterator[Dataset]:
        """The run, ``piece_samples`` samples at a time (exact signals)."""
        robot, n, total = self.robot, self.robot.n_joints, self.n_samples
        friction_code, friction_table = compiled_friction(robot.friction)
        truth, model = model_arrays(robot), model_arrays(self.controller)
        resolution = self.law.resolution
        from_positions = bool(self.law.velocity_from_positions)
        state, previous = None, np.zeros(n)  # previous: the last measured positions
        self.tracking = np.zeros(n)
        meter = Progress(progress, "closed-loop simulation", total)
        block = _FIRST_BLOCK
        for offset in range(0, total, piece_samples):
            t = sample_times(self.duration, self.rate, self.start,
                             rows=slice(offset, offset + piece_samples))
            q_d, dq_d, ddq_d = (np.ascontiguousarray(x, dtype=float)
                                for x in self.trajectory.sample(t))
            if state is None:  # from the reference state; a stateful friction at steady state
                z0 = (robot.friction.states_along(t[:1], dq_d[:1])[0]
                      if robot.friction.stateful else np.zeros(n))
                state = np.concatenate([q_d[0], dq_d[0], z0])
            q, dq, ddq, tau = (np.empty((t.size, n)) for _ in range(4))
            done = 0
            while done < t.size:
                began = time.perf_counter()
                status, at = run_block(
                    truth, model, friction_code, friction_table, q_d, dq_d, ddq_d, self.kp,
                    self.kd, self.impedance, resolution, from_positions, float(self.rate),
                    self.substeps, done, min(t.size, done + block), state, previous, q, dq,
                    ddq, tau, t, self.table, offset, total)
                if status == DIVERGED:
                    raise ClosedLoopError(
                        f"the closed loop diverged at t = {t[at]:.3f} s: lower the gains "
                        "(`natural_frequency`, or `stiffness` and `damping`) or raise `rate` / "
                        "`substeps`")
                if status == NOT_POSITIVE_DEFINITE:
                    raise ClosedLoopError(f"M(q) of `robot` is not positive definite at t = "
                                     f"{t[at]:.3f} s: check its parameters")
                done, block = at, _next_block(block, time.perf_counter() - began)
                meter.update(offset + done)
            self.tracking += np.sum((q - q_d) ** 2, axis=0)
            yield Dataset(t=t, q=q, dq=dq, tau=tau, ddq=ddq,
                          metadata={"source": "digital twin (closed loop, exact signals)"})


class Resimulation:
    """One reference tracked under one control law, simulated again with plant after plant of
    the same chain (``robot``'s joints): what the simulation-based identification methods do
    dozens of times per fit. The reference is sampled, the controller's model built and the
    arrays allocated once; each ``run`` is the compiled loop alone, the exact signals of
    ``simulate_closed_loop(plant, trajectory, duration=duration, start=start,
    controller=replace(controller, substeps=substeps))`` bit for bit (no sensor: the
    controller's own encoders act inside the loop). ``substeps`` tells how many RK4 steps a
    plant needs (``rk4_substeps``); the caller decides how often to ask."""

    def __init__(self, robot: Robot, trajectory, *, duration: float, controller: Controller,
                 start: float = 0.0) -> None:
        if not isinstance(robot, Robot):
            raise TypeError(f"`robot` must be a dynid Robot, got {type(robot).__name__}")
        if not isinstance(controller, Controller):
            raise TypeError(f"`controller` must be a dynid.simulate.Controller, got "
                            f"{type(controller).__name__}")
        _check(robot, trajectory)
        n = robot.n_joints
        self.robot, self.trajectory, self.law = robot, trajectory, controller
        self.duration, self.start = float(duration), float(start)
        self.n_samples = sample_count(duration, controller.rate)
        if self.n_samples < 2:
            raise ValueError(f"`duration`: {duration!r:.30} s at {controller.rate:g} Hz is "
                             "fewer than 2 samples")
        self.t = sample_times(duration, controller.rate, start)
        self.q_d, self.dq_d, self.ddq_d = (np.ascontiguousarray(x, dtype=float)
                                           for x in trajectory.sample(self.t))
        kp, kd = controller.gains(n)
        self.kp = np.ascontiguousarray(kp, dtype=float)
        self.kd = np.ascontiguousarray(kd, dtype=float)
        self.model = model_arrays(controller.model_for(robot))
        self.chain = tuple(chain_arrays(robot))
        self.no_contacts = contact_table(robot, None)

    def substeps(self, plant: Robot, *, step_times_rate: float | None = None) -> int:
        """The controller's own substeps when it states them, else the fewest RK4 steps per
        period for ``plant`` along the reference (``rk4_substeps``, with ``step_times_rate``
        when given)."""
        if self.law.substeps is not None:
            return self.law.substeps
        options = {} if step_times_rate is None else {"step_times_rate": step_times_rate}
        return rk4_substeps(plant, self.trajectory, duration=self.duration, rate=self.law.rate,
                            start=self.start, **options)

    def run(self, plant: Robot, substeps: int) -> Dataset:
        """The exact closed-loop signals of ``plant`` (``t``, ``q``, ``dq``, ``ddq`` and the
        applied ``tau``, ``(N, n)``) with ``substeps`` RK4 steps per control period; a
        ``ClosedLoopError`` where the loop diverges or ``M(q)`` is not positive definite."""
        if plant.n_joints != self.robot.n_joints:
            raise ValueError(f"`plant` has {plant.n_joints} joints, the loop's robot "
                             f"{self.robot.n_joints}")
        if isinstance(substeps, bool) or not (isinstance(substeps, (int, np.integer))
                                              and substeps >= 1):
            raise ValueError(f"`substeps` must be an integer >= 1, got {substeps!r:.40}")
        n, total = plant.n_joints, self.n_samples
        chain = self.chain if plant.joints is self.robot.joints else tuple(chain_arrays(plant))
        truth = (*chain, np.array(plant.parameters, order="C"),
                 np.array(plant.gravity, dtype=float),
                 np.array(plant.rotor_inertia, dtype=float))
        friction_code, friction_table = compiled_friction(plant.friction)
        z0 = (plant.friction.states_along(self.t[:1], self.dq_d[:1])[0]
              if plant.friction.stateful else np.zeros(n))
        state = np.concatenate([self.q_d[0], self.dq_d[0], z0])
        previous = np.zeros(n)
        q, dq, ddq, tau = (np.empty((total, n)) for _ in range(4))
        done = 0
        while done < total:  # in blocks: Ctrl-C is seen between them
            status, at = run_block(
                truth, self.model, friction_code, friction_table, self.q_d, self.dq_d,
                self.ddq_d, self.kp, self.kd, self.law.is_impedance, self.law.resolution,
                bool(self.law.velocity_from_positions), float(self.law.rate), int(substeps),
                done, min(total, done + _MAX_BLOCK), state, previous, q, dq, ddq, tau, self.t,
                self.no_contacts, 0, total)
            if status == DIVERGED:
                raise ClosedLoopError(f"the closed loop diverged at t = {self.t[at]:.3f} s")
            if status == NOT_POSITIVE_DEFINITE:
                raise ClosedLoopError(f"M(q) of `plant` is not positive definite at t = "
                                      f"{self.t[at]:.3f} s")
            done = at
        return Dataset(t=self.t, q=q, dq=dq, ddq=ddq, tau=tau,
                       metadata={"source": "digital twin (closed loop, exact signals)"})
