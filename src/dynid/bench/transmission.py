"""Benchmark of transmissions (``dynid.robot.Transmission``): a coupled wrist identified from
a motor-side log, with and without its coupling.

The twin is the TX40 whose wrist is coupled as the real arm's: joint 5 also turns motor 6,
``theta_6 = r_6 (q_6 + c q_5)``; its truth has other link parameters than the robot file,
motor rotor inertias and viscous + Coulomb friction on the motor side. Its logs are the
motors' positions and torques with noise (no velocities: derived from the positions, as
``read_dataset`` reads such a log; no accelerations), built from the motor
side with the full ``G`` (``tau = rnea + G^T (I_m theta'' + f_m(theta'))``), read as
``dynid identify --motor-side`` reads them by default (``to_joint_side`` through the coupling,
``prepare``, the torque lag estimated with each model's structure and compensated, OLS).

``coupled_wrist_gain``: on those joint-side logs, the held-out RMSE of the two coupled wrist
joints together (root sum of squares) of a model that takes each motor for its own joint's
(the reductions alone: no coupling columns) over that of the model with the coupling's
columns. ``motor_coordinates_ratio``: the other way round a user without transmissions
works: the logs mapped with the reductions alone, i.e. in motor coordinates ``q~ = C q``,
where the rotors and friction are per coordinate and only the rigid body's joint 6 is wrong
(``q~_6 = q_6 + c q_5``); its held-out wrist RMSE (in those coordinates) over the coupled
model's: near 1 for this twin's light link 6, so the gain of the coupling there is in the
joint angles (and a heavy tool), not in the torque fit.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

__all__ = ["run", "summary"]

RATE = 1000.0  # Hz, the motor-side logs
# the TX40's reductions as signed motor turns per joint turn (one motor reversed) and its wrist
REDUCTIONS = (32.0, 32.0, 45.0, -48.0, 45.0, 32.0)
WRIST_COUPLING = 0.5  # theta_6 = r_6 (q_6 + 0.5 q_5)
ROTOR_MOTOR = (3.0e-4, 3.0e-4, 1.5e-4, 4.0e-5, 4.0e-5, 4.0e-5)  # kg m^2, motor side
VISCOUS_MOTOR = (4e-3, 4e-3, 2e-3, 1e-3, 1e-3, 1.2e-3)  # N m s/rad, motor side
COULOMB_MOTOR = (0.10, 0.10, 0.06, 0.04, 0.04, 0.05)  # N m, motor side
NOISE_MOTOR = 2e-3  # N m on each motor torque
WRIST = (4, 5)  # the coupled joints (0-based)


def _coupled():
    from dynid.robot import Transmission

    coupling = np.eye(len(REDUCTIONS))
    coupling[5, 4] = WRIST_COUPLING
    return Transmission(np.array(REDUCTIONS), coupling)


def _truth(robot, seed: int):
    """``robot`` with link parameters drawn around its own (masses and first moments
    +-20 %, inertias +-10 %): what the fits are not told."""
    rng = np.random.default_rng(seed)
    params = robot.parameters.copy()
    n = robot.n_joints
    params[:, 0] *= rng.uniform(0.8, 1.2, n)
    params[:, 1:4] *= rng.uniform(0.8, 1.2, (n, 3))
    params[:, 4:] *= rng.uniform(0.9, 1.1, (n, 6))
    return robot.with_parameters(params).with_rotor_inertia(None)


def _motor_log(truth, trajectory, duration: float, seed: int):
    """The motor-side log of ``truth`` along ``trajectory``: motor positions and torques with
    noise, velocities derived from the positions (``DERIVED_VELOCITY``, as ``read_dataset``
    gives a log without them), no accelerations."""
    from dynid.data import Dataset
    from dynid.data.dataset import DERIVED_VELOCITY
    from dynid.dynamics import rnea

    g = _coupled().matrix
    t = np.arange(0.0, duration, 1.0 / RATE)
    q, dq, ddq = trajectory.sample(t)
    dtheta, ddtheta = dq @ g.T, ddq @ g.T  # the truth's motor motion
    motor = (np.array(ROTOR_MOTOR) * ddtheta + np.array(VISCOUS_MOTOR) * dtheta
             + np.array(COULOMB_MOTOR) * np.sign(dtheta))
    tau = rnea(truth, q, dq, ddq) + motor @ g  # G^T tau_m, row by row
    noise = np.random.default_rng(seed).normal(0.0, NOISE_MOTOR, q.shape)
    tau_m = np.linalg.solve(g.T, tau.T).T + noise
    theta = q @ g.T
    return Dataset(t=t, q=theta, dq=np.gradient(theta, t, axis=0), tau=tau_m,
                   metadata={"source": "coupled-wrist twin, motor side",
                             "velocity": DERIVED_VELOCITY})


def run(*, robot: str = "tx40", duration: float = 20.0, seed: int = 0,
        progress: Callable[[str], None] | None = None) -> dict:
    """The coupled-wrist twin of ``robot`` (6 joints; module docstring): one motor-side log of
    ``duration`` s to fit and one to check, identified by the default path (``_default_path``:
    rotor inertias, viscous + Coulomb + offset friction) with the coupling and without.

    Keys: ``coupled_wrist_gain``, ``motor_coordinates_ratio`` (module docstring);
    ``wrist_rmse_with`` and ``wrist_rmse_without`` (N m, the two wrist joints); ``rmse_with``,
    ``rmse_without`` and ``rmse_motor_coordinates`` per joint (N m, held out);
    ``noise_floor`` per joint (the motor noise through ``G^T``, unfiltered, N m);
    ``seconds_with``, ``seconds_without`` (the lag and the fit), ``delay_ms_with``,
    ``delay_ms_without`` (the lag each found); ``preprocessing``: the steps of the prepared
    fit log;
    ``n_samples``."""
    from dynid.data import prepare, to_joint_side
    from dynid.excitation.optimize import random_fourier
    from dynid.robot import Transmission, load_robot

    if not duration >= 5.0:
        raise ValueError(f"`duration` must be at least 5 s, got {duration!r}")
    say = progress or (lambda _line: None)
    told = load_robot(robot)
    if told.n_joints != len(REDUCTIONS):
        raise ValueError(f"`robot`: the coupled-wrist twin has 6 joints, {told.name!r} has "
                         f"{told.n_joints}")
    truth = _truth(told, seed + 1)
    logs = [_motor_log(truth, random_fourier(told, seed=seed + 10 + k), duration, seed + 20 + k)
            for k in range(2)]
    g = _coupled().matrix
    floor = NOISE_MOTOR * np.sqrt((g**2).sum(axis=0))
    out: dict = {"n_samples": logs[0].n_samples, "noise_floor": floor.tolist()}
    check = prepare(to_joint_side(logs[1], _coupled()))
    fit = prepare(to_joint_side(logs[0], _coupled()))
    out["preprocessing"] = list(fit.metadata.get("preprocessing", []))
    for name, transmission in (("with", _coupled()),
                               ("without", Transmission.simple(np.array(REDUCTIONS)))):
        say(f"identifying {name} the coupling")
        began = time.perf_counter()
        error, delay = _default_path(told.with_transmission(transmission), fit, check)
        out[f"seconds_{name}"] = time.perf_counter() - began
        out[f"rmse_{name}"] = error.tolist()
        out[f"delay_ms_{name}"] = 1e3 * delay
        out[f"wrist_rmse_{name}"] = float(np.sqrt(np.sum(error[list(WRIST)]**2)))
    out["coupled_wrist_gain"] = out["wrist_rmse_without"] / out["wrist_rmse_with"]
    say("identifying in motor coordinates (the reductions alone)")
    simple = told.with_transmission(Transmission.simple(np.array(REDUCTIONS)))
    error, _ = _default_path(simple, *(prepare(to_joint_side(log, simple.transmission))
                                       for log in logs))
    out["rmse_motor_coordinates"] = error.tolist()
    out["motor_coordinates_ratio"] = float(np.sqrt(np.sum(error[list(WRIST)]**2))) \
        / out["wrist_rmse_with"]
    return out


def _default_path(robot, fit, check) -> tuple[np.ndarray, float]:
    """``robot`` (rotor inertias, viscous + Coulomb + offset friction) identified from the
    prepared ``fit`` log as ``dynid identify`` does by default (the torque lag estimated with
    its structure and compensated, OLS): its held-out RMSE per joint on ``check`` (realigned
    by the same lag) and the lag [s]."""
    from dynid.friction.models import ViscousCoulomb
    from dynid.identification import identify
    from dynid.identification.delay import compensated, shift_torques
    from dynid.identification.linear.idim import linear_template
    from dynid.metrics import rmse

    friction = ViscousCoulomb.zeros(robot.n_joints)
    template = linear_template(robot, friction, rotor_inertia=True)
    (ready,), delay = compensated(template, [fit])
    model = identify(robot, ready, friction=friction, rotor_inertia=True)
    check = shift_torques(check, delay.seconds)
    return (np.asarray(rmse(check.tau, model.predict(check.q, check.dq, check.ddq))),
            delay.seconds)


def summary(result: dict) -> str:
    """A few readable lines of ``run``'s result."""
    def row(values) -> str:
        return " ".join(f"{v:8.4f}" for v in values)
    return "\n".join([
        f"coupled wrist (theta_6 = r_6 (q_6 + {WRIST_COUPLING:g} q_5)), motor-side logs of "
        f"{result['n_samples']} samples, held-out RMSE per joint [N m]:",
        f"  with the coupling     {row(result['rmse_with'])}",
        f"  no coupling columns   {row(result['rmse_without'])}",
        f"  motor coordinates     {row(result['rmse_motor_coordinates'])}",
        f"  noise (unfiltered)    {row(result['noise_floor'])}",
        f"  coupled_wrist_gain {result['coupled_wrist_gain']:.2f} (wrist joints 5-6: "
        f"{result['wrist_rmse_without']:.4f} / {result['wrist_rmse_with']:.4f} N m); lag "
        f"{result['delay_ms_with']:+.2f} / {result['delay_ms_without']:+.2f} ms, fits "
        f"{result['seconds_with']:.2f} s / {result['seconds_without']:.2f} s; in motor "
        f"coordinates {result['motor_coordinates_ratio']:.2f} x the coupled model's"])
