"""Kalman filters on the joint state-parameter model: EKF, square-root EKF, UKF, square-root
UKF (BIRDy's DDIM family: Leboutet et al. 2021, "Inertial parameter identification in
robotics: a survey", Applied Sciences 11(9), 2021; the filters of ``_kalman_kernel``).

The state is ``x = [q, dq, theta]`` with ``theta`` the *base parameters* of the robot's linear
model (rigid body, rotor inertias when identified, and the coefficients of a linear friction
model: viscous + Coulomb + offset, or Szabó's arctan with its fixed shape constants; the
layout of ``identify``), so every entry of ``theta`` is identifiable; the dynamics use their
equivalent full parameters. The process is the forward dynamics driven by the measured
torque over one sample period (a Rosenbrock step, ROS2, compiled: stable under the steep
slope of a smoothed Coulomb term, ``_kalman_kernel._step``), the torque linear between two
samples (``torque_hold="linear"``, a sampled continuous torque) or held (``"zero"``, the
staircase of a torque commanded once per sample, as the closed-loop twin logs it); the
measurement the positions and, unless ``velocity_std=None``, the velocities. Every sample's
work runs in a compiled kernel, a chunk of samples per call sized to about ``CHUNK_SECONDS``
(0.1 s): between chunks Python runs, so that progress shows and a Ctrl-C or SIGTERM stops a
long log at once (the state carried over: the same numbers as one call).

Cost: the EKF's ``F`` has exact ``theta`` columns (the dynamics are linear in ``theta``:
``_kalman_kernel._sensitivities``), forward differences over the 2n states, and ``F P F^T``
and Joseph's update use the structure of ``F`` and ``H`` (O(L^2 n), not O(L^3)): on the
Panda's twin (L = 78) 0.21 ms CPU a sample, 3*10^4 samples in 6.1-6.7 s of CPU (the shared
2-core machine; wall 9.5-20 s under its load of 5-8, 53 s beside two busy loops besides),
against 0.9-1.1 ms (27-33 s) with central differences of the whole step over every state
(wall 61 s, 173 s beside the busy loops, extrapolated from 3000 samples); the estimates agree
to the digits (8.4693 against 8.4695 % after 5 s; ``dynid bench --suite filters``). The UKF
steps 2 L + 1 sigma points a sample: 2.7-7 ms a sample on the Panda.

- ``KalmanFilter``: the online object, ``update(q, dq, ddq, tau)`` with ``(n,)`` or ``(k, n)``
  arrays (``ddq`` is not used: the filter integrates the dynamics; it may be None), the
  current ``coefficients``, ``std``, ``covariance``, ``state`` and ``n_samples``.
- ``identify_kalman(robot, logs, method=...)``: the batch face (the estimator contract), each
  log filtered from its first sample with the estimate carried on; ``decimate`` keeps every
  d-th sample (the torque between two kept samples linear, or with ``torque_hold="zero"`` the
  kept sample's held over d periods: an approximation that grows with d; on the Panda, held,
  d = 5 left 4 % error where d = 1 left 0.2 %).

The start: ``start`` link parameters ``(n, 10)`` (``Problem.start``; default the robot's own,
its nominal values), rotor inertias the robot's, friction coefficients zero (the robot's when
its model has the same columns: the same type and shape constants); its std
``parameter_std`` times each base parameter's size (not below ``parameter_std`` times 1e-3
of the largest rigid-body one: a parameter the start says is zero stays near it unless the
data insist), ``friction_std`` [N m, N m s/rad] for the friction coefficients.

What they achieve (measured with Heun's step and the torque held, before the Rosenbrock step
and the linear hold; on this workplace's shared 2-core machine, one BLAS thread; start:
the link parameters with 15 % Gaussian errors, friction at the truth, 7.8 % relative error of
the base parameters; the Panda's closed-loop twin on a 10 s random Fourier reference at 1 kHz,
L = 78): with torque noise 0.05 N m (``torque_std=0.05``) EKF 0.94 % relative error in 5.1 s,
SR-EKF the same in 7.6 s, UKF 0.78 % in 12 s, SR-UKF the same in 8.9 s (OLS on the same log,
with its exact accelerations: 0.18 %); noise-free EKF 0.19 %, UKF 0.14 %. The square-root
forms agree with theirs to 1e-6 (EKF) and 1e-9 (UKF). On the 3-DoF arm (6 s, 24 parameters,
friction from zero) EKF 2 %, UKF 0.05 %. The EKF is the fragile one: its first corrections,
from a linearisation where ``M(q)`` is nearly singular or a joint sticks, can overshoot into
an indefinite ``M(q)`` (the arm at ``velocity_std=1e-2``, the Panda at ``1e-3``), which the
filter reports (``KalmanDivergedError``, ``converged=False``); the UKF ran in every setting
tried.

On BIRDy's TX40 protocol (``dynid.benchmark``: the truth's Coulomb term smoothed as
``fc (2/pi) atan(30 dq)``, identified with the ``Arctan`` columns; the filtered log
decimated to 100 Hz, 901 samples; the defaults; 3 draws of 15 % link errors per profile, the
start's friction the nominal robot's; shared 2-core machine), the relative error of the
rigid-body and rotor base parameters, EKF / UKF (OLS on the same log): lowPositionNoise
0.36 / 0.35 % (0.90 %), standardNoise 0.37-0.42 % both (0.88 %), highTorqueNoise
0.94-1.0 % both (0.81 %), highPositionNoise 0.27 / 0.26 % (22 %), highPositionTorqueNoise
1.2 % both (18 %), lowPositionHighTorqueNoise 1.6-1.8 % (1.3 %), the EKF diverging in 1
draw of 3 there (4.4 %); the square-root forms the same to the digits shown. A fit took
0.5-1.9 s (EKF about 0.5-1.3 s, UKF 1.0-1.9 s, SR-UKF 0.7-1.6 s). The step matters there:
with Heun's step (ROS2 with ``D = 0``) the EKF diverged at sample 420 (27 %) and the UKF
ended at 5.9 % on standardNoise; with the torque held instead of linear, every filter
diverged within 0.3 s (``M`` indefinite). From zero friction (the TX40's Coulomb levels are
up to 7.8 N m) every filter diverged at the default ``friction_std`` of 1 N m; at 10 N m the
UKF ended at 0.25-0.36 % (2 draws, standardNoise and highPositionNoise) and the EKF still
diverged.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._progress import Progress
from dynid._validation import as_float_array, as_link_table, as_vector
from dynid.data.dataset import Dataset
from dynid.dynamics._chain import chain_arrays
from dynid.friction.models import Arctan, FrictionModel, NoFriction, ViscousCoulomb
from dynid.identification.estimate import Estimate
from dynid.identification.linear.idim import linear_template
from dynid.identification.recursive import _kalman_kernel as kernels
from dynid.identification.recursive._threads import one_blas_thread
from dynid.identification.recursive.rls import joint_block
from dynid.model.linear_model import LinearModel
from dynid.robot import Robot

__all__ = ["KALMAN_METHODS", "KalmanDivergedError", "KalmanFilter", "friction_law",
           "identify_kalman", "log_poses_check"]

KALMAN_METHODS = {"ekf": kernels.EKF, "srekf": kernels.SREKF, "ukf": kernels.UKF,
                  "srukf": kernels.SRUKF}
_STATUS = {kernels.NOT_DEFINITE: "M(q) or a covariance lost positive definiteness",
           kernels.NOT_FINITE: "the state became NaN or infinite"}
# the compiled filter runs a chunk of samples per call, sized to take about this long [s]:
# between two calls Python runs, so that a Ctrl-C or SIGTERM (a KeyboardInterrupt from the
# command line's handler) ends a long log within a fraction of a second, and progress shows;
# the state is carried from chunk to chunk (the same numbers as one call)
CHUNK_SECONDS = 0.1
_FIRST_CHUNK, _MAX_CHUNK = 16, 1 << 16
# a parameter's variance this many times its start's: the covariance has diverged (without
# drift the filter's parameter covariance can only shrink: the prediction leaves it as it is,
# every update lowers it)
COVARIANCE_GROWTH = 1e4
# poses of a log on which the final estimate's M(q) must be positive definite (evenly spread)
BODY_POSES = 1000



def friction_law(friction: FrictionModel) -> tuple[NDArray, NDArray]:
    """``(codes (k,), shapes (k, n))``: the columns of a linear friction model as the kernel
    evaluates them (``_kalman_kernel``: ``VELOCITY``, ``SIGN``, ``ONE``, ``ATAN`` with its
    shape constant [s/rad]), in the model's coefficient order; a ValueError naming `friction`
    for a model whose columns are not fixed functions of the velocity."""
    n = friction.n_joints
    zero = np.zeros(n)
    if type(friction) is NoFriction:
        return np.zeros(0, dtype=np.int64), np.zeros((0, n))
    if type(friction) is ViscousCoulomb:
        codes = (kernels.VELOCITY, kernels.SIGN, kernels.ONE)
        shapes = (zero, zero, zero)
    elif type(friction) is Arctan:
        codes = (kernels.ATAN, kernels.ATAN, kernels.VELOCITY)
        shapes = (friction.k_v, friction.delta, zero)
    else:
        raise ValueError("`friction` must be a linear model whose columns are fixed functions "
                        "of the joint velocity (ViscousCoulomb, Arctan or NoFriction), got "
                        f"{type(friction).__name__}")
    return np.array(codes, dtype=np.int64), np.array(shapes, dtype=float)


def _same_columns(one: FrictionModel, other: FrictionModel) -> bool:
    """Whether two friction models have the same columns (type and shape constants)."""
    if type(one) is not type(other) or one.n_joints != other.n_joints:
        return False
    return all(np.array_equal(a, b) for a, b in zip(friction_law(one), friction_law(other),
                                                    strict=True))


class KalmanDivergedError(ValueError):
    """A filter could not go on: the estimate made ``M(q)`` or its covariance indefinite, or
    the state non-finite (too large a ``parameter_std``, too small a process noise)."""


def _positive(name: str, value, length: int, *, zero: bool = False) -> NDArray:
    out = as_vector(name, value, length)
    if not ((out >= 0).all() if zero else (out > 0).all()):
        raise ValueError(f"`{name}` must be {'>= 0' if zero else '> 0'}, got {out}")
    return out


class KalmanFilter:
    """One of ``KALMAN_METHODS`` on ``robot``'s joint state-parameter model (see the module).

    ``rate`` [Hz]: the sample rate of blocks fed without times. ``position_std`` [rad],
    ``velocity_std`` [rad/s] (None: positions only are measured): the measurement noise.
    ``process_std``: ``(position, velocity)`` std of the process noise per step [rad, rad/s]
    (the step's error); ``torque_std`` [N m] (scalar or (n,)): the measured torque's noise,
    entering through the step; a joint whose velocity changes sign or is within
    ``stick_band`` [rad/s] of zero over a step has twice its Coulomb level added (the friction
    may switch inside the step: ``_kalman_kernel.filter_block``); ``parameter_drift``: the std of
    ``theta``'s random walk per step, relative to its start std (0: constant parameters).
    ``friction``: a linear model whose columns are fixed functions of the velocity,
    ``ViscousCoulomb`` (default), ``Arctan`` (its shape constants kept, its coefficients
    identified) or ``NoFriction`` (``friction_law``; another model: a ValueError).
    ``torque_hold``: ``"linear"`` (the torque linear between two samples: a sampled continuous
    torque, a filtered or decimated log) or ``"zero"`` (held over the period: a torque
    commanded once per sample, as the closed-loop twin logs it). ``alpha``, ``beta``,
    ``kappa``: the unscented transform's (UKF, SR-UKF).
    """

    def __init__(self, robot: Robot, *, method: str = "ekf", rate: float = 1000.0,
                 start: ArrayLike | None = None, parameter_std: float = 0.15,
                 friction_std: float = 1.0, position_std: float = 1e-4,
                 velocity_std: float | None = 1e-2,
                 process_std: tuple[float, float] = (1e-7, 1e-4), torque_std: ArrayLike = 0.0,
                 stick_band: float = 0.02,
                 parameter_drift: float = 0.0, friction: FrictionModel | None = None,
                 rotor_inertia: bool | None = None, torque_hold: str = "linear",
                 alpha: float = 0.1, beta: float = 2.0, kappa: float = 0.0) -> None:
        if not isinstance(robot, Robot):
            raise TypeError(f"`robot` must be a dynid Robot, got {type(robot).__name__}")
        if method not in KALMAN_METHODS:
            raise ValueError(f"`method` must be one of {sorted(KALMAN_METHODS)}, got "
                             f"{method!r:.40}")
        n = robot.n_joints
        friction = ViscousCoulomb.zeros(n) if friction is None else friction
        if not isinstance(friction, FrictionModel):
            raise TypeError(f"`friction` must be a dynid friction model, got "
                            f"{type(friction).__name__}")
        self._law = friction_law(friction)
        if friction.n_joints != n:
            raise ValueError(f"`friction` must describe the robot's {n} joints, got "
                             f"{friction.n_joints}")
        if torque_hold not in ("zero", "linear"):
            raise ValueError(f"`torque_hold` must be 'zero' or 'linear', got "
                             f"{torque_hold!r:.40}")
        self.torque_hold = torque_hold
        rotor = bool(robot.rotor_inertia.any()) if rotor_inertia is None else rotor_inertia
        self.method = method
        self.rate = float(_positive("rate", rate, 1)[0])
        self.template = linear_template(robot, friction, rotor_inertia=rotor)
        base = self.template.base
        links = robot.parameters if start is None else as_link_table("start", start, n)
        known = np.zeros(self._law[0].size * n)
        if known.size and _same_columns(friction, robot.friction):
            known = np.asarray(robot.friction.coefficients, dtype=float)
        full = np.concatenate([np.ravel(links), robot.rotor_inertia if rotor else [], known])
        theta = base.base(full)
        relative = float(_positive("parameter_std", parameter_std, 1)[0])
        absolute = float(_positive("friction_std", friction_std, 1)[0])
        stop = 10 * n + (n if rotor else 0)
        rigid = base.independent < stop
        size = np.abs(theta)
        floor = 1e-3 * (size[rigid].max() if rigid.any() else 1.0)
        self.start_std = np.where(rigid, relative * np.maximum(size, floor), absolute)
        self.position_std = float(_positive("position_std", position_std, 1)[0])
        self.velocity_std = None if velocity_std is None else float(
            _positive("velocity_std", velocity_std, 1)[0])
        steps = as_vector("process_std", process_std, 2)
        if not (steps > 0).all():
            raise ValueError(f"`process_std` must be two numbers > 0, got {steps}")
        drift = float(_positive("parameter_drift", parameter_drift, 1, zero=True)[0])
        self.torque_std = _positive("torque_std", torque_std, n, zero=True)
        self.stick_band = float(_positive("stick_band", stick_band, 1, zero=True)[0])
        self._process = np.concatenate([np.full(n, steps[0]), np.full(n, steps[1]),
                                        drift * self.start_std])
        m = 2 * n if self.velocity_std is not None else n
        self._noise = np.concatenate([np.full(n, self.position_std),
                                      np.full(m - n, self.velocity_std or 0.0)])
        for name, value in (("alpha", alpha), ("beta", beta), ("kappa", kappa)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not np.isfinite(value):
                raise ValueError(f"`{name}` must be a finite number, got {value!r:.40}")
        size_x = 2 * n + base.rank
        spread = alpha**2 * (size_x + kappa)
        if not (0 < alpha <= 1 and spread > 0):
            raise ValueError(f"`alpha` must be in (0, 1] with alpha^2 (L + kappa) > 0, got "
                             f"alpha {alpha}, kappa {kappa}")
        lam = spread - size_x
        self._gamma = float(np.sqrt(spread))
        self._wm = np.array([lam / spread, 0.5 / spread])
        self._wc = np.array([lam / spread + 1 - alpha**2 + beta, 0.5 / spread])
        self._x = np.concatenate([np.zeros(2 * n), theta])
        self._initial_state_variance = np.concatenate([
            np.full(n, self.position_std**2), np.full(n, (self.velocity_std or 1.0) ** 2)])
        variances = np.concatenate([self._initial_state_variance, self.start_std**2])
        square_root = method in ("srekf", "srukf")
        self._p = np.diag(np.sqrt(variances) if square_root else variances)
        self._last_tau = np.zeros(n)
        self._started = np.zeros(1, dtype=np.int64)
        self._count = np.zeros(1, dtype=np.int64)
        self._chain = tuple(chain_arrays(robot))
        self._gravity = np.array(robot.gravity, dtype=float)
        self._independent = np.array(base.independent, dtype=np.int64)
        self._n_rotor = n if rotor else 0
        self._chunk = _FIRST_CHUNK
        self._limit = COVARIANCE_GROWTH * self.start_std**2

    def _grown(self) -> str:
        """Which parameter's variance has grown past ``COVARIANCE_GROWTH`` times its start's
        (or is not finite), in words; "" when none. With ``parameter_drift`` the random walk
        may grow it legitimately: the limit then grows with the samples seen."""
        n2 = 2 * self.robot.n_joints
        if self.method in ("srekf", "srukf"):  # P = S S^T
            variance = np.einsum("ij,ij->i", self._p[n2:], self._p[n2:])
        else:
            variance = np.diag(self._p)[n2:].copy()
        drift = self._process[n2:] ** 2 * self.n_samples
        over = ~(variance <= self._limit + COVARIANCE_GROWTH * drift)
        if not over.any():
            return ""
        k = int(np.flatnonzero(over)[0])
        return (f"the variance of {self.template.base.base_names[k]} is "
                f"{variance[k]:.3g}, {variance[k] / self.start_std[k] ** 2:.3g} times its "
                "start's")

    @property
    def robot(self) -> Robot:
        return self.template.robot

    def restart(self) -> None:
        """Start a new run (another log, the robot restarted): the next sample sets ``q, dq``
        with their measurement variance, uncorrelated with ``theta``; the parameters' estimate
        and covariance are kept."""
        if not self._started[0]:
            return
        n2 = 2 * self.robot.n_joints
        square = self.method in ("srekf", "srukf")
        states = self._initial_state_variance
        if square:
            factor = kernels._lower_factor(self._p[n2:, :])  # P_theta = rows rows^T
            self._p[:] = 0.0
            self._p[n2:, n2:] = factor
            self._p[:n2, :n2] = np.diag(np.sqrt(states))
        else:
            keep = self._p[n2:, n2:].copy()
            self._p[:] = 0.0
            self._p[n2:, n2:] = keep
            self._p[:n2, :n2] = np.diag(states)
        self._started[0] = 0

    @property
    def n_samples(self) -> int:
        return int(self._count[0])

    @property
    def state(self) -> NDArray:
        """``[q, dq, theta]`` now."""
        return self._x.copy()

    @property
    def covariance(self) -> NDArray:
        """The state's covariance ``P`` (L, L)."""
        if self.method in ("srekf", "srukf"):
            return self._p @ self._p.T
        return self._p.copy()

    @property
    def coefficients(self) -> NDArray:
        return self._x[2 * self.robot.n_joints:].copy()

    @property
    def std(self) -> NDArray:
        n = self.robot.n_joints
        return np.sqrt(np.maximum(np.diag(self.covariance)[2 * n:], 0.0))

    @property
    def model(self) -> LinearModel:
        return dataclasses.replace(
            self.template, coefficients=self.coefficients, std=self.std,
            # the filter's P: linearised, under the process noise it assumed
            report={"method": self.method, "std_kind": "lower bound",
                    "n_samples": self.n_samples})

    def update(self, q: ArrayLike, dq: ArrayLike, ddq: ArrayLike | None, tau: ArrayLike, *,
               periods: ArrayLike | None = None, every: int = 0,
               progress: Callable[[int], None] | None = None) -> tuple[NDArray, NDArray]:
        """Feed one sample ``(n,)`` or a block ``(k, n)`` (finite; ``ddq`` unused, may be
        None). ``periods`` (k,): the time from each sample's predecessor [s] (default
        ``1 / rate``). ``every`` > 0: return ``theta`` and its std at every ``every``-th
        sample seen. ``progress``: called with the block's samples done after each chunk
        (``CHUNK_SECONDS``). A ``KalmanDivergedError`` where the filter cannot go on: the
        kernel's (``M(q)`` or a covariance indefinite, a state not finite) or a parameter's
        variance grown ``COVARIANCE_GROWTH`` times its start's (the samples before it kept)."""
        n = self.robot.n_joints
        # writable C arrays whatever the caller's (a read-only log is another type to numba:
        # another compilation, a minute or more)
        q, dq, tau = (np.require(a, requirements=("C", "W"))
                      for a in joint_block(n, q=q, dq=dq, tau=tau))
        if ddq is not None:
            joint_block(n, ddq=ddq)
        count = q.shape[0]
        if periods is None:
            steps = np.full(count, 1.0 / self.rate)
        else:
            steps = as_float_array("periods", periods).reshape(-1)
            if steps.shape != (count,) or not (steps > 0).all():
                raise ValueError(f"`periods` must be {count} times > 0 s, got {steps!r:.60}")
        seen = self.n_samples
        rows = (seen + count) // every - seen // every if every > 0 else 0
        r = self.template.base.rank
        history, history_std = np.empty((rows, r)), np.empty((rows, r))
        recorded = np.zeros(1, dtype=np.int64)
        done = 0
        with one_blas_thread():
            while done < count:
                stop = min(count, done + self._chunk)
                began = time.perf_counter()
                status, where = kernels.filter_block(
                    KALMAN_METHODS[self.method], self._chain, self._gravity,
                    self._independent, self._n_rotor, self._law, self.torque_hold == "linear",
                    self._x, self._p, self._last_tau, self._started, q[done:stop],
                    dq[done:stop], tau[done:stop], np.ascontiguousarray(steps[done:stop]),
                    self.velocity_std is not None, self._noise, self._process,
                    self.torque_std, self.stick_band, self._gamma, self._wm, self._wc,
                    int(every), self._count, history, history_std, recorded)
                if status != kernels.OK:
                    raise KalmanDivergedError(
                        f"{self.method}: {_STATUS[status]} at sample {seen + done + where} "
                        "(its estimate stays at the sample before)")
                self._chunk = _next_chunk(self._chunk, stop - done,
                                          time.perf_counter() - began)
                done = stop
                grown = self._grown()
                if grown:
                    raise KalmanDivergedError(
                        f"{self.method}: the covariance diverged by sample "
                        f"{self.n_samples - 1} ({grown})")
                if progress is not None:
                    progress(done)
        return history, history_std


def _next_chunk(chunk: int, samples: int, seconds: float) -> int:
    """The next chunk's size: ``CHUNK_SECONDS`` at the last chunk's pace, at most doubled."""
    if samples < chunk:  # a short block says little about the pace
        return chunk
    pace = seconds / samples
    wanted = CHUNK_SECONDS / pace if pace > 0 else 2 * chunk
    return int(min(max(wanted, 1), 2 * chunk, _MAX_CHUNK))


def identify_kalman(robot: Robot, logs: Dataset | Sequence[Dataset], *, method: str = "ekf",
                    decimate: int = 1, history_rate: float = 50.0,
                    start: ArrayLike | None = None,
                    progress: Callable[[str], None] | None = None, **options) -> Estimate:
    """A Kalman filter (``method`` of ``KALMAN_METHODS``) over ``logs`` (see the module);
    ``options``: ``KalmanFilter``'s. ``decimate``: keep every d-th sample. The ``Estimate``'s
    model holds the final ``theta`` and its std; ``details["history"]`` the estimate at about
    ``history_rate`` Hz; ``progress``: lines (``dynid._progress``) every 2 s or so.

    ``converged`` (and ``status``, the reason): the filter ran to the end without diverging
    (``M(q)`` or a covariance indefinite, a state not finite, a parameter's variance grown
    ``COVARIANCE_GROWTH`` times its start's: the run ends there, with the estimate before),
    *and* the final estimate is a body on the logs' own poses: ``M(q)`` positive definite on
    ``BODY_POSES`` of them (the filter checks ``M`` only at the estimate of each instant; an
    estimate that drifted can end indefinite on poses it passed long before)."""
    logs = _torque_logs(logs)
    if isinstance(decimate, bool) or not isinstance(decimate, int) or decimate < 1:
        raise ValueError(f"`decimate` must be an integer >= 1, got {decimate!r:.40}")
    if not (isinstance(history_rate, (int, float)) and history_rate > 0):
        raise ValueError(f"`history_rate` must be > 0 Hz, got {history_rate!r:.40}")
    for k, log in enumerate(logs):
        if log.n_joints != robot.n_joints:
            raise ValueError(f"`logs[{k}]` has {log.n_joints} joints, `robot` {robot.n_joints}")
    first = logs[0]
    rate = (first.n_samples - 1) / first.duration / decimate if first.n_samples > 1 else 1.0
    flt = KalmanFilter(robot, method=method, rate=rate, start=start, **options)
    every = max(1, round(rate / history_rate))
    times, values, stds = [], [], []
    status, converged = "filtered every sample", True
    total = sum(-(-log.n_samples // decimate) for log in logs)
    counter = Progress(progress, f"{method}: samples filtered", total)
    for k, log in enumerate(logs):
        kept = log.select(slice(None, None, decimate))
        periods = np.diff(kept.t, prepend=kept.t[0] - 1.0 / rate)
        flt.restart()  # each log from its own first sample, the estimate carried on
        seen = flt.n_samples
        try:
            history, history_std = flt.update(
                kept.q, kept.dq, None, kept.tau, periods=periods, every=every,
                progress=lambda done, seen=seen: counter.update(seen + done))
        except KalmanDivergedError as error:
            status, converged = f"diverged: log {k + 1}: {error}", False
            break
        picked = np.arange(every - 1 - seen % every, kept.n_samples, every)[: history.shape[0]]
        times.append(kept.t[picked])
        values.append(history)
        stds.append(history_std)
    body = log_poses_check(flt.model, logs)
    if not body["positive"]:
        word = ("not a body: the estimate's M(q) is not positive definite on "
                f"{100 * (1 - body['positive_fraction']):.3g} % of {body['n_samples']} of the "
                f"logs' poses (smallest eigenvalue {body['min_eigenvalue']:.3g})")
        status = word if converged else f"{status}; {word}"
        converged = False
    model = dataclasses.replace(flt.model, report={**flt.model.report, "converged": converged,
                                                   "convergence": status,
                                                   "mass_matrix_on_log_poses": body})
    r = flt.template.base.rank
    return Estimate(
        method, model, 0.0, converged, status, iterations=flt.n_samples,
        details={"history": {"t": np.concatenate(times) if times else np.empty(0),
                             "coefficients": np.concatenate(values) if values
                             else np.empty((0, r)),
                             "std": np.concatenate(stds) if stds else np.empty((0, r))},
                 "decimate": decimate, "n_samples": flt.n_samples,
                 "mass_matrix_on_log_poses": body})


def log_poses_check(model: LinearModel, logs: Sequence[Dataset], *,
                    n_poses: int = BODY_POSES) -> dict:
    """Whether ``model`` is a body where the logs went: ``M^(q)`` (rotor inertias included)
    positive definite on ``n_poses`` poses spread evenly over all the logs' samples (all of
    them when fewer); ``{n_samples, positive_fraction, min_eigenvalue, positive}`` as
    ``dynid.evaluation.model_mass_matrix_check``. A non-finite ``M^`` is no body."""
    poses = np.concatenate([log.q for log in logs])
    if poses.shape[0] > n_poses:
        poses = poses[np.linspace(0, poses.shape[0] - 1, n_poses).round().astype(int)]
    with np.errstate(over="ignore", invalid="ignore"):
        mass = model.mass_matrix(poses)
        finite = np.isfinite(mass).all(axis=(1, 2))
        smallest = np.full(poses.shape[0], -np.inf)
        if finite.any():
            smallest[finite] = np.linalg.eigvalsh(mass[finite])[:, 0]
    return {"n_samples": int(poses.shape[0]), "positive_fraction": float(np.mean(smallest > 0)),
            "min_eigenvalue": float(smallest.min()), "positive": bool((smallest > 0).all())}


def _torque_logs(logs) -> list[Dataset]:
    """The logs (no ``ddq`` needed), torque logs only."""
    listed = [logs] if isinstance(logs, Dataset) else list(logs) if isinstance(
        logs, (list, tuple)) else None
    if not listed or not all(isinstance(log, Dataset) for log in listed):
        raise ValueError("`logs` must be a Dataset or a non-empty list of Datasets")
    for k, log in enumerate(listed):
        if log.effort != "torque":
            raise ValueError(f"`logs[{k}]` holds motor currents: the filters need torques")
    return listed
