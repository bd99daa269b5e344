"""BIRDy's Monte-Carlo protocol (Leboutet et al. 2021, github TUM-ICS/BIRDy) as data: the noise
profiles, the PD loop of each simulated robot, the experiment (an excitation trajectory tracked
by the closed-loop twin, logged with noise), and the initial estimates drawn around the truth.

- ``PROFILES``: BIRDy names five noise profiles (``RV2SQ.m``'s ``options.noiseLevel``): position
  noise sigma_q 1e-4, 1e-3 or 1e-2 deg and torque noise sigma_tau 0.05 or 0.1 N m per joint.
  The issue asks for six: the sixth, ``lowPositionHighTorqueNoise`` (1e-4 deg, 0.1 N m),
  completes the 3 x 2 grid of the two noise levels.
- ``CONTROL``: BIRDy's control law (``computeControlInput.m``) is a PD loop without feedforward,
  ``tau = Ktau (Kp (q_d - q) + Kd (dq_d - dq))`` (its integral gain is zero): a joint impedance
  of stiffness ``Ktau Kp`` [N m/rad] and damping ``Ktau Kd`` [N m s/rad]. The gains are
  BIRDy's (``TX40.m``, ``RV2SQ.m``): they have no place in a robot file. BIRDy controls at
  5 kHz and logs at 1 kHz (TX40) or 140 Hz (RV-2SQ). Here the TX40's loop runs at its 1 kHz
  sampling rate, so that the simulation-based methods, which re-simulate one control period
  per logged sample, re-simulate the loop that ran: with the truth at 5 kHz and the
  re-simulation at 1 kHz, DIDIM, CLOE and CLIE stop on the mismatch (TX40, high torque
  noise: DIDIM "no step lowers the error" at 0.41 % parameter error; at 1 kHz it converges,
  0.27 %, OLS 1.7 %). The gains are stable there (the fastest closed-loop mode, the wrist's
  ``sqrt(K / (I + Ia))`` = 450 rad/s, is 0.45 rad per period). The RV-2SQ keeps BIRDy's
  140 Hz log and fast control (5040 Hz: 36 periods per logged sample, the nearest to 5 kHz):
  its stiff loop needs it, and the simulation-based methods
  are skipped on it (``runner.skip_reason``).
- ``experiment``: one excitation trajectory per benchmark (a random Fourier trajectory within
  the robot's limits, seeded), tracked by the truth under that PD loop (``simulate_closed_loop``
  with a controller model of zero parameters: a pure PD loop), run once; its exact signals are
  shared by every noise profile, draw and method. A second trajectory (another seed) is the
  validation log, noise free. BIRDy re-injects the noisy positions into its loop; dynid's twin
  feeds back the exact state, so the noise here is the sensors' alone (``noisy_log``).
- ``simulated_truth``: the truth's Coulomb friction ``fc sign(dq)`` is simulated as ``fc (2/pi)
  atan(SMOOTH_COULOMB dq)`` (dynid's ``arctan`` model, Szabó 2021 eq. 7). With the sign function
  the PD loop chatters at every velocity reversal (an artefact of a discontinuous model in a
  discrete-time loop): on the TX40 (measured at 5 kHz control) the accelerations differentiated
  from the 1 kHz velocities then miss the simulated ones by 60-99 % RMS, and IDIM-OLS on
  noise-free data errs by 26 % in its parameters; with the smooth model the miss is 2-8 % and
  the noise-free error about 1 %. The smoothing also sets the plant's fastest dynamics, so the
  RK4 steps per control period of every simulation (the twin's, and each re-simulation of the
  simulation-based methods): TX40, 1 kHz loop, ``SMOOTH_COULOMB`` = 100 s/rad: 20 steps,
  IDIM-OLS noise-free 1.7 %, a CLOE fit 9.7 s; 30 s/rad: 7 steps, 0.38 %, 4.0 s; 15 s/rad: 4
  steps, 0.65 %, 2.9 s. The methods identify with the same model's linear columns
  (``Problem.friction``), as BIRDy identifies with its data-generation friction model.
- ``noisy_log``: one log per noise profile, shared by every draw and method: Gaussian noise on
  the logged positions and torques, velocities as backward differences of the noisy positions
  (as BIRDy's ``discreteTimeDerivative``), then dynid's preprocessing (``prepare``: a
  zero-phase Butterworth low-pass at ``CUTOFF_HZ``, differentiation for the accelerations,
  trimmed ends). ``CUTOFF_HZ`` = 20 Hz passes the PD loop's own dynamics (the default 5 Hz of
  ``prepare`` cuts them: 7 % parameter error without noise on the TX40) and lets the position
  noise through to the accelerations as BIRDy's profiles intend (TX40, IDIM-OLS: 1.2 % at
  1e-4 deg, 20 % at 1e-2 deg). The filtered log is then decimated to ``DECIMATED_RATE``
  (parallel decimation, as in Gautier's IDIM practice): the 20 Hz signal loses nothing (TX40,
  IDIM-OLS and CLS-3: the same errors to 2-3 digits) and every method fits a tenth of the
  samples (NLS 3-8 times faster). The simulation-based methods (those that need the
  controller and no accelerations: DIDIM, CLOE, CLIE) simulate the loop once per logged sample
  and read the same noisy log unfiltered at the sampling rate (``raw_log``), with the PD loop
  as a ``dynid.simulate.Controller`` at that rate.
- ``draw_starts``: the initial estimates, each of the truth's link parameters times
  ``1 + spread * N(0, 1)`` (BIRDy: 15 %), seeded; a link drawn physically inconsistent is drawn
  again (the consistent methods need a physical start). ``draw_drive_starts``: the friction
  coefficients and rotor inertias drawn the same way (BIRDy draws the whole parameter vector).
  The draws change only the start of a method (``Problem.start``) and the nominal parameters
  it is given (the robot's: its friction and rotor inertias, from which the Kalman filters
  and the simulation-based methods start, and its links, from which the constrained methods'
  prior and derived bounds come): never the data.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dynid.data.dataset import Dataset
from dynid.robot import Robot
from dynid.robot.inertia import MASS, physical_margin

__all__ = [
    "CONTROL",
    "CUTOFF_HZ",
    "DECIMATED_RATE",
    "DEFAULT_DRAWS",
    "DEFAULT_DURATION",
    "DEFAULT_SPREAD",
    "PROFILES",
    "SMOOTH_COULOMB",
    "ControlGains",
    "DriveStart",
    "Experiment",
    "NoiseProfile",
    "control_gains",
    "draw_drive_starts",
    "draw_starts",
    "experiment",
    "noisy_log",
    "nominal_robot",
    "profile",
    "raw_log",
    "simulated_truth",
]

DEFAULT_DRAWS = 25       # BIRDy: 25 initial estimates per noise profile
DEFAULT_SPREAD = 0.15    # BIRDy: 15 % standard deviation around the truth
DEFAULT_DURATION = 10.0  # s of excitation per log
CUTOFF_HZ = 20.0         # the low-pass of the logs' preprocessing (see the module)
#: [s/rad] the sign function's smoothing in the simulated Coulomb friction: atan(k dq) at
#: 90 % of its limit from |dq| = 0.21 rad/s, at 99 % from 2.1 rad/s (see the module)
SMOOTH_COULOMB = 30.0
DECIMATED_RATE = 100.0   # Hz: the identification logs after filtering (see the module)
EXCITATION_PERIOD = 10.0  # s: the Fourier period of the excitation (a shorter log: its length)


@dataclass(frozen=True)
class NoiseProfile:
    """Per-joint sensor noise: ``position_std_deg`` [deg] and ``torque_std`` [N m]."""

    name: str
    position_std_deg: float
    torque_std: float

    @property
    def position_std(self) -> float:
        """[rad]"""
        return float(np.deg2rad(self.position_std_deg))


PROFILES: tuple[NoiseProfile, ...] = (
    NoiseProfile("lowPositionNoise", 1e-4, 0.05),
    NoiseProfile("standardNoise", 1e-3, 0.05),
    NoiseProfile("highTorqueNoise", 1e-3, 0.1),
    NoiseProfile("highPositionNoise", 1e-2, 0.05),
    NoiseProfile("highPositionTorqueNoise", 1e-2, 0.1),
    NoiseProfile("lowPositionHighTorqueNoise", 1e-4, 0.1),  # completes the 3 x 2 grid
)


def profile(name: str) -> NoiseProfile:
    """The noise profile called ``name``; a ValueError lists the names."""
    for p in PROFILES:
        if p.name == name:
            return p
    raise ValueError(f"unknown noise profile {name!r}: choose among "
                     f"{', '.join(p.name for p in PROFILES)}")


@dataclass(frozen=True)
class ControlGains:
    """BIRDy's PD loop: ``tau = ktau (kp e + kd de)`` per joint; rates in Hz."""

    kp: tuple[float, ...]
    kd: tuple[float, ...]
    ktau: tuple[float, ...]
    control_rate: float
    sample_rate: float
    source: str

    @property
    def stiffness(self) -> NDArray:
        """[N m/rad]"""
        return np.multiply(self.ktau, self.kp)

    @property
    def damping(self) -> NDArray:
        """[N m s/rad]"""
        return np.multiply(self.ktau, self.kd)


CONTROL: dict[str, ControlGains] = {
    "tx40": ControlGains(
        kp=tuple(0.75 * k for k in (455.8254, 500.0, 253.7919, 200.2182, 244.3226, 478.4783)),
        kd=(2.5361, 4.1174, 1.1793, 0.5462, 0.5714, 0.1954),
        ktau=(35.24, 32.04, 23.94, 9.05, 15.5, 6.56),
        control_rate=1000.0, sample_rate=1000.0,
        source="BIRDy TX40.m: controlParameters.Kp, Kd, Ktau, samplingFrequency; controlled "
               "at the sampling rate (BIRDy: 5 kHz, see the module)"),
    "rv2sq": ControlGains(
        kp=tuple(1e5 * k for k in (5.0, 10.0, 9.0, 8.0, 5.0, 5.0)),
        kd=tuple(1e2 * k for k in (5.0, 10.0, 9.0, 8.0, 5.0, 5.0)),
        ktau=(0.0347, 0.0845, 0.0412, 0.0165, 0.0173, 0.0145),
        control_rate=5000.0, sample_rate=140.0,
        source="BIRDy RV2SQ.m: controlParameters.Kp, Kd, Ktau, controlFrequency, "
               "samplingFrequency"),
}


#: the derived PD loop of a robot BIRDy does not simulate (``control_gains``)
DERIVED_BANDWIDTH_HZ = 8.0
DERIVED_SAG = 0.005  # rad: the most a joint may sag under gravity (no feedforward)
DERIVED_DAMPING_RATIO = 0.7


def control_gains(robot: Robot, poses: NDArray | None = None) -> ControlGains:
    """BIRDy's gains for a robot it simulates; for another robot a PD loop derived from its
    model over ``poses`` ``(N, n)`` (default 64 random poses within its limits; ``experiment``
    gives the poses of its trajectories): per joint the stiffness ``K = max(w^2 M_max,
    g_max / DERIVED_SAG)`` (``w`` = 2 pi ``DERIVED_BANDWIDTH_HZ``; ``M_max`` the largest
    diagonal entry of M(q), rotor inertia included; ``g_max`` the largest gravity torque:
    no feedforward holds the arm up) and the damping ``D = 2 zeta sqrt(K M_max)``, scaled
    down until the fastest mode of ``M^-1 D`` is at most ``0.5 f_c`` (the torque is held over
    a control period ``1 / f_c``: a faster mode makes the sampled loop unstable), control and
    log at 1 kHz."""
    if robot.name in CONTROL:
        return CONTROL[robot.name]
    from dynid.dynamics import mass_matrix, rnea

    if poses is None:
        rng = np.random.default_rng(0)
        low = np.where(np.isfinite(robot.limits.lower), robot.limits.lower, -np.pi)
        high = np.where(np.isfinite(robot.limits.upper), robot.limits.upper, np.pi)
        poses = low + (high - low) * rng.uniform(size=(64, robot.n_joints))
    q = np.asarray(poses, dtype=float)
    mass = mass_matrix(robot, q)
    heaviest = np.maximum(np.diagonal(mass, axis1=-2, axis2=-1).max(axis=0), 1e-4)
    gravity = np.abs(rnea(robot, q, np.zeros_like(q), np.zeros_like(q))).max(axis=0)
    w = 2 * np.pi * DERIVED_BANDWIDTH_HZ
    control_rate = 1000.0  # the logged rate: the loop the simulation-based methods re-run
    stiffness = np.maximum(w**2 * heaviest, gravity / DERIVED_SAG)
    damping = 2 * DERIVED_DAMPING_RATIO * np.sqrt(stiffness * heaviest)
    # the sampled loop: the fastest mode of M^-1 D within 0.5 / h (Cholesky: M = L L^T)
    inverse = np.linalg.inv(np.linalg.cholesky(mass))
    rate = np.linalg.eigvalsh(inverse @ (damping[:, None] * inverse.transpose(0, 2, 1))).max()
    damping = damping * min(1.0, 0.5 * control_rate / rate)
    return ControlGains(kp=tuple(stiffness), kd=tuple(damping), ktau=(1.0,) * robot.n_joints,
                        control_rate=control_rate, sample_rate=1000.0,
                        source=f"derived: {DERIVED_BANDWIDTH_HZ:g} Hz PD bandwidth, gravity "
                               f"sag <= {DERIVED_SAG} rad")


def nominal_robot(truth: Robot, start: NDArray, drives: DriveStart | None = None) -> Robot:
    """What a method is given as the robot: the truth's structure with the drawn link
    parameters ``start`` ``(n, 10)`` and, where given, the drawn friction coefficients and
    rotor inertias (``drives``), bounds derived again from them (never from the truth)."""
    from dynid.robot.derived_bounds import derive_bounds

    robot = truth.with_parameters(start)
    if drives is not None:
        if robot.friction.linear:
            robot = robot.with_friction(robot.friction.with_coefficients(drives.friction))
        robot = robot.with_rotor_inertia(drives.rotor_inertia)
    return dataclasses.replace(robot, bounds=derive_bounds(
        robot, source="derived from the drawn initial estimate"))


@dataclass(frozen=True, eq=False)
class DriveStart:
    """One draw of the drive parameters a method starts from: the friction model's
    coefficients and the rotor inertias ``(n,)``, each the truth's times ``1 + spread N(0, 1)``
    (its magnitude: a friction coefficient or an inertia keeps its sign)."""

    friction: NDArray
    rotor_inertia: NDArray


def draw_drive_starts(truth: Robot, draws: int, *, spread: float = DEFAULT_SPREAD,
                      seed: int = 0) -> list[DriveStart]:
    """``draws`` initial estimates of the drive parameters (``DriveStart``) around the
    truth's ``simulated_truth`` friction and rotor inertias: BIRDy draws its whole parameter
    vector, friction and rotor inertias with the links, so that no method starts from the
    truth's drives (the Kalman filters and the simulation-based methods start from the
    robot's own)."""
    if isinstance(draws, bool) or not isinstance(draws, int) or draws < 1:
        raise ValueError(f"`draws` must be an integer >= 1, got {draws!r}")
    if isinstance(spread, bool) or not isinstance(spread, (int, float, np.number)) or not (
            np.isfinite(spread) and 0 <= spread < 1):
        raise ValueError(f"`spread` must be a number in [0, 1), got {spread!r:.40}")
    rng = np.random.default_rng([seed, 16])
    simulated = simulated_truth(truth).friction
    # a nonlinear friction (Stribeck, LuGre, ...) is no method's unknown: it stays the truth's
    friction = np.asarray(simulated.coefficients if simulated.linear else [], dtype=float)
    rotor = np.asarray(truth.rotor_inertia, dtype=float)
    out = []
    for _ in range(draws):
        scale = np.abs(1 + spread * rng.standard_normal(friction.size + rotor.size))
        out.append(DriveStart(friction * scale[:friction.size],
                              rotor * scale[friction.size:]))
    return out


def draw_starts(truth: Robot, draws: int, *, spread: float = DEFAULT_SPREAD,
                seed: int = 0) -> NDArray:
    """``(draws, n, 10)`` initial estimates around ``truth.parameters`` (see the module)."""
    if isinstance(draws, bool) or not isinstance(draws, int) or draws < 1:
        raise ValueError(f"`draws` must be an integer >= 1, got {draws!r}")
    if not (np.isfinite(spread) and 0 <= spread < 1):
        raise ValueError(f"`spread` must be in [0, 1), got {spread!r}")
    rng = np.random.default_rng([seed, 15])
    true = np.asarray(truth.parameters, dtype=float)
    out = np.empty((draws, *true.shape))
    for k in range(draws):
        for j, link in enumerate(true):
            for _ in range(1000):
                drawn = link * (1 + spread * rng.standard_normal(link.size))
                if physical_margin(drawn) >= 0 and drawn[MASS] > 0:
                    break
            else:
                raise ValueError(f"no physically consistent draw of link {j + 1} in 1000 "
                                 f"tries at `spread` {spread}: lower it")
            out[k, j] = drawn
    return out


def simulated_truth(truth: Robot) -> Robot:
    """``truth`` as the twin simulates it: viscous and Coulomb friction without offsets with
    the Coulomb step smoothed (``arctan``, see the module); any other friction as it is."""
    from dynid.friction.models import Arctan, ViscousCoulomb

    friction = truth.friction
    if not isinstance(friction, ViscousCoulomb) or np.any(friction.fo != 0):
        return truth
    n = truth.n_joints
    return truth.with_friction(Arctan(
        tau_s=friction.fc, tau_sc=np.zeros(n), tau_v=friction.fv,
        k_v=np.full(n, SMOOTH_COULOMB), delta=np.full(n, SMOOTH_COULOMB / 10)))


@dataclass(frozen=True)
class Experiment:
    """The benchmark's simulated data: the exact identification log and its reference
    trajectory, the exact validation log, and the loop that ran. ``truth``: the robot as
    simulated (``simulated_truth``); its linear friction, if any, is what the methods
    identify (``friction``)."""

    truth: Robot
    friction: object
    gains: ControlGains
    trajectory: object
    log: Dataset
    validation: Dataset
    duration: float
    seed: int


def _excitation(robot: Robot, seed: int, duration: float):
    from dynid.excitation import random_fourier

    period = min(duration, EXCITATION_PERIOD)
    return random_fourier(robot, harmonics=5, omega_f=2 * np.pi / period, margin=0.5, seed=seed)


def _run(truth: Robot, gains: ControlGains, trajectory, duration: float) -> Dataset:
    from dynid.simulate import Controller, simulate_closed_loop

    step = max(1, round(gains.control_rate / gains.sample_rate))
    pd_loop = Controller.impedance(gains.stiffness, gains.damping,  # no model: a pure PD loop
                                   rate=gains.sample_rate * step)
    log = simulate_closed_loop(truth, trajectory, duration=duration, controller=pd_loop)
    keep = slice(None, None, step)  # the log at the sampling rate: every step-th period
    return Dataset(t=log.t[keep].copy(), q=log.q[keep].copy(), dq=log.dq[keep].copy(),
                   ddq=log.ddq[keep].copy(), tau=log.tau[keep].copy(),
                   metadata={**log.metadata, "rate_hz": gains.sample_rate,
                             "control_rate_hz": gains.sample_rate * step})


def experiment(truth: Robot, *, duration: float = DEFAULT_DURATION, seed: int = 0,
               gains: ControlGains | None = None) -> Experiment:
    """The benchmark's closed-loop runs of ``truth`` (see the module): ``duration`` [s] each."""
    if not (np.isfinite(duration) and duration > 0):
        raise ValueError(f"`duration` must be a number of seconds > 0, got {duration!r}")
    simulated = simulated_truth(truth)
    trajectory = _excitation(truth, seed, duration)
    checking = _excitation(truth, seed + 1, duration)
    if gains is None:
        times = np.linspace(0.0, duration, 2000)
        gains = control_gains(truth, np.vstack([trajectory.sample(times)[0],
                                                checking.sample(times)[0]]))
    log = _run(simulated, gains, trajectory, duration)
    validation = _run(simulated, gains, checking, duration)
    friction = simulated.friction if simulated.friction.linear else None
    return Experiment(simulated, friction, gains, trajectory, log, validation, float(duration),
                      seed)


def raw_log(run: Experiment, noise: NoiseProfile, *, seed: int = 0) -> Dataset:
    """The identification log as ``noise``'s sensors give it, at the sampling rate, before any
    preprocessing: noisy positions and torques, velocities as backward differences, no
    accelerations (what the simulation-based methods read); the same ``seed`` and profile
    give the same noise."""
    exact = run.log
    index = [p.name for p in PROFILES].index(noise.name) if noise in PROFILES else 99
    rng = np.random.default_rng([seed, 7, index])
    q = exact.q + noise.position_std * rng.standard_normal(exact.q.shape)
    tau = exact.tau + noise.torque_std * rng.standard_normal(exact.tau.shape)
    dq = np.vstack([exact.dq[:1], np.diff(q, axis=0) / np.diff(exact.t)[:, None]])
    return Dataset(t=exact.t, q=q, dq=dq, tau=tau,
                   metadata={"source": f"benchmark twin, noise {noise.name}",
                             "noise": dataclasses.asdict(noise)})


def noisy_log(run: Experiment, noise: NoiseProfile, *, seed: int = 0) -> Dataset:
    """``raw_log`` preprocessed (see the module): filtered, differentiated, trimmed and
    decimated, what the inverse-model methods read."""
    from dynid.data.preprocess import prepare

    ready = prepare(raw_log(run, noise, seed=seed), cutoff=CUTOFF_HZ)
    step = max(1, int(np.floor(run.gains.sample_rate / DECIMATED_RATE)))
    return ready.select(np.arange(0, ready.n_samples, step)) if step > 1 else ready
