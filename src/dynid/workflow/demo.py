"""The end-to-end demo on the Panda digital twin: the whole workflow a user runs on a real arm.

The truth is the built-in ``panda`` (Gaz et al. 2019's feasible parameters and sigmoid
friction). The user knows what a user of the real arm knows: the kinematics, Franka's CAD
inertials (``panda-cad``: the prior, also inside the simulated controller) and Gaz's search
bounds. The stages:

1. **excitation**: a Fourier trajectory optimised for the condition number of the base
   regressor with friction columns (identification), and a random one (validation);
2. **simulation**: the truth arm tracks both, closed loop at ``rate`` Hz, by a joint impedance
   (the stiffness of Franka's examples) on top of the CAD model's feedforward; the log has
   quantised positions, velocities from position differences, noisy torques and no
   accelerations, like a real log;
3. **preprocessing**: zero-phase low-pass, accelerations by differentiation, ends trimmed;
4. **identification**: OLS and CLS-3 (pseudo-inertia LMI, Jaco2 paper) with viscous + Coulomb
   + offset friction columns;
5. **retrieval**: a feasible full parameter set behind the OLS coefficients (SDP, CAD prior);
6. **validation**: each model on the validation log, against the truth's own error (noise and
   preprocessing: the floor);
7. **outputs** in ``output``: the two raw logs (``identification.npz``, ``validation.npz``,
   ready for the CLI), the excitation (``excitation.csv`` + ``.yaml``), the models
   (``model-ols.yaml``, ``model-cls3.yaml``, ``model-retrieved.yaml``), the HTML report of the
   CLS-3 model (``report.html``), its URDF (``panda-identified.urdf``) and the validation plot
   (``validation.png``), and these figures (``summary.json``).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dynid._files import atomic_write, check_writable, move_all, to_builtin
from dynid.dynamics import rnea
from dynid.robot import Robot, load_robot

__all__ = ["DEMO_METHODS", "DemoResult", "format_summary", "run_demo"]

DEFAULT_NOISE_STD = 0.1  # N m per joint
DEFAULT_DURATION = 20.0  # s per trajectory
DEFAULT_PERIOD = 10.0  # s, the period of both excitation trajectories
DEFAULT_ITERATIONS = 20  # L-BFGS iterations of the excitation search
MAX_DURATION = 300.0  # s per trajectory (the compiled closed loop runs ~0.013 s per second)
ENCODER_RESOLUTION = 2 * np.pi / 2**20  # rad: a 20-bit encoder
# the tracking controller: the stiffness of Franka's joint-impedance example; the damping
# kept well inside the stability limit of a 1 kHz loop for the light wrist
# (D T max(M^-1)_jj about 1 at most over the workspace, the limit is 2)
STIFFNESS = (600.0, 600.0, 600.0, 600.0, 250.0, 150.0, 50.0)  # N m / rad
DAMPING = (30.0, 30.0, 20.0, 30.0, 8.0, 6.0, 2.0)  # N m s / rad
DEMO_METHODS = ("ols", "cls3", "retrieved")
# what a run writes into its folder, by role
_ROLES = ("identification_log", "validation_log", "excitation", "excitation_parameters",
          "model_ols", "model_cls3", "model_retrieved", "report", "urdf", "plot", "summary")
OUTPUT_NAMES = ("identification.npz", "validation.npz", "excitation.csv", "excitation.yaml",
                "model-ols.yaml", "model-cls3.yaml", "model-retrieved.yaml", "report.html",
                "panda-identified.urdf", "validation.png", "summary.json")


@dataclass
class DemoResult:
    """Figures of a demo run and where its outputs are."""

    robot: str
    n_samples: int  # per trajectory, after preprocessing
    rate_hz: float
    noise_std: list[float]
    excitation_condition_number: float
    tracking_rms: list[float]  # rad per joint, identification trajectory
    preprocessing: list[str]
    n_base_inertial: int
    n_base_total: int
    condition_number: float
    validation: dict  # method -> ValidationReport.to_json() (less the residual details)
    rmse_truth: list[float]
    folder: str  # the output folder
    files: dict[str, str]  # role -> file name in ``folder``
    seconds: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {**dataclasses.asdict(self), "seconds_total": sum(self.seconds.values())}


def user_robot(truth: Robot) -> Robot:
    """What the user knows of the twin's arm: its kinematics and limits, Franka's CAD
    inertials (the prior) and the truth robot's search bounds; named like the truth, as the
    logs are."""
    cad = load_robot("panda-cad")
    return dataclasses.replace(
        cad, name=truth.name, bounds=truth.bounds,
        description=f"{truth.name} kinematics with Franka's CAD inertials (the prior) and "
                    f"the search bounds of {truth.name!r}")


def _check_options(output, duration, rate, noise_std, iterations, seed) -> None:
    """Every option of ``run_demo``, before any work."""
    if not (np.isfinite(duration) and DEFAULT_PERIOD <= duration <= MAX_DURATION):
        raise ValueError(f"`duration` must cover one period of the excitation "
                         f"({DEFAULT_PERIOD:g} s, so that every base parameter is excited) and "
                         f"be at most {MAX_DURATION:g} s, got {duration:g} s")
    if not (np.isfinite(rate) and 1000 <= rate <= 10_000):
        raise ValueError(f"`rate` must be 1000 to 10000 Hz (the Panda's control rate is 1 kHz; "
                         f"the wrist's impedance loop needs it), got {rate:g}")
    if not (np.isfinite(noise_std) and noise_std >= 0):
        raise ValueError(f"`noise_std` must be a finite value >= 0 N m, got {noise_std:g}")
    if not (isinstance(iterations, int) and iterations >= 1):
        raise ValueError(f"`iterations` must be an integer >= 1, got {iterations!r}")
    if not (isinstance(seed, int) and seed >= 0):
        raise ValueError(f"`seed` must be an integer >= 0, got {seed!r}")
    if not str(output).strip():
        raise ValueError("`output` must name a folder, got an empty string")
    folder = Path(output)
    if not folder.parent.is_dir():
        raise ValueError(f"`output`: folder {str(folder.parent)!r} does not exist")
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"`output`: {str(folder)!r} exists and is not a folder")
    if folder.is_dir():  # what the run will replace: regular files only, checked before work
        for name in OUTPUT_NAMES:
            check_writable(folder / name, "`output`: file")


def run_demo(*, output: str | Path = "dynid-demo", duration: float = DEFAULT_DURATION,
             rate: float = 1000.0, noise_std: float = DEFAULT_NOISE_STD,
             iterations: int = DEFAULT_ITERATIONS, seed: int = 0, command: str = "",
             progress: Callable[[str], None] | None = None) -> DemoResult:
    """Run the workflow of the module docstring on the Panda twin, writing into ``output``
    (created; files already there are replaced). ``duration`` [s] and ``rate`` [Hz] of each
    simulated log, ``noise_std`` [N m] of the torques, ``iterations`` of the excitation
    search; ``command`` is quoted in the report; ``progress`` receives one line per stage."""
    from dynid.data.io import write_dataset
    from dynid.data.preprocess import prepare
    from dynid.evaluation.plots import save_figure, torques_figure
    from dynid.evaluation.report import build_report, write_report
    from dynid.evaluation.validate import validate_model
    from dynid.excitation.optimize import optimize_excitation, random_fourier
    from dynid.excitation.trajectory import save_trajectory
    from dynid.export.writers import export_robot, identified_robot
    from dynid.friction.models import ViscousCoulomb
    from dynid.identification.constrained.cls import identify_constrained
    from dynid.identification.linear.idim import identify
    from dynid.identification.retrieval.retrieve import retrieve_sdp
    from dynid.metrics import rmse
    from dynid.model.linear_model import save_model
    from dynid.robot.inertia import N_LINK_PARAMETERS
    from dynid.simulate.twin import SensorModel, simulate_closed_loop

    _check_options(output, duration, rate, noise_std, iterations, seed)
    folder = Path(output)
    say = progress or (lambda _line: None)
    seconds: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[stage] = now - clock
        clock = now

    truth = load_robot("panda")
    user = user_robot(truth)
    n = truth.n_joints
    friction = ViscousCoulomb.zeros(n)
    say(f"twin {truth.name}: {n} joints, {truth.total_mass:.2f} kg, truth friction "
        f"{truth.friction.name}; the user knows the kinematics, the CAD inertials "
        f"({user.total_mass:.2f} kg) and the bounds")

    say(f"1/7 excitation: optimising a {DEFAULT_PERIOD:g} s Fourier trajectory "
        f"(condition number, {iterations} iterations)")
    excitation = optimize_excitation(
        user, harmonics=5, period=DEFAULT_PERIOD, rate=50.0, friction=friction, starts=1,
        start_iterations=max(1, iterations // 2), max_iterations=iterations, seed=seed,
        progress=lambda line: say("    " + line))
    validation_trajectory = random_fourier(user, omega_f=2 * np.pi / DEFAULT_PERIOD,
                                           seed=seed + 1)
    lap("excitation")

    say(f"2/7 simulation: closed loop at {rate:g} Hz, 2 x {duration:g} s, joint impedance on "
        f"the CAD model, torque noise {noise_std:g} N m, 20-bit encoders")
    sensor = SensorModel(torque_noise_std=noise_std, position_resolution=ENCODER_RESOLUTION,
                         velocity_from_positions=True)
    raw_identification, raw_validation = (
        simulate_closed_loop(truth, trajectory, duration=duration, rate=rate,
                             stiffness=STIFFNESS, damping=DAMPING,
                             controller=load_robot("panda-cad"), sensor=sensor,
                             seed=seed + 10 + k, progress=lambda line: say("    " + line))
        for k, trajectory in enumerate((excitation.trajectory, validation_trajectory)))
    lap("simulation")

    say("3/7 preprocessing: zero-phase low-pass, differentiation, trimming")
    identification, validation = prepare(raw_identification), prepare(raw_validation)
    lap("preprocessing")

    say("4/7 identification: OLS and CLS-3 with viscous + Coulomb + offset friction")
    ols = identify(user, identification, friction=friction)
    cls3 = identify_constrained(user, identification, method="cls3", friction=friction)
    lap("identification")

    say("5/7 retrieval: a feasible full parameter set behind the OLS coefficients (SDP)")
    retrieval = retrieve_sdp(user, ols.base, ols.coefficients, prior=user.parameters)
    retrieved = ols.with_physical_parameters(retrieval.parameters, method="ols + sdp retrieval")
    lap("retrieval")

    say("6/7 validation on the second trajectory")
    models = {"ols": ols, "cls3": cls3.model, "retrieved": retrieved}
    reports = {name: validate_model(model, validation) for name, model in models.items()}
    floor = (rnea(truth, validation.q, validation.dq, validation.ddq)
             + truth.friction.torque_along(validation.t, validation.dq))
    lap("validation")

    say(f"7/7 outputs in {folder}/: logs, excitation, models, report, URDF, plot")
    names = dict(zip(_ROLES, OUTPUT_NAMES, strict=True))
    # everything is written into a staging folder beside the output, then moved in: a failed
    # run leaves the previous outputs as they were, never a mixture
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        files = {role: staging / name for role, name in names.items()}
        write_dataset(files["identification_log"], raw_identification)
        write_dataset(files["validation_log"], raw_validation)
        save_trajectory(files["excitation"], excitation.trajectory, duration=DEFAULT_PERIOD,
                        rate=rate, extra={"condition_number": excitation.condition_number})
        for name in DEMO_METHODS:
            models[name].report["command"] = command
            save_model(models[name], files[f"model_{name}"])
        write_report(files["report"], build_report(
            cls3.model, validation, reports["cls3"], identification=identification,
            data_name=f"the twin's validation log ({names['validation_log']})",
            command=command, title=f"dynid demo: {truth.name} twin, CLS-3 with friction"))
        export_robot(identified_robot(cls3.model), files["urdf"])
        predicted = cls3.model.predict(validation.q, validation.dq, validation.ddq,
                                       validation.t)
        save_figure(torques_figure(
            validation.t, validation.tau, predicted,
            rigid=cls3.model.rigid_torque(validation.q, validation.dq, validation.ddq),
            title=f"{truth.name} twin, validation: measured vs CLS-3"), files["plot"])
        lap("outputs")
        n_inertial = sum(1 for k in ols.base.independent if k < N_LINK_PARAMETERS * n)
        result = DemoResult(
            robot=truth.name, n_samples=identification.n_samples, rate_hz=rate,
            noise_std=[noise_std] * n, excitation_condition_number=excitation.condition_number,
            tracking_rms=list(raw_identification.metadata["tracking_rms"]),
            preprocessing=list(identification.metadata.get("preprocessing", [])),
            n_base_inertial=n_inertial, n_base_total=ols.base.rank,
            condition_number=ols.report["condition_number"],
            validation={name: {k: v for k, v in report.to_json().items() if k != "residuals"}
                        for name, report in reports.items()},
            rmse_truth=rmse(validation.tau, floor).tolist(), folder=str(folder), files=names,
            seconds=seconds)
        text = json.dumps(to_builtin(result.to_json(), nonfinite_as_none=True), indent=2)
        atomic_write(files["summary"], lambda tmp: tmp.write_text(text + "\n",
                                                                  encoding="utf-8"))
        created = not folder.exists()
        folder.mkdir(exist_ok=True)
        try:  # all moved in, or none (the previous outputs put back)
            move_all([files[role] for role in names], [folder / name for name in
                                                       names.values()])
        except BaseException:
            if created:
                shutil.rmtree(folder, ignore_errors=True)
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return result


def format_summary(result: DemoResult) -> str:
    """A readable summary of a demo run."""
    joints = range(1, len(result.rmse_truth) + 1)
    lines = [
        f"dynid demo: {result.robot} digital twin",
        f"  excitation               condition number {result.excitation_condition_number:.1f}"
        " (optimised, with friction columns)",
        f"  closed-loop logs         {result.n_samples} samples each after preprocessing, "
        f"{result.rate_hz:g} Hz; tracking RMS up to {max(result.tracking_rms) * 1e3:.2f} mrad",
        f"  preprocessing            {', '.join(result.preprocessing)}",
        f"  base parameters          {result.n_base_total} "
        f"({result.n_base_inertial} inertial + {result.n_base_total - result.n_base_inertial} "
        f"friction), condition number {result.condition_number:.1f}",
        "  validation on the second trajectory",
        "    method       rel. err. %  consistent   RMSE per joint [N m]",
        "                                        " + "".join(f"{j:>7d}" for j in joints),
    ]
    for name, figures in result.validation.items():
        mark = ("yes" if figures["consistent"] else "NO") if figures["physical"] else "n/a"
        lines.append(f"    {name:<12} {figures['relative_error_percent']:>10.2f}  {mark:>10}   "
                     + "".join(f"{v:7.3f}" for v in figures["rmse"]))
    lines.append(f"    {'truth':<12} {'':>10}  {'':>10}   "
                 + "".join(f"{v:7.3f}" for v in result.rmse_truth)
                 + "   (noise + preprocessing: the floor)")
    lines.append("  time [s]  " + ", ".join(f"{k} {v:.1f}" for k, v in result.seconds.items())
                 + f"; total {sum(result.seconds.values()):.1f}")
    folder = Path(result.folder)
    lines.append(f"  report: {folder / result.files['report']}")
    lines.append(f"  URDF:   {folder / result.files['urdf']}")
    lines.append(f"  logs, models, excitation, plot and summary.json beside them in {folder}/")
    return "\n".join(lines)
