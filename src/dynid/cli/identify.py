"""`dynid identify` (base parameters from a log: OLS, WLS, IDIM-IV, constrained least squares,
NLS) and `dynid identify-static` (reverse engineering from M(q), g(q) samples)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from dynid.cli._controller import control_law, controller_options
from dynid.cli._fit_options import (
    NONLINEAR_FRICTION,
    current_options,
    friction_options,
    linear_friction,
    nls_friction,
    scale_from_options,
)
from dynid.cli._log_options import (
    dask_client,
    delay_option,
    prepared,
    preprocessing_options,
    read_log,
    realigned,
    scheduler_option,
)
from dynid.cli._outputs import output_options
from dynid.cli._parsing import (
    SEED,
    Range,
    options_named,
    print_json,
    renamed_option,
    stderr_progress,
)
from dynid.cli._robot_options import (
    ROBOT_HELP,
    bounds_file,
    loaded_robot,
    robot_argument,
    robot_options,
)

# `dynid identify --method`: the estimators of dynid.identification.ESTIMATORS, IDIM-IV,
# dynid.identification.CONSTRAINED_METHODS and NLS, each with its own options here, then
# every other method of dynid.identification.IDENTIFICATION_METHODS through the one contract
# (literal: `--help` imports nothing heavy; a test holds it to the registry)
BESPOKE_METHODS = ("ols", "wls", "iv", "cls1", "cls2", "cls3", "log-cholesky", "nls")
REGISTERED_METHODS = ("irls-huber", "irls-tukey", "tls", "ml", "ridge", "elastic-net",
                      "pc-irls-huber", "pc-irls-tukey", "pc-ridge", "pc-elastic-net",
                      "didim", "pc-didim", "cloe", "clie", "rls", "ekf", "srekf", "ukf",
                      "srukf")
# the simulation-based methods: they re-simulate the closed loop that recorded the logs
_CLOSED_LOOP = ("didim", "pc-didim", "cloe", "clie")
IDENTIFY_METHODS = (*BESPOKE_METHODS, *REGISTERED_METHODS)
# the options of the registered methods: --flag -> (the fit's keyword, the methods taking it)
_PENALISED = ("ridge", "elastic-net", "pc-ridge", "pc-elastic-net")
# the registered methods that give physical link parameters (consistent by construction)
_CONSISTENT_REGISTERED = ("pc-irls-huber", "pc-irls-tukey", "pc-ridge", "pc-elastic-net",
                          "pc-didim")


def register(commands: argparse._SubParsersAction) -> None:
    identify = commands.add_parser("identify", help="identify base parameters from a log")
    identify.add_argument("robot", help=ROBOT_HELP)
    identify.add_argument("data", nargs="+",
                          help="one or more logs, identified together, each with its own "
                               "torque offsets: CSV (t, q1..qn, dq1..dqn, tau1..taun or "
                               "current1..currentn[, ddq1..ddqn]; other columns with "
                               "--columns), NPZ (t, q, dq, tau or current[, ddq]), a ROS 2 bag "
                               "(.mcap: sensor_msgs/JointState, the robot's joints by name) or "
                               "a Panda log folder")
    identify.add_argument("--method", choices=IDENTIFY_METHODS, default="ols",
                          help="estimator (default %(default)s); iv: IDIM-IV for closed-loop "
                               "logs, needs --reference; cls1/cls2/cls3/log-cholesky: "
                               "physically constrained full parameters (needs bounds in the "
                               "robot file); nls: physical parameters and a friction model "
                               "jointly; irls-huber/irls-tukey: robust to outliers; tls, ml: "
                               "errors in variables; ridge, elastic-net: penalised; pc-*: "
                               "the same under the CLS-3 constraints; didim, pc-didim, cloe, "
                               "clie: closed-loop logs re-simulated (need --reference and "
                               "the controller: --natural-frequency or --stiffness/--damping); "
                               "rls: recursive least squares (--forgetting); ekf, srekf, ukf, "
                               "srukf: Kalman filters on the state and the parameters")
    identify.add_argument("--prior", metavar="ROBOT", type=robot_argument,
                          help="constrained: regularise towards this robot's parameters "
                               "(default: the robot's own)")
    identify.add_argument("--prior-weight", metavar="W|auto", type=_prior_weight,
                          help="constrained: the regulariser's weight against the normalised "
                               "fit (default 1e-3 euclidean, 1e-6 entropic); auto: chosen by "
                               "the held-out error over time blocks of the log(s)")
    identify.add_argument("--bounds", metavar="BOUNDS.yaml",
                          help="constrained, nls: parameter bounds (the robot file's `bounds:` "
                               "block form; default the robot's own, or derived from a URDF)")
    identify.add_argument("--rotor-inertia", action=argparse.BooleanOptionalAction,
                          help="identify each drive's reflected rotor inertia Ia_j (default: "
                               "when the robot file states rotor inertias)")
    identify.add_argument("--structure", choices=["auto", "fixed"], default="auto",
                          help="auto (default): each joint keeps the rotor inertia, friction "
                               "and offset terms the data support, chosen by the held-out "
                               "error over time blocks (what --rotor-inertia/"
                               "--no-rotor-inertia or --friction state stays as stated); "
                               "fixed: the options' terms on every joint")
    identify.add_argument("--offsets", choices=["per-log", "shared"], default="per-log",
                          help="several logs: each its own torque offsets (per-log, default) "
                               "or one set for all")
    current_options(identify)
    identify.add_argument("--max-iterations", type=Range(int, 1, 1_000_000), metavar="N",
                          help="nls: the Levenberg-Marquardt iterations' budget (default "
                               "1000; a fit stops on its tolerances first and says which)")
    renamed_option(identify, "--max-evaluations", "--max-iterations")
    identify.add_argument("--regulariser", choices=["euclidean", "entropic"],
                          help="constrained: distance to the prior (default euclidean)")
    identify.add_argument("--parameters-output", metavar="PARAMS.yaml",
                          help="constrained, nls: write the robot with the identified link "
                               "parameters (nls: and friction)")
    identify.add_argument("--lasso", type=Range(float, 0, 1e6), metavar="LAMBDA",
                          help="nls: L1 weight on the products of inertia (Gilbert eq. 29; "
                               "default 0)")
    identify.add_argument("--max-samples", type=Range(int, 10, 10_000_000), metavar="N",
                          help="nls: decimate longer logs to N samples for the fit "
                               "(default 10000)")
    identify.add_argument("--reference", metavar="TRAJ", nargs="+",
                          help="iv, didim, pc-didim, cloe, clie: the trajectory the controller "
                               "tracked (one for all logs, or one per log)")
    controller_options(identify, "iv, didim, pc-didim, cloe, clie")
    identify.add_argument("--control-rate", type=Range(float, high=100_000, above=0),
                          metavar="HZ",
                          help="iv, didim, pc-didim, cloe, clie: the controller's rate "
                               "(default: the logs' sampling rate; iv takes logs sampled "
                               "every whole number of control periods)")
    identify.add_argument("--velocity-from-positions", action="store_true", default=None,
                          help="iv, didim, pc-didim, cloe, clie: the controller fed back encoder "
                               "differences, not measured velocities")
    renamed_option(identify, "--noise-std", "--noise", nargs="+")
    identify.add_argument("--noise", type=Range(float, high=1e6, above=0),
                          nargs="+", metavar="SIGMA",
                          help="wls: torque noise std per joint [N m] (default: estimated "
                               "from OLS residuals)")
    identify.add_argument("--alpha", type=Range(float, 0, 1e12), metavar="A",
                          help="ridge, elastic-net, pc-ridge, pc-elastic-net: the penalty's "
                               "weight on 1/2 |tau - W x|^2 (default 1)")
    identify.add_argument("--l1-ratio", type=Range(float, 0, 1), metavar="R",
                          help="elastic-net, pc-elastic-net: the L1 share of the penalty "
                               "(default 0.5; 1: lasso, 0: ridge)")
    identify.add_argument("--forgetting", type=Range(float, 0.5, 1), metavar="LAMBDA",
                          help="rls: the forgetting factor per sample (default 1: none; 0.999 "
                               "at 1 kHz remembers about 1 s)")
    identify.add_argument("--regressor-noise", type=Range(float, high=1e6, above=0),
                          nargs="+", metavar="SIGMA",
                          help="ml: the noise std of the regressor's columns (one for all, "
                               "or one per column); its torque noise is --noise (one value)")
    friction_options(identify, nonlinear=True)
    robot_options(identify)
    scheduler_option(identify, "fold the logs (ols, wls, constrained)")
    preprocessing_options(identify)
    delay_option(identify, "auto")
    identify.add_argument("--drop-above", type=Range(float, high=1e6, above=0), metavar="PCT",
                          help="drop coefficients whose relative std exceeds PCT %% and "
                               "re-estimate (Gaz: 30; default: keep all)")
    bootstrap_options(identify, "the method's fit")
    identify.add_argument("-o", "--output", metavar="MODEL.yaml", help="write the model here")
    identify.add_argument("--keep-unconverged", action="store_true",
                          help="an iterative method (iv, nls, didim, cloe, clie, irls, ekf, "
                               "ukf, ...) that diverged or stopped before its tolerance was "
                               "met: write its model anyway, `converged: false` and the reason "
                               "in its report (the exit status is still "
                               f"{UNCONVERGED_STATUS}; without this option no file is written)")
    output_options(identify, quiet=True)
    identify.set_defaults(handler=_identify, output_suffixes={
        "-o": (".yaml", ".yml"), "--parameters-output": (".yaml", ".yml")})

    static = commands.add_parser(
        "identify-static", help="reverse-engineer a controller's model from M(q), g(q) samples")
    static.add_argument("robot", help=ROBOT_HELP)
    static.add_argument("file", help="NPZ (q, M, g) or CSV (q1..qn, M11, M21, M22, ..., "
                                     "g1..gn)")
    static.add_argument("--joint1-gravity", choices=["auto", "keep", "drop"], default="auto",
                        help="g1 rows: dropped when identically zero (auto, default)")
    static.add_argument("--method", choices=["rref", "qr"], default="rref",
                        help="how base-parameter representatives are chosen (default "
                             "%(default)s)")
    static.add_argument("--drop-above", type=Range(float, high=1e6, above=0), metavar="PCT",
                        help="drop coefficients whose relative std exceeds PCT %% (Gaz: 30; "
                             "default: keep all)")
    static.add_argument("-o", "--output", metavar="COEFFICIENTS.yaml",
                        help="write the model here")
    robot_options(static)
    output_options(static)
    static.set_defaults(handler=_identify_static, output_suffixes={"-o": (".yaml", ".yml")})


# the exit status of a fit that did not converge (an iterative method stopped by its budget,
# by no step lowering its error, or diverged; a filter's estimate that is no body on the log's
# poses): its results are printed, the reason on stderr, and no model is written unless
# --keep-unconverged (dynid.identification.estimate: one notion of convergence)
UNCONVERGED_STATUS = 3


# dynid.identification.MAX_REPLICATES (literal: `--help` imports nothing heavy)
MAX_REPLICATES = 100_000


def bootstrap_options(parser: argparse.ArgumentParser, what: str) -> None:
    """--bootstrap B, --block-length, --seed (shared with `dynid compare`)."""
    parser.add_argument("--bootstrap", type=Range(int, 2, MAX_REPLICATES), metavar="B",
                        help=f"B bootstrap replicates of {what} (residual moving blocks, "
                             "refitted): standard deviations and 95 %% percentile intervals "
                             "that hold for coloured noise and constrained methods (200: "
                             "stds; 1000: stable bounds)")
    parser.add_argument("--block-length", type=block_length, metavar="auto|N",
                        help="bootstrap: residual block length in samples (default auto: "
                             "Politis-White on the residuals)")
    parser.add_argument("--seed", type=SEED,
                        help="bootstrap: random seed (default: fresh, recorded in the output)")


def block_length(text: str):
    """`--block-length`: auto, or a number of samples >= 1."""
    if text == "auto":
        return text
    return Range(int, 1, 10**12)(text)


def check_bootstrap_options(args: argparse.Namespace) -> None:
    """--block-length and --seed describe a bootstrap: only with --bootstrap."""
    for flag, value in (("--block-length", args.block_length), ("--seed", args.seed)):
        if value is not None and args.bootstrap is None:
            raise ValueError(f"`{flag}` is for --bootstrap B (the bootstrap's replicates)")


def _identify(args: argparse.Namespace) -> int:
    from dynid.data import split
    from dynid.identification import CONSTRAINED_METHODS

    _check_method_options(args, CONSTRAINED_METHODS)
    check_bootstrap_options(args)
    robot = loaded_robot(args)
    if args.validate is not None and not 0 < args.validate < 1:
        raise ValueError(f"`--validate` must be a fraction in (0, 1), got {args.validate}")
    if args.method in _CLOSED_LOOP:  # the loop re-simulated: the log as it was recorded
        given = [flag for flag, dest in (("--resample", "resample"), ("--cutoff", "cutoff"),
                                         ("--trim", "trim"), ("--as-is", "as_is"),
                                         ("--mmap", "mmap")) if getattr(args, dest)]
        if given:
            raise ValueError(f"`--method {args.method}` re-simulates the closed loop on the "
                             f"log as it was recorded (one sample per control period, no "
                             f"filter): it excludes {', '.join(given)}")
        logs = [read_log(args, path, robot) for path in args.data]
    else:
        logs = _with_delay(args, robot, [prepared(args, path, robot) for path in args.data])
    steps = logs[0].metadata.get("preprocessing", [])
    checks = None
    if args.validate is not None:  # the final fraction of every log is held out
        pairs = [split(log, 1.0 - args.validate) for log in logs]
        logs, checks = [fit for fit, _ in pairs], [check for _, check in pairs]
    with options_named(LIBRARY_KEYWORDS):  # the fits' errors name these options
        return _fit(args, robot, logs, checks, steps)


def _with_delay(args, robot, logs):
    """The logs realigned for their torque channel's lag (--delay: estimated with the fit's
    model structure, unless given; a log used as it is, --as-is, only with a given lag; a
    current log only with a given lag: its gains are unknown yet)."""
    if args.delay != "auto":
        return realigned(logs, args.delay) if args.delay else logs
    if getattr(args, "as_is", False) or any(log.effort != "torque" for log in logs):
        return logs
    from dynid.identification.delay import compensated
    from dynid.identification.linear.idim import linear_template
    from dynid.model import default_friction

    # the structure the fit starts from: under --structure auto, every rotor column
    rotor = ((getattr(args, "structure", "fixed") == "auto" or bool(robot.rotor_inertia.any()))
             if args.rotor_inertia is None else args.rotor_inertia)
    friction = (default_friction(robot) if args.friction in NONLINEAR_FRICTION
                else linear_friction(robot, args))
    logs, args.delay_estimate = compensated(
        linear_template(robot, friction, rotor_inertia=rotor), logs)
    return logs


# the library keywords through which `dynid identify` passes its options (and what stands for
# what it does not offer: the RK4 substeps of a re-simulated loop follow from its rate; the
# start of the simulation-based methods is the robot's own parameters)
LIBRARY_KEYWORDS = {
    "reference": "--reference", "references": "--reference", "controller": "--controller",
    "natural_frequency": "--natural-frequency", "stiffness": "--stiffness",
    "damping": "--damping", "rate": "--control-rate", "substeps": "--control-rate",
    "velocity_from_positions": "--velocity-from-positions", "start": "robot", "logs": "data",
    "friction": "--friction", "noise_std": "--noise", "torque_noise": "--noise",
    "regressor_noise": "--regressor-noise", "alpha": "--alpha", "l1_ratio": "--l1-ratio",
    "forgetting": "--forgetting", "max_iterations": "--max-iterations", "bounds": "--bounds",
    "prior": "--prior", "weight": "--prior-weight", "regulariser": "--regulariser",
    "lasso": "--lasso", "max_samples": "--max-samples", "offsets": "--offsets",
    "rotor_inertia": "--rotor-inertia", "drop_above_percent": "--drop-above",
    "replicates": "--bootstrap", "block_length": "--block-length", "seed": "--seed",
}


def _fit(args: argparse.Namespace, robot, logs, checks, steps) -> int:
    """``args.method`` on the logs, then the model shown and written."""
    from dynid.identification import CONSTRAINED_METHODS, ESTIMATORS, identify

    currents = scale_from_options(args, robot, logs)
    if currents and args.method == "wls":
        raise ValueError("`--method wls`: motor currents are fitted with each joint weighted "
                         "by its own current noise already (--method ols), or with a "
                         "consistent method (cls1, cls2, cls3, log-cholesky, nls)")
    if args.method == "iv":
        if currents:
            raise ValueError("`--method iv` fits torque logs: motor currents are identified "
                             "with their drive gains by ols, cls1, cls2, cls3, log-cholesky or "
                             "nls")
        return _identify_iv(args, robot, logs, checks, steps)
    if args.method == "nls":
        return _identify_nls(args, robot, logs, checks, steps, currents)
    if args.method in CONSTRAINED_METHODS:
        return _identify_constrained(args, robot, logs, checks, steps, currents)
    if args.method in REGISTERED_METHODS:
        return _identify_registered(args, robot, logs, checks, steps, currents)
    if currents:
        return _identify_currents(args, robot, logs, checks, steps, currents)
    options = {"drop_above_percent": args.drop_above}
    if args.method == "wls" and args.noise is not None:
        if len(args.noise) != robot.n_joints:
            raise ValueError(f"`--noise` needs {robot.n_joints} values (one per joint), "
                             f"got {len(args.noise)}")
        if len(logs) > 1:
            raise ValueError("`--noise` gives one level per joint; with several logs WLS "
                             "estimates each log's own: leave it out")
        options["noise_std"] = args.noise
    fit = {"friction": linear_friction(robot, args),
           "estimator": ESTIMATORS[args.method](**options),
           "rotor_inertia": args.rotor_inertia, "offsets": args.offsets}
    if args.structure == "auto":  # what the options leave open is chosen from the data
        fit.update(structure="auto", friction=None if args.friction is None else fit["friction"])
    with dask_client(args) as client:
        model = identify(robot, _one_or_all(logs), client=client, **fit)
        if "structure" in model.report:  # the bootstrap's refits keep the point fit's choice
            fit.update(structure=structure_of(model), friction=None, rotor_inertia=None)
        elif args.structure == "auto":  # logs too short to choose: as given
            fit.update(structure="fixed", friction=linear_friction(robot, args))
        model, spread = _bootstrapped(args, robot, logs, model, fit, client)
    return _show_identified(args, model, logs, checks, steps,
                            f"{robot.name}: {args.method.upper()} on {_names(args)} "
                            f"(friction {model.friction.name})", spread=spread,
                            lines=_structure_lines(model))


def _bootstrapped(args, robot, logs, model, options: dict, client=None):
    """With --bootstrap: the model with its bootstrap in the report, and the Bootstrap;
    else the model and None. The replicates refit ``args.method`` with ``options`` (the
    point fit's) on local processes (OLS runs here: its replicates are solved together), or
    on the workers of --scheduler."""
    if args.bootstrap is None:
        return model, None
    from dynid._parallel import usable_cpus
    from dynid.identification import bootstrap

    if client is not None:
        executor = client.get_executor()
    elif args.method == "ols" or usable_cpus() == 1:
        executor = None  # OLS replicates are solved together: nothing to spread
    else:
        executor = "processes"
    spread = bootstrap(robot, _one_or_all(logs), method=args.method, model=model,
                       replicates=args.bootstrap, block_length=args.block_length or "auto",
                       seed=args.seed, executor=executor, progress=stderr_progress(args),
                       **options)
    return spread.annotate(model), spread


def _one_or_all(logs):
    return logs[0] if len(logs) == 1 else logs


def structure_of(model):
    """The structure a model's fit chose (its report's), to refit with."""
    from dynid.identification.structure import Structure

    return Structure.from_json(model.report["structure"], model.friction)


def _structure_lines(model) -> tuple[str, ...]:
    """The chosen structure's table (--structure auto), and what the method applied of it."""
    payload = model.report.get("structure")
    if payload is None:
        return ()
    from dynid.identification.structure import Structure

    lines = Structure.from_json(payload, None).lines(model.robot.joint_names)
    if payload.get("applied"):
        lines.append(f"    applied: {payload['applied']}")
    return tuple(lines)


def _chosen_rotor(args, robot, logs, friction=None):
    """--structure auto for a method that takes the rotor-inertia switch only (its friction
    columns as the options say): the switch the data choose (on when some joint's own rotor
    inertia is supported) and the structure, or the option and None (--structure fixed, or
    --rotor-inertia/--no-rotor-inertia given)."""
    if args.structure != "auto" or args.rotor_inertia is not None:
        return args.rotor_inertia, None
    from dynid.identification.structure import TooShortError, choose_structure
    from dynid.model import default_friction

    friction = default_friction(robot) if friction is None else friction
    try:
        structure = choose_structure(robot, logs, friction=friction, offsets=args.offsets)
    except TooShortError:  # no blocks to hold out: the options as given
        return args.rotor_inertia, None
    return structure.rotor_inertia, structure


def _noted(model, structure, method: str):
    """``model`` with ``structure`` in its report, and what ``method`` applied of it."""
    if structure is not None:
        model.report["structure"] = {
            **structure.to_json(),
            "applied": f"the rotor inertia only: --method {method} keeps every joint's "
                       "friction columns and gives every joint a rotor column when some "
                       "joint's own is chosen"}
    return model


def _names(args) -> str:
    return ", ".join(args.data) if len(args.data) <= 3 else \
        f"{len(args.data)} logs ({args.data[0]}, ...)"


def _identify_currents(args, robot, logs, checks, steps, currents: dict) -> int:
    """Motor-current logs by least squares: the drive gains with the base parameters
    (Gautier & Briot 2014)."""
    from dynid.identification import identify_drive_gains

    fit = {"friction": linear_friction(robot, args), "rotor_inertia": args.rotor_inertia,
           "offsets": args.offsets, **currents}
    model = identify_drive_gains(robot, _one_or_all(logs), **fit)
    model, spread = _bootstrapped(args, robot, logs, model, fit)
    return _show_identified(args, model, logs, checks, steps,
                            f"{robot.name}: drive gains and base parameters from motor "
                            f"currents on {_names(args)} (Gautier & Briot; friction "
                            f"{model.friction.name})", spread=spread)


def _gain_lines(model) -> list[str]:
    """The drive gains of a model from motor currents, with their relative std."""
    if model.drive_gains is None:
        return []
    return ["  drive gains [N m/A] (relative std %):"] + [
        f"    {name:<16} {value:>10.5g}  "
        + ("known" if std == 0 else f"{100 * std / abs(value):>8.3g}")
        for name, value, std in zip(model.robot.joint_names, model.drive_gains,
                                    model.drive_gains_std, strict=True)]


def _prior_weight(text: str):
    """`--prior-weight`: a number >= 0, or auto."""
    if text == "auto":
        return text
    return Range(float, 0, 1e6)(text)


def _check_method_options(args: argparse.Namespace, constrained: Sequence[str]) -> None:
    """Each method-specific option of `dynid identify` with a method that uses it."""
    uses = {
        "--reference": ("reference", ("iv", *_CLOSED_LOOP)),
        "--natural-frequency": ("natural_frequency", ("iv", *_CLOSED_LOOP)),
        "--stiffness": ("stiffness", ("iv", *_CLOSED_LOOP)),
        "--damping": ("damping", ("iv", *_CLOSED_LOOP)),
        "--controller": ("controller", ("iv", *_CLOSED_LOOP)),
        "--control-rate": ("control_rate", ("iv", *_CLOSED_LOOP)),
        "--velocity-from-positions": ("velocity_from_positions", ("iv", *_CLOSED_LOOP)),
        "--noise": ("noise", ("wls", "ml")),
        "--alpha": ("alpha", _PENALISED),
        "--l1-ratio": ("l1_ratio", ("elastic-net", "pc-elastic-net")),
        "--regressor-noise": ("regressor_noise", ("ml",)),
        "--forgetting": ("forgetting", ("rls",)),
        "--drop-above": ("drop_above", ("ols", "wls")),
        "--prior": ("prior", tuple(constrained)),
        "--regulariser": ("regulariser", tuple(constrained)),
        "--parameters-output": ("parameters_output",
                                (*constrained, "nls", *_CONSISTENT_REGISTERED)),
        "--lasso": ("lasso", ("nls",)),
        "--max-samples": ("max_samples", ("nls",)),
        "--max-iterations": ("max_iterations", ("nls", *_CLOSED_LOOP)),
        "--prior-weight": ("prior_weight", tuple(constrained)),
        "--bounds": ("bounds", (*constrained, "nls")),
        "--scheduler": ("scheduler", ("ols", "wls", *constrained)),
    }
    for flag, (attribute, methods) in uses.items():
        if getattr(args, attribute) is not None and args.method not in methods:
            raise ValueError(f"`{flag}` is for --method {'|'.join(methods)}, not "
                             f"{args.method}")


def _errors(model, logs) -> tuple:
    """RMSE per joint [N m] over ``logs`` (each with the model's offsets for it: its own from
    a fit over several logs, else the model's), and the RMS measured torque."""
    import numpy as np

    own = {entry["source"]: np.array(entry["offsets"])
           for entry in model.report.get("log_offsets", [])}
    mean = np.mean(list(own.values()), axis=0) if own else 0.0  # the model's offsets
    from dynid.data.dataset import release_pages
    from dynid.evaluation.validate import VALIDATION_CHUNK

    stateful = model.fitted_friction is not None and model.fitted_friction.stateful
    squares, torques, count = 0.0, 0.0, 0
    for log in logs:
        shift = own.get(str(log.metadata.get("source")))
        step = log.n_samples if stateful else VALIDATION_CHUNK  # a long log in chunks
        for start in range(0, log.n_samples, step):
            part = log.select(slice(start, start + step))
            measured = model.measured_torque(part)
            predicted = model.predict(part.q, part.dq, part.ddq, part.t)
            if shift is not None and len(own) > 1:
                predicted = predicted + shift - mean
            squares = squares + ((measured - predicted) ** 2).sum(axis=0)
            torques = torques + (measured**2).sum(axis=0)
            release_pages(log, slice(start, start + step))
        count += log.n_samples
    return np.sqrt(squares / count), np.sqrt(torques / count), count


# poses of the M(q) > 0 check after a fit (as `dynid validate --poses`' default)
BODY_POSES = 1000


def _body_check(model) -> dict:
    """Whether the estimate is a body: ``M^(q) > 0`` on ``BODY_POSES`` poses (dynid.evaluation.
    model_mass_matrix_check); a model whose M^ is not finite is none."""
    import numpy as np

    from dynid.evaluation import model_mass_matrix_check

    with np.errstate(over="ignore", invalid="ignore"):
        try:
            return model_mass_matrix_check(model, n_samples=BODY_POSES)
        except np.linalg.LinAlgError:  # inf or NaN in M^
            return {"n_samples": BODY_POSES, "positive_fraction": 0.0,
                    "min_eigenvalue": float("nan"), "positive": False}


def _body_line(body: dict, args) -> str:
    """One line: M^(q) > 0 on the sampled poses, and when not, which command gives a body."""
    from dynid.metrics import cell

    line = (f"  M(q) > 0 on {100 * body['positive_fraction']:.1f} % of {body['n_samples']} "
            f"sampled poses (smallest eigenvalue {cell(body['min_eigenvalue'], '.3g')})")
    if body["positive"]:
        return line + ": a body, to simulate and to control with"
    return (line + ": NOT a body (it cannot be simulated, exported as a physical URDF or "
            f"trusted in a controller); `dynid identify {args.robot} ... --method cls3` "
            f"identifies a consistent model, `dynid retrieve {args.robot} MODEL.yaml` finds a "
            "feasible set behind these coefficients")


class NotABodyWarning(UserWarning):
    """An identified model whose ``M(q)`` is not positive definite on sampled poses."""


def _warn_not_a_body(body: dict, args) -> None:
    import warnings

    warnings.warn(f"--method {args.method}: the model is not a body: M(q) > 0 on only "
                  f"{100 * body['positive_fraction']:.1f} % of {body['n_samples']} sampled "
                  "poses (it cannot be simulated or trusted in a controller; --method cls3 "
                  "identifies a consistent model)", NotABodyWarning, stacklevel=2)


def _show_identified(args, model, logs, checks, steps, title: str, *,
                     extra: dict | None = None, lines: tuple[str, ...] = (),
                     parameters=None, spread=None,
                     convergence: tuple[bool, str] | None = None) -> int:
    """Save, then print (or JSON, with ``extra`` merged in) an identified model with its
    identification and held-out RMSE (each log with its own offsets); ``lines`` close the
    text; ``parameters``: the robot with the full link parameters, for
    ``--parameters-output``; ``convergence``: ``(converged, reason)`` of an iterative method.

    Everything is computed and formatted first; the model and the parameters are then
    written together (both or neither), and only then printed: a failure leaves no file.
    An unconverged fit is printed all the same, its reason on stderr, and written only with
    --keep-unconverged (``converged: false`` in the model's report); the status is then
    ``UNCONVERGED_STATUS``. A model that is not a body is warned about on stderr.
    """
    lines = (*lines, *_physical_identifiability(args, model))
    if convergence is not None:
        from dynid.identification.estimate import with_convergence

        model = with_convergence(model, *convergence)
    unconverged = convergence is not None and not convergence[0]
    if unconverged:
        _say_unconverged(args, convergence[1])
    written = not unconverged or args.keep_unconverged  # the model and the link parameters
    output = args.output if written else None
    if not written:  # the JSON names no file that is not written
        extra = {key: {**value, "parameters_file": None}
                 if isinstance(value, dict) and "parameters_file" in value else value
                 for key, value in (extra or {}).items()}
    status = UNCONVERGED_STATUS if unconverged else 0
    if parameters is not None and model.drive_gains is not None:
        from dynid.export import with_identified_gains

        parameters = with_identified_gains(parameters, model.drive_gains)
    error, _, _ = _errors(model, logs)
    if "torque_delay_s" in logs[0].metadata:  # validate pairs its logs the same way
        model.report["torque_delay_s"] = logs[0].metadata["torque_delay_s"]
    if getattr(args, "delay_estimate", None) is not None and model.std_kind != "unknown":
        from dynid.identification.delay import with_delay_std

        model = with_delay_std(model, args.delay_estimate)
    held_out = rms = None
    if checks is not None:
        held_out, rms, count = _errors(model, checks)
    offsets = model.report.get("log_offsets")
    band = None if spread is None else _torque_band(spread, logs, checks)
    body = _body_check(model)
    if not body["positive"]:
        _warn_not_a_body(body, args)
    gains = None if model.drive_gains is None else abs(model.drive_gains)
    if args.json:
        payload = {"robot": model.robot.name, "friction": model.friction.name,
                   "preprocessing": steps, **_coefficient_payload(model), "rmse": error,
                   "mass_matrix": body,
                   "validation": None if checks is None else {
                       "n_samples": count, "rmse": held_out, "rms_torque": rms},
                   "model_file": output, **(extra or {})}
        if gains is not None:  # a model from motor currents: its gains, errors in A too
            payload["drive_gains"] = model.report["drive_gains"]
            payload["rmse_current"] = error / gains
            if checks is not None:
                payload["validation"]["rmse_current"] = held_out / gains
        if band is not None:
            payload["bootstrap_torque_band"] = band
        _write(args, model, parameters, written=written)
        print_json(payload)
        return status
    text = _coefficient_lines(model, title)
    if steps:
        text.append("  preprocessing: " + ", ".join(steps))
    if offsets is not None and len(offsets) > 1:
        text.append("  torque offsets per log [N m] (std):")
        text += [f"    {entry['source']}: " + " ".join(
            f"{v:.3g} ({s:.2g})" for v, s in zip(entry["offsets"], entry["std"], strict=True))
            for entry in offsets]
    text.append("  RMSE per joint [N m], identification: " + " ".join(f"{v:.4g}" for v in error))
    if gains is not None:
        text.append("  RMSE per joint [A], identification: "
                    + " ".join(f"{v:.4g}" for v in error / gains))
    if held_out is not None:
        text.append(f"  RMSE per joint [N m], validation ({count} held-out samples): "
                    + " ".join(f"{v:.4g}" for v in held_out))
        if gains is not None:
            text.append("  RMSE per joint [A], validation: "
                        + " ".join(f"{v:.4g}" for v in held_out / gains))
    if band is not None:
        text.append(f"  predicted torque, mean half-width of its {band['level']:.0%} bootstrap "
                    f"band per joint [N m], {band['data']}: "
                    + " ".join(f"{v:.3g}" for v in band["mean_half_width"]))
    text.append(_body_line(body, args))
    text.extend(_gain_lines(model))
    text.extend(lines)
    if output:
        text.append(f"  model written to {output}")
    if written and parameters is not None and args.parameters_output:
        text.append(f"  link parameters written to {args.parameters_output}")
    _write(args, model, parameters, written=written)
    print("\n".join(text))
    return status


def _convergence(model) -> tuple[bool, str] | None:
    """``(converged, reason)`` from a model's report (``with_convergence``), None when its
    method does not iterate."""
    if "converged" not in model.report:
        return None
    converged = bool(model.report["converged"])
    return converged, str(model.report.get("convergence", "converged" if converged
                                           else "not converged"))


def _say_unconverged(args, reason: str) -> None:
    """The reason an iterative fit did not converge, on stderr, and what becomes of its
    model."""
    import sys

    wanted = args.output or getattr(args, "parameters_output", None)
    fate = ("written all the same (--keep-unconverged), `converged: false` in its report"
            if args.keep_unconverged else
            "NOT written (--keep-unconverged writes it)" if wanted else
            "not written")
    print(f"dynid: --method {args.method} did not converge: {' '.join(reason.split())}; "
          f"the model is {fate}; exit status {UNCONVERGED_STATUS}", file=sys.stderr)


# the methods whose model holds full physical parameters, each with what holds the rest
_PHYSICAL = ("cls1", "cls2", "cls3", "log-cholesky", "nls")


def _physical_identifiability(args, model) -> list[str]:
    """For a fit of full physical parameters (``_PHYSICAL``): which of them the data determine
    and which the prior or a bound holds (``dynid.model.identifiability``), put in the
    model's report (so in `--json` and the saved model) and returned as the text's lines."""
    if args.method not in _PHYSICAL:
        return []
    from dynid.model.identifiability import bounds_at, physical_identifiability

    robot = model.robot
    at, notes = bounds_at(robot.parameters, _bounds(args, robot) or robot.bounds,
                          link_names=robot.link_names, joint_names=robot.joint_names,
                          rotor=robot.rotor_inertia if model.rotor_inertia else None)
    if model.report.get("prior_weight") == 0:  # no pull: the solver's choice, not the prior's
        notes.append("--prior-weight 0: what the data leave is set by the solver within the "
                     "bounds, not by the prior")
    found = physical_identifiability(
        model.base, robot.n_joints, rotor_inertia=model.rotor_inertia,
        link_names=robot.link_names, joint_names=robot.joint_names, std=model.std, bounds=at,
        notes=notes)
    model.report["identifiability"] = found.to_json()
    return found.lines()


def _torque_band(spread, logs, checks, level: float = 0.95) -> dict:
    """The mean half-width per joint of the predicted torques' bootstrap band, on the first
    held-out log (--validate) or else the first identification log."""
    data = checks[0] if checks else logs[0]
    lower, upper = spread.torque_interval(data, level)
    return {"level": level, "data": "validation" if checks else "identification",
            "n_samples": data.n_samples,
            "mean_half_width": (0.5 * (upper - lower).mean(axis=0)).tolist()}


def _write(args, model, parameters=None, *, written: bool = True) -> None:
    """The model (``-o``) and the link parameters (``--parameters-output``): both or neither
    (neither when not ``written``: an unconverged fit without --keep-unconverged)."""
    if not written:
        return
    from dynid._files import atomic_write_all
    from dynid.model import save_model
    from dynid.robot import save_robot

    writes = []
    if args.output:
        model.report["command"] = args.command_line
        writes.append((args.output, lambda tmp: save_model(model, tmp)))
    if parameters is not None and getattr(args, "parameters_output", None):
        writes.append((args.parameters_output, lambda tmp: save_robot(parameters, tmp)))
    if writes:
        atomic_write_all(writes)


def _identify_iv(args, robot, logs, checks, steps) -> int:
    from dynid.identification import identify_iv

    references, controller = _closed_loop(args, robot, logs)
    friction = linear_friction(robot, args)
    rotor, structure = _chosen_rotor(args, robot, logs, friction)
    fit = {"reference": references, "controller": controller,
           "friction": friction, "rotor_inertia": rotor, "offsets": args.offsets}
    model = identify_iv(robot, _one_or_all(logs), **fit)
    model, spread = _bootstrapped(args, robot, logs, model, fit)
    model = _noted(model, structure, "iv")
    return _show_identified(args, model, logs, checks, steps,
                            f"{robot.name}: IV on {_names(args)} "
                            f"({model.report['iterations']} iterations)", spread=spread,
                            lines=_structure_lines(model),
                            convergence=_convergence(model))


def _identify_constrained(args, robot, logs, checks, steps, currents: dict) -> int:
    """CLS-1/2/3 or log-Cholesky: the model predicts with the constrained parameters; the
    full link parameters go to ``--parameters-output`` as a robot file. Motor-current logs
    (``currents``: what fixes their scale) give the drive gains with them."""
    import dataclasses

    from dynid.identification import identify_constrained

    prior = loaded_robot(args, args.prior, "--prior").parameters if args.prior else None
    if prior is not None and prior.shape != robot.parameters.shape:
        raise ValueError(f"`--prior`: {args.prior!r} has {prior.shape[0]} links, the robot "
                         f"{robot.n_joints}")
    friction = linear_friction(robot, args)
    rotor, structure = (args.rotor_inertia, None) if currents else \
        _chosen_rotor(args, robot, logs, friction)
    fit = {"friction": friction, "prior": prior,
           "regulariser": args.regulariser or "euclidean", "weight": args.prior_weight,
           "bounds": _bounds(args, robot), "rotor_inertia": rotor,
           "offsets": args.offsets, **currents}
    with dask_client(args) as client:
        result = identify_constrained(robot, _one_or_all(logs), method=args.method,
                                      progress=stderr_progress(args), client=client, **fit)
        model, spread = _bootstrapped(args, robot, logs, result.model, fit, client)
    model = _noted(model, structure, args.method)
    curve = result.model.report.get("prior_weight_curve")
    lines = [*_structure_lines(model), *result.consistency.lines()]
    if curve:
        lines.append(f"  prior weight chosen by held-out error: {curve['chosen']:.3g} "
                     f"({len(curve['weights'])} weights tried, "
                     f"{curve['blocks']} time blocks"
                     + (f"; the grid extended by {curve['extended']} decades"
                        if curve.get("extended") else "") + ")")
        if curve.get("at_edge"):
            lines.append(f"  the choice sits at the grid's top edge ({curve['chosen']:.0e}): the "
                         "held-out error still falls towards the prior; give --prior-weight "
                         "W to go further")
    return _show_identified(
        args, model, logs, checks, steps,
        f"{robot.name}: {args.method.upper()} on {_names(args)}"
        + (" (motor currents, drive gains identified with the links; friction " if currents
           else " (friction ")
        + f"{result.model.friction.name}; solver {result.status}, {result.seconds:.2f} s)",
        extra={"constrained": {**result.to_json(),
                               "parameters_file": args.parameters_output}},
        lines=tuple(lines), spread=spread,
        parameters=dataclasses.replace(robot, parameters=result.parameters,
                                       name=f"{robot.name}-{args.method}"))


def _bounds(args, robot):
    """--bounds FILE (the robot file's `bounds:` block form), else None (the robot's)."""
    return None if args.bounds is None else bounds_file(args.bounds, robot.n_joints)


def _identify_registered(args, robot, logs, checks, steps, currents: dict) -> int:
    """A method of the registry without options of its own here (``REGISTERED_METHODS``),
    through the one contract: ``Method.fit(Problem(...))``."""
    import dataclasses

    from dynid.identification import Problem, find_method

    method = find_method(args.method)
    if currents:
        raise ValueError(f"`--method {args.method}` fits torque logs: motor currents are "
                         "identified with their drive gains by ols, cls1, cls2, cls3, "
                         "log-cholesky or nls")
    if args.bootstrap is not None:
        raise ValueError(f"`--bootstrap` refits ols, wls, iv, the constrained methods and "
                         f"nls, not {args.method}")
    friction = linear_friction(robot, args)
    structure = None
    if method.family == "linear" and args.structure == "auto":  # through identify: chosen
        options = {"rotor_inertia": args.rotor_inertia, "offsets": args.offsets,
                   "structure": "auto"}
        friction = None if args.friction is None else friction
    elif args.method in _CLOSED_LOOP:  # the robot file's plant: its rotor inertias as stated
        options = {}
    else:
        rotor, structure = _chosen_rotor(args, robot, logs, friction)
        options = {"rotor_inertia": rotor, "offsets": args.offsets}
    if args.alpha is not None:
        options["alpha"] = args.alpha
    if args.l1_ratio is not None:
        options["l1_ratio"] = args.l1_ratio
    if method.family == "recursive":  # one offset for all logs; progress as they go
        options = {"rotor_inertia": options["rotor_inertia"], "progress": stderr_progress(args)}
        if args.forgetting is not None:
            options["forgetting"] = args.forgetting
    if args.method == "ml":
        if args.regressor_noise is None or args.noise is None or len(args.noise) != 1:
            raise ValueError("`--method ml` needs the noise it assumes: `--regressor-noise "
                             "SIGMA..` and `--noise SIGMA` (one torque noise std)")
        options["regressor_noise"] = args.regressor_noise
        options["torque_noise"] = args.noise[0]
    references = controller = None
    if args.method in _CLOSED_LOOP:
        if args.rotor_inertia is not None:
            raise ValueError(f"`--method {args.method}` simulates the robot file's plant: its "
                             "rotor inertias are identified where it states them; leave out "
                             "--rotor-inertia/--no-rotor-inertia")
        options = {}
        references, controller = _closed_loop(args, robot, logs)
        if args.max_iterations is not None:
            options["max_iterations"] = args.max_iterations
    estimate = method.fit(Problem(robot, tuple(logs), friction=friction,
                                  references=references, controller=controller), **options)
    parameters = (None if estimate.parameters is None else dataclasses.replace(
        robot, parameters=estimate.parameters, name=f"{robot.name}-{args.method}"))
    model = _noted(estimate.model, structure, args.method)
    return _show_identified(
        args, model, logs, checks, steps,
        f"{robot.name}: {args.method.upper()} on {_names(args)} (friction "
        f"{estimate.model.friction.name}; {estimate.status}"
        + ("" if estimate.converged else ", NOT converged")
        + (f", {estimate.iterations} iterations" if estimate.iterations else "")
        + f", {estimate.seconds:.2f} s)",
        extra={"estimate": {"method": estimate.method, "converged": estimate.converged,
                            "status": estimate.status, "iterations": estimate.iterations,
                            "seconds": estimate.seconds, "family": method.family,
                            "consistent": method.consistent,
                            "parameters_file": args.parameters_output}},
        parameters=parameters, lines=_structure_lines(model),
        convergence=(estimate.converged, estimate.status)
        if estimate.iterations > 0 or not estimate.converged else None)


def _closed_loop(args, robot, logs) -> tuple:
    """The references and the controller that recorded ``logs``, from the options: the
    reference trajectories (one for all logs or one per log) and the control law
    (``dynid.cli._controller``) at --control-rate, by default the logs' sampling rate."""
    from dynid.data.preprocess import uniform_step
    from dynid.excitation import load_trajectory

    if args.reference is None:
        raise ValueError(f"`--method {args.method}` needs `--reference`: the trajectory the "
                         "controller tracked (the file written by `dynid excite`)")
    if len(args.reference) not in (1, len(logs)):
        raise ValueError(f"`--reference` takes one trajectory for all logs or one per log "
                         f"({len(logs)}), got {len(args.reference)}")
    references = tuple(load_trajectory(path) for path in args.reference)
    if len(references) == 1:
        references = references[0]
    rate = args.control_rate
    if rate is None:
        rates = {round(1.0 / uniform_step(log), 6) for log in logs}
        if len(rates) != 1:
            raise ValueError(f"the logs were sampled at different rates ({sorted(rates)} Hz): "
                             "give the controller's with `--control-rate`")
        (rate,) = rates
    return references, control_law(args, robot, rate=rate,
                                   velocity_from_positions=bool(args.velocity_from_positions))


def _identify_nls(args, robot, logs, checks, steps, currents: dict) -> int:
    """Physical parameters and a friction model fitted jointly (Gilbert et al.); with
    motor-current logs (``currents``: what fixes their scale), the drive gains too."""
    import dataclasses

    from dynid.identification import identify_nls

    if args.kv is not None or args.delta is not None:
        raise ValueError("`--kv` and `--delta` shape the linear arctan columns; --method nls "
                         "fits its friction models' own parameters")
    name = nls_friction(robot, args.friction)
    if args.max_samples is not None and args.max_samples < 10:
        raise ValueError(f"`--max-samples` must be >= 10, got {args.max_samples}")
    rotor, structure = (args.rotor_inertia, None) if currents else \
        _chosen_rotor(args, robot, logs)
    fit = {"friction": name, "lasso": args.lasso or 0.0,
           "max_samples": args.max_samples or 10_000, "bounds": _bounds(args, robot),
           "rotor_inertia": rotor, "offsets": args.offsets, **currents}
    if args.max_iterations is not None:
        fit["max_iterations"] = args.max_iterations
    result = identify_nls(robot, _one_or_all(logs), progress=stderr_progress(args), **fit)
    model, spread = _bootstrapped(args, robot, logs, result.model, fit)
    model = _noted(model, structure, "nls")
    return _show_identified(
        args, model, logs, checks, steps,
        f"{robot.name}: NLS on {_names(args)} (friction {result.friction.name}, fitted "
        + ("jointly with the links and the drive gains from motor currents; " if currents
           else "jointly; ")
        + f"{result.status}, {result.seconds:.2f} s)",
        extra={"nls": {**result.to_json(), "parameters_file": args.parameters_output}},
        lines=(*_structure_lines(model), *result.lines()), spread=spread,
        parameters=dataclasses.replace(robot, parameters=result.parameters,
                                       friction=result.friction, name=f"{robot.name}-nls"),
        convergence=(result.success, result.status))


def _identify_static(args: argparse.Namespace) -> int:
    from dynid.data import read_static
    from dynid.identification import identify_static

    robot = loaded_robot(args)
    drop = {"auto": None, "keep": False, "drop": True}[args.joint1_gravity]
    model = identify_static(robot, read_static(args.file), drop_joint1_gravity=drop,
                            method=args.method, drop_above_percent=args.drop_above)
    if args.json:
        payload = {"robot": robot.name, **_coefficient_payload(model), "model_file": args.output}
        _write(args, model)
        print_json(payload)
        return 0
    text = _coefficient_lines(model, f"{robot.name}: reverse engineering from M(q), g(q) in "
                                     f"{args.file}")
    if args.output:
        text.append(f"  coefficients written to {args.output}")
    _write(args, model)
    print("\n".join(text))
    return 0


def _coefficient_payload(model) -> dict:
    from dynid.model import bootstrap_table

    report = dict(model.report)
    report["dropped"] = [model.base.base_names[k] for k in report.get("dropped", [])]
    rows = model.table()
    spread = bootstrap_table(model)
    if spread is not None:  # each row's bootstrap std and interval beside the formula's std
        rows = [{**row, "bootstrap": {key: own[key] for key in ("std", "lower", "upper")}}
                for row, own in zip(rows, spread, strict=True)]
    return {**report, "std_kind": model.std_kind, "coefficients": rows}


def _coefficient_lines(model, title: str) -> list[str]:
    report = model.report
    lines = [title]
    decided = ("" if "undetermined" not in report or "data_rank" not in report else
               f" (the data determine {report['data_rank']}: the prior and the bounds set the "
               "rest)")
    figures = [f"rank {report['rank']}{decided}" if "rank" in report else "",
               f"condition number {report['condition_number']:.1f}"
               if "condition_number" in report else "",
               f"relative error {report['relative_error_percent']:.4g} %"
               if "relative_error_percent" in report else "",
               f"{report['n_samples']} samples ({report['n_equations']} equations)"
               if "n_equations" in report else ""]
    if any(figures):  # a least-squares fit's figures (a simulation-based fit has its own)
        lines.append("  " + ", ".join(figure for figure in figures if figure))
    dropped = [model.base.base_names[k] for k in report.get("dropped", [])]
    if dropped:
        lines.append(f"  dropped (relative std above the threshold): {', '.join(dropped)}")
    from dynid.model import bootstrap_table
    from dynid.model.linear_model import STD_KINDS

    if model.std_kind in STD_KINDS:  # none for a model file written before it was recorded
        lines.append(f"  std: {STD_KINDS[model.std_kind]}")

    spread = bootstrap_table(model)
    out = set(report.get("structure", {}).get("dropped", ()))  # left out by --structure auto
    if spread is None:
        lines.append(f"  {'':>3}  {'value':>11}  {'std %':>8}  base parameter")
        for k, row in enumerate(model.table(), start=1):
            std = "out" if row["name"] in out else f"{row['relative_std_percent']:.3g}"
            lines.append(f"  {k:>3}  {row['value']:>11.5g}  {std:>8}  {row['expression']}")
        return lines
    entry = model.report["bootstrap"]
    level = f"{entry['level']:.0%}"
    lines.append(f"  bootstrap: {entry['replicates']} replicates, residual block length "
                 f"{entry['block_length']} ({entry['block_rule']}), seed {entry['seed']}"
                 + (f"; {entry['unsuccessful']} replicates' solvers without success"
                    if entry.get("unsuccessful") else ""))
    lines.append(f"  {'':>3}  {'value':>11}  {'std %':>8}  {'boot std':>10}  "
                 f"{level + ' interval':>25}  base parameter")
    for k, (row, own) in enumerate(zip(model.table(), spread, strict=True), start=1):
        interval = f"[{own['lower']:.5g}, {own['upper']:.5g}]"
        lines.append(f"  {k:>3}  {row['value']:>11.5g}  {row['relative_std_percent']:>8.3g}  "
                     f"{own['std']:>10.3g}  {interval:>25}  {row['expression']}")
    return lines
