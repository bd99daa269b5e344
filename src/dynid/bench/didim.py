"""DIDIM against OLS on a closed-loop twin log, BIRDy's way: the truth simulated in closed loop,
its log made noisy (position noise added to the logged positions, torque noise to the logged
torques), OLS on the log filtered and differentiated as a real one (``dynid.data.preprocess``),
DIDIM from a start 15 % off the truth (``perturbed_start``), both scored by the relative error
of their base coefficients against the truth's.

``didim_bench()`` runs it on the Panda (7 joints, computed-torque-like feedforward: BIRDy's
TX40 protocol, with its pure PD loop, is ``dynid.benchmark``) with viscous + Coulomb friction
(linear, so that the model class holds the truth) under a joint impedance on the Panda CAD
model's feedforward (Franka's example stiffness), 10 s at 1 kHz, σ_q = 1e-3 deg and
σ_τ = 0.1 N m.
"""

from __future__ import annotations

import time

import numpy as np
from numpy.typing import NDArray

from dynid.data.dataset import Dataset
from dynid.data.preprocess import prepare
from dynid.model.linear_model import LinearModel
from dynid.robot import Robot
from dynid.robot.inertia import from_com, inertia_vector, to_com

__all__ = ["didim_bench", "noisy_log", "ols_log", "perturbed_start", "relative_error"]

# the bench's twin: Franka's joint-impedance example gains (as dynid.workflow.demo)
STIFFNESS = (600.0, 600.0, 600.0, 600.0, 250.0, 150.0, 50.0)
DAMPING = (30.0, 30.0, 20.0, 30.0, 8.0, 6.0, 2.0)
POSITION_NOISE_DEG = 1e-3
TORQUE_NOISE = 0.1  # [N m]


def perturbed_start(robot: Robot, spread: float = 0.15, seed: int = 0) -> NDArray:
    """``(n, 10)``: the robot's link parameters, each link's mass, CoM coordinates and inertia
    about the CoM (``D I_com D`` with ``D`` diagonal) scaled by ``1 + spread N(0, 1)`` draws —
    BIRDy's initial estimates at 15 % sigma, kept physical (positive masses, ``I_com >= 0``)
    so that their closed loop can be simulated."""
    rng = np.random.default_rng(seed)
    mass, com, inertia = to_com(robot.parameters)
    n = robot.n_joints

    def draw(*shape):
        return np.clip(1 + spread * rng.standard_normal(shape), 0.2, None)

    scale = draw(n, 3)
    inertia = scale[:, :, None] * inertia * scale[:, None, :]
    return from_com(mass * draw(n), com * draw(n, 3), inertia_vector(inertia))


def noisy_log(log: Dataset, *, position_noise: float, torque_noise: float,
              seed: int = 0) -> Dataset:
    """``log`` as a real one: Gaussian noise of ``position_noise`` [rad] on the positions and
    ``torque_noise`` [N m] on the torques, velocities as central differences of the noisy
    positions, no accelerations."""
    rng = np.random.default_rng(seed)
    q = log.q + position_noise * rng.standard_normal(log.q.shape)
    tau = log.tau + torque_noise * rng.standard_normal(log.tau.shape)
    return Dataset(t=log.t, q=q, dq=np.gradient(q, log.t, axis=0), tau=tau,
                   metadata={**log.metadata, "position_noise": position_noise,
                             "torque_noise": torque_noise})


def ols_log(log: Dataset) -> Dataset:
    """A noisy log prepared for OLS by ``dynid.data.preprocess.prepare``'s defaults (a
    zero-phase Butterworth on positions and velocities at the cutoff chosen from the log,
    accelerations by differentiation, 0.5 s trimmed at both ends, the friction fits' dead
    band)."""
    return prepare(log)


def relative_error(model: LinearModel, truth: Robot) -> float:
    """``|theta^ - theta| / |theta|`` of the base coefficients against the truth's (its link
    parameters, rotor inertias and the friction coefficients of ``model``'s friction)."""
    full = np.concatenate([truth.parameters.ravel(),
                           truth.rotor_inertia if model.rotor_inertia else [],
                           truth.friction.coefficients])
    true = model.base.base(full)
    return float(np.linalg.norm(model.coefficients - true) / np.linalg.norm(true))


def didim_bench(*, duration: float = 10.0, rate: float = 1000.0, seed: int = 0) -> dict:
    """DIDIM's fit time and its parameter error over OLS's at high torque noise (see the
    module): ``didim_fit_seconds`` (the second fit, compiled kernels warm),
    ``didim_parameter_error_ratio`` (DIDIM's relative base-coefficient error over OLS's), both
    errors, DIDIM's iterations and whether it converged; the same ratio and time for PC-DIDIM
    (CLS-3 inner fit) and CLOE."""
    from dynid.excitation.optimize import random_fourier
    from dynid.friction.models import ViscousCoulomb
    from dynid.identification.linear.idim import identify
    from dynid.identification.simulation.didim import identify_didim
    from dynid.identification.simulation.output_error import identify_cloe
    from dynid.robot import load_robot
    from dynid.simulate import Controller, simulate_closed_loop

    panda = load_robot("panda")
    n = panda.n_joints
    truth = panda.with_friction(ViscousCoulomb(np.full(n, 0.2), np.full(n, 0.3), np.zeros(n)))
    reference = random_fourier(truth, seed=seed + 1)
    controller = Controller.impedance(STIFFNESS, DAMPING, model=load_robot("panda-cad"),
                                      rate=rate)
    exact = simulate_closed_loop(truth, reference, duration=duration, controller=controller)
    log = noisy_log(exact, position_noise=np.deg2rad(POSITION_NOISE_DEG),
                    torque_noise=TORQUE_NOISE, seed=seed)
    start = perturbed_start(truth, 0.15, seed=seed)
    nominal = truth.with_parameters(start)  # the robot as the user knows it
    ols = identify(nominal, ols_log(log))
    identify_didim(nominal, log, reference, controller, start=start, max_iterations=1)  # warm
    began = time.perf_counter()
    didim = identify_didim(nominal, log, reference, controller, start=start)
    seconds = time.perf_counter() - began
    began = time.perf_counter()
    consistent = identify_didim(nominal, log, reference, controller, start=start,
                                consistent="cls3")
    consistent_seconds = time.perf_counter() - began
    identify_cloe(nominal, log, reference, controller, start=start, max_iterations=1)  # warm
    began = time.perf_counter()
    cloe = identify_cloe(nominal, log, reference, controller, start=start)
    cloe_seconds = time.perf_counter() - began
    ols_error, didim_error = relative_error(ols, truth), relative_error(didim.model, truth)
    consistent_error = relative_error(consistent.model, truth)
    cloe_error = relative_error(cloe.model, truth)
    return {"didim_fit_seconds": seconds,
            "didim_parameter_error_ratio": didim_error / ols_error,
            "pc_didim_parameter_error_ratio": consistent_error / ols_error,
            "cloe_fit_seconds": cloe_seconds,
            "cloe_parameter_error_ratio": cloe_error / ols_error,
            "pc_didim_fit_seconds": consistent_seconds,
            "didim_parameter_error": didim_error, "ols_parameter_error": ols_error,
            "didim_iterations": didim.iterations, "didim_converged": didim.converged,
            "pc_didim_converged": consistent.converged, "cloe_converged": cloe.converged,
            "robot": "panda", "samples": exact.n_samples}
