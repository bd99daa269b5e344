"""The calibration twin study behind the benchmark targets of issue 25."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from dynid.calibration.fit import calibrate
from dynid.calibration.model import KinematicModel
from dynid.calibration.poses import select_poses
from dynid.calibration.twin import measure, perturbed
from dynid.robot import Robot
from dynid.robot._joint import translation

__all__ = ["TOOL_POINT", "calibrate_then_identify", "run", "summary", "twin_study"]

# A tool point ~0.1 m off the flange, off the last joint's axis (on the axis that joint's
# offset could not be seen by position measurements).
TOOL_POINT = (0.06, 0.03, 0.07)  # m, in the flange frame


def _errors(model: KinematicModel, cal, truth: np.ndarray) -> tuple[float, float, float]:
    """Max |error| over the estimated joint offsets [rad] and lengths [m], and the RMS of
    the scaled parameter error (angles times the reach) [m]."""
    index = np.array([model.names.index(n) for n in cal.estimated])
    error = cal.values[index] - truth[index]
    angle = model.is_angle[index]
    offsets = _is_offset(model, index)
    offset_error = float(np.abs(error[offsets]).max()) if offsets.any() else 0.0
    length_error = float(np.abs(error[~angle]).max()) if (~angle).any() else 0.0
    scaled = np.where(angle, error * model.reach, error)
    return offset_error, length_error, float(np.sqrt(np.mean(scaled**2)))


def _is_offset(model: KinematicModel, index) -> np.ndarray:
    """Which of the parameters ``index`` are joint offsets (angles: a revolute joint's)."""
    return np.array([model.parameters[k].role == "offset" and model.is_angle[k]
                     for k in index], dtype=bool)


def _expected_error(model: KinematicModel, index: list[int], q: np.ndarray) -> float:
    """The Cramér–Rao RMS of the scaled parameter error per unit noise (as ``_errors``)."""
    _, jac = model.jacobian(None, q)
    a = model.scaled_rows(jac, "position")[:, index]  # unitless: angles as reach arcs
    return float(np.sqrt(np.trace(np.linalg.inv(a.T @ a)) / len(index)))


def twin_study(robot: Robot, *, poses: int = 50, sigma: float = 1e-4, seed: int = 0,
               offset: float = 5e-3, length: float = 1e-3, heldout: int = 200,
               repeats: int = 5, tool_point=TOOL_POINT, candidates: int = 2000,
               parameters: str = "full", criterion: str = "D") -> dict:
    """Calibrate the twin of ``robot`` (tool point ``tool_point`` [m] off its tool frame) with
    kinematic errors ``±offset`` rad / ``±length`` m (``perturbed``) from ``poses`` D-optimal
    position measurements at noise ``sigma`` [m]; JSON-able results:

    - ``offset_error_mrad``: the largest absolute error over the identifiable joint offsets
      [mrad];
    - ``length_error_mm``: the largest absolute error over the identifiable lengths [mm];
    - ``heldout_error_over_noise``: RMS per coordinate of the held-out position error after
      calibration (``heldout`` random poses, noisy), over ``sigma`` (1 is the noise floor);
      ``heldout_before_over_noise`` the same with the nominal kinematics;
    - ``optimised20_over_random50``: the RMS scaled parameter error (angles times the reach)
      of 20 optimised poses over that of 50 random ones, each averaged over ``repeats`` noise
      draws (<= 1: 20 chosen poses do at least as well); ``..._expected`` the same ratio from
      the Cramér–Rao bound (the covariance ``(J^T J)^-1 sigma^2`` of each design);
    - ``offset_errors_mrad``: each identifiable offset's error;
    - ``offset_std_mrad`` / ``length_std_mm``: the largest standard deviation of an
      identifiable offset / length of the 50-pose fit: the errors above cannot be much
      smaller than these (the model's ``parameters``: "full" or "offsets").

    ``criterion``: the pose-selection criterion ("D", "E" or "A").
    """
    if not isinstance(robot, Robot):
        raise TypeError(f"`robot` must be a dynid Robot, got {type(robot).__name__}")
    tool = robot.tool @ translation(*tool_point)
    model = KinematicModel(dataclasses.replace(robot, tool=tool), parameters=parameters)
    truth = perturbed(model, offset=offset, length=length, seed=seed)
    design = select_poses(model, poses, n_candidates=candidates, seed=seed + 1,
                          criterion=criterion)
    data = measure(model, truth, design.q, sigma_position=sigma, seed=seed + 2)
    cal = calibrate(model, data)
    offset_error, length_error, _ = _errors(model, cal, truth)
    index = [model.names.index(n) for n in cal.estimated]
    is_offset = _is_offset(model, index)
    is_length = ~model.is_angle[index]
    offset_std = float(cal.std[is_offset].max()) if is_offset.any() else 0.0
    length_std = float(cal.std[is_length].max()) if is_length.any() else 0.0
    check = measure(model, truth, model.random_poses(heldout, seed=seed + 3),
                    sigma_position=sigma, seed=seed + 4)
    errors = cal.heldout(check)
    per_coordinate = np.sqrt(3.0)  # the norm's RMS over the per-coordinate RMS
    twenty = select_poses(model, 20, n_candidates=candidates, seed=seed + 1,
                          criterion=criterion)
    runs = {"optimised20": [], "random50": []}
    for r in range(repeats):
        for key, q in (("optimised20", twenty.q),
                       ("random50", model.random_poses(50, seed=seed + 100 + r))):
            measured = measure(model, truth, q, sigma_position=sigma, seed=seed + 200 + r)
            runs[key].append(_errors(model, calibrate(model, measured), truth)[2])
    expected = _expected_error(model, index, twenty.q) / np.mean(
        [_expected_error(model, index, model.random_poses(50, seed=seed + 100 + r))
         for r in range(repeats)])
    optimised, random = (float(np.sqrt(np.mean(np.square(runs[k]))))
                         for k in ("optimised20", "random50"))
    return {"robot": robot.name, "poses": poses, "sigma_m": sigma,
            "n_parameters": model.n_parameters, "n_identifiable": len(cal.estimated),
            "offset_error_mrad": 1e3 * offset_error, "length_error_mm": 1e3 * length_error,
            "heldout_error_over_noise":
                float(errors["rms_position_after"] / per_coordinate / sigma),
            "heldout_before_over_noise":
                float(errors["rms_position_before"] / per_coordinate / sigma),
            "offset_errors_mrad": {model.names[k]: 1e3 * float(cal.values[k] - truth[k])
                                   for k, o in zip(index, is_offset, strict=True) if o},
            "optimised20_over_random50": optimised / random,
            "optimised20_over_random50_expected": float(expected),
            "offset_std_mrad": 1e3 * offset_std, "length_std_mm": 1e3 * length_std,
            "parameter_error_optimised20_m": optimised, "parameter_error_random50_m": random,
            "criterion": criterion, "criterion_value": float(design.value),
            "condition": float(design.condition), "chi2_dof": float(cal.chi2_dof),
            "converged": bool(cal.converged)}


def calibrate_then_identify(robot: Robot, *, poses: int = 50, sigma: float = 1e-4,
                            seed: int = 0, offset: float = 5e-3, length: float = 1e-3,
                            torque_noise: float = 0.05, duration: float = 20.0,
                            rate: float = 200.0, tool_point=TOOL_POINT) -> dict:
    """The issue's last target: does calibrating the kinematics first improve the dynamic
    model? The twin's arm is ``robot`` with kinematic errors ``±offset`` rad / ``±length`` m
    (``perturbed``, as ``twin_study``) and viscous + Coulomb friction (linear, so that the
    friction model is not what limits the fit). The kinematics are calibrated from ``poses``
    D-optimal position measurements at noise ``sigma`` [m]; then OLS identifies the dynamics
    from one exciting log (``duration`` s at ``rate`` Hz, torque noise ``torque_noise`` N m)
    on the nominal and on the corrected kinematics, and each model predicts the torques of a
    second, held-out log. JSON-able: ``heldout_torque_error_nominal_percent`` and
    ``..._corrected_percent`` (``100 |tau - tau_hat| / |tau|``), and the same with the true
    kinematics (the floor the noise leaves)."""
    from dynid.excitation.optimize import random_fourier
    from dynid.friction.models import ViscousCoulomb
    from dynid.identification.linear.idim import identify
    from dynid.metrics import relative_error_percent
    from dynid.simulate.twin import SensorModel, simulate_open_loop

    if not isinstance(robot, Robot):
        raise TypeError(f"`robot` must be a dynid Robot, got {type(robot).__name__}")
    n = robot.n_joints
    robot = robot.with_friction(ViscousCoulomb(np.full(n, 0.2), np.full(n, 0.3),
                                               np.zeros(n)))
    model = KinematicModel(dataclasses.replace(robot, tool=robot.tool @ translation(
        *tool_point)))
    truth_values = perturbed(model, offset=offset, length=length, seed=seed)
    design = select_poses(model, poses, seed=seed + 1)
    cal = calibrate(model, measure(model, truth_values, design.q, sigma_position=sigma,
                                   seed=seed + 2))
    # the dynamics live in the robot's base frame, on its own tool: the base frame and the
    # measured point are the instrument's
    truth = dataclasses.replace(model.robot(truth_values), tool=robot.tool)
    corrected = dataclasses.replace(cal.robot, tool=robot.tool)
    logs = [simulate_open_loop(truth, random_fourier(truth, seed=seed + 10 + k),
                               duration=duration, rate=rate,
                               sensor=SensorModel(torque_noise_std=torque_noise), seed=k)
            for k in range(2)]
    fit, held = logs
    out = {"robot": robot.name, "poses": poses, "sigma_m": sigma,
           "torque_noise_nm": torque_noise, "samples": fit.n_samples}
    for key, kinematics in (("nominal", robot), ("corrected", corrected), ("true", truth)):
        model_k = identify(kinematics, fit)
        predicted = model_k.predict(held.q, held.dq, held.ddq, held.t)
        out[f"heldout_torque_error_{key}_percent"] = relative_error_percent(
            model_k.measured_torque(held), predicted)
    return out


def run(*, robot: str = "panda", progress: Callable[[str], None] | None = None) -> dict:
    """The suite (``dynid bench --suite calibration``): ``twin_study`` and
    ``calibrate_then_identify`` of the built-in ``robot``."""
    from dynid.robot import load_robot

    say = progress or (lambda _line: None)
    arm = load_robot(robot)
    say(f"calibration twin study of {robot}")
    result = twin_study(arm)
    say("calibrated, then identified")
    result.update(calibrate_then_identify(arm))
    result["robot"] = robot
    return result


def summary(result: dict) -> str:
    return "\n".join([
        f"{result['robot']}: {result['n_identifiable']} of {result['n_parameters']} kinematic "
        f"parameters identifiable from {result['poses']} optimised poses at "
        f"{1e3 * result['sigma_m']:g} mm",
        f"  joint offsets within {result['offset_error_mrad']:.3f} mrad (largest "
        f"std {result['offset_std_mrad']:.3f}), lengths within "
        f"{result['length_error_mm']:.3f} mm (largest std {result['length_std_mm']:.3f})",
        f"  held-out error {result['heldout_before_over_noise']:.1f} x the noise "
        f"-> {result['heldout_error_over_noise']:.2f} x",
        f"  20 optimised poses / 50 random: parameter error "
        f"{result['optimised20_over_random50']:.2f} x (Cramer-Rao: "
        f"{result['optimised20_over_random50_expected']:.2f} x)",
        f"  dynamics on held-out torques: nominal kinematics "
        f"{result['heldout_torque_error_nominal_percent']:.3f} %, corrected "
        f"{result['heldout_torque_error_corrected_percent']:.3f} %, true "
        f"{result['heldout_torque_error_true_percent']:.3f} %",
    ])
