"""The end-to-end demo on the Panda digital twin.

Two random Fourier trajectories inside the joint limits; torques simulated at 1 kHz with the
truth model (Gaz 2019 feasible parameters + sigmoid friction + Gaussian noise); base parameters
by pivoted QR; OLS with viscous + Coulomb + offset friction columns on the first trajectory;
validation on the second with per-joint RMSE.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from dynid.data import Dataset
from dynid.dynamics import rnea
from dynid.excitation import random_fourier
from dynid.friction import ViscousCoulomb
from dynid.identify import identify
from dynid.inertia import N_LINK_PARAMETERS
from dynid.model import LinearModel
from dynid.robot import load_robot
from dynid.simulate import SensorModel, simulate_open_loop
from dynid.validate import relative_error_percent, rmse

__all__ = ["DemoResult", "format_summary", "run_demo"]

DEFAULT_NOISE_STD = 0.1  # N m per joint
DEFAULT_DURATION = 20.0  # s per trajectory


@dataclass
class DemoResult:
    robot: str
    n_samples: int
    rate_hz: float
    noise_std: list[float]
    n_base_inertial: int
    n_base_total: int
    condition_number: float
    identification_relative_error_percent: float
    validation_relative_error_percent: float
    rmse: list[float]
    rmse_truth: list[float]
    seconds: dict[str, float] = field(default_factory=dict)
    model: LinearModel | None = field(default=None, repr=False)
    validation: Dataset | None = field(default=None, repr=False)
    predicted: np.ndarray | None = field(default=None, repr=False)

    def to_json(self) -> dict:
        out = {k: v for k, v in self.__dict__.items()
               if k not in ("model", "validation", "predicted")}
        out["seconds_total"] = sum(self.seconds.values())
        return out


def run_demo(*, robot: str = "panda", duration: float = DEFAULT_DURATION, rate: float = 1000.0,
             noise_std: float = DEFAULT_NOISE_STD, seed: int = 0,
             progress: Callable[[str], None] | None = None) -> DemoResult:
    """Identify ``robot``'s twin and validate it; ``progress`` receives one line per stage."""
    say = progress or (lambda _line: None)
    seconds: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[stage] = now - clock
        clock = now

    truth = load_robot(robot)
    say(f"robot {truth.name}: {truth.n_joints} joints, {truth.total_mass:.2f} kg, "
        f"truth friction {truth.friction.name}")
    trajectories = [random_fourier(truth, seed=seed + k) for k in range(2)]
    if duration < trajectories[0].period:
        raise ValueError(
            f"`duration` must cover one period of the excitation ({trajectories[0].period:.2f} s) "
            f"so that every base parameter is excited, got {duration:g} s"
        )
    lap("trajectories")
    say(f"simulating 2 x {duration:g} s at {rate:g} Hz, torque noise {noise_std:g} N m")
    identification, validation = (
        simulate_open_loop(truth, traj, duration=duration, rate=rate,
                           sensor=SensorModel(torque_noise_std=noise_std), seed=seed + 10 + k)
        for k, traj in enumerate(trajectories)
    )
    lap("simulation")
    say("identifying base parameters with viscous + Coulomb + offset friction (OLS)")
    model = identify(truth, identification, friction=ViscousCoulomb.zeros(truth.n_joints))
    lap("identification")
    predicted = model.predict(validation.q, validation.dq, validation.ddq)
    noiseless = rnea(truth, validation.q, validation.dq, validation.ddq)
    noiseless = noiseless + truth.friction.torque_along(validation.t, validation.dq)
    lap("validation")
    n_inertial = sum(1 for k in model.base.independent if k < N_LINK_PARAMETERS * truth.n_joints)
    return DemoResult(
        robot=truth.name,
        n_samples=identification.n_samples,
        rate_hz=rate,
        noise_std=[noise_std] * truth.n_joints,
        n_base_inertial=n_inertial,
        n_base_total=model.base.rank,
        condition_number=model.report["condition_number"],
        identification_relative_error_percent=model.report["relative_error_percent"],
        validation_relative_error_percent=relative_error_percent(validation.tau, predicted),
        rmse=rmse(validation.tau, predicted).tolist(),
        rmse_truth=rmse(validation.tau, noiseless).tolist(),
        seconds=seconds,
        model=model,
        validation=validation,
        predicted=predicted,
    )


def format_summary(result: DemoResult) -> str:
    """A readable summary of a demo run."""
    joints = range(1, len(result.rmse) + 1)
    lines = [
        f"dynid demo: {result.robot} digital twin",
        f"  samples per trajectory   {result.n_samples} at {result.rate_hz:g} Hz",
        f"  base parameters          {result.n_base_total} "
        f"({result.n_base_inertial} inertial + {result.n_base_total - result.n_base_inertial} "
        "friction)",
        f"  condition number         {result.condition_number:.1f} (base regressor, unscaled)",
        f"  relative error           {result.identification_relative_error_percent:.2f} % "
        f"identification, {result.validation_relative_error_percent:.2f} % validation",
        "  validation RMSE per joint [N m]",
        "    joint  " + "".join(f"{j:>8d}" for j in joints),
        "    model  " + "".join(f"{v:8.3f}" for v in result.rmse),
        "    truth  " + "".join(f"{v:8.3f}" for v in result.rmse_truth)
        + "   (noise only: the floor)",
        "  time [s]  " + ", ".join(f"{k} {v:.2f}" for k, v in result.seconds.items())
        + f"; total {sum(result.seconds.values()):.2f}",
    ]
    return "\n".join(lines)

