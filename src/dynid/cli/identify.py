"""`dynid identify` (base parameters from a log: OLS, WLS, IDIM-IV, constrained least squares,
NLS) and `dynid identify-static` (reverse engineering from M(q), g(q) samples)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from dynid.cli._common import (
    ROBOT_HELP,
    Range,
    friction_options,
    linear_friction,
    output_options,
    prepared,
    preprocessing_options,
    print_json,
    stderr_progress,
)

# `dynid identify --method`: the estimators of dynid.identification.ESTIMATORS, IDIM-IV,
# dynid.identification.CONSTRAINED_METHODS and NLS (literal: `--help` imports nothing heavy)
IDENTIFY_METHODS = ("ols", "wls", "iv", "cls1", "cls2", "cls3", "log-cholesky", "nls")


def register(commands: argparse._SubParsersAction) -> None:
    identify = commands.add_parser("identify", help="identify base parameters from a log")
    identify.add_argument("robot", help=ROBOT_HELP)
    identify.add_argument("data", help="CSV (t, q1..qn, dq1..dqn, tau1..taun[, ddq1..ddqn]), "
                                       "NPZ (t, q, dq, tau[, ddq]), a ROS 2 bag (.mcap: "
                                       "sensor_msgs/JointState, the robot's joints by name) "
                                       "or a Panda log folder")
    identify.add_argument("--method", choices=IDENTIFY_METHODS, default="ols",
                          help="estimator (default %(default)s); iv: IDIM-IV for closed-loop "
                               "logs, needs --reference; cls1/cls2/cls3/log-cholesky: "
                               "physically constrained full parameters (needs bounds in the "
                               "robot file); nls: physical parameters and a friction model "
                               "jointly")
    identify.add_argument("--prior", metavar="ROBOT",
                          help="constrained: regularise towards this robot's parameters "
                               "(default: the robot's own)")
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
    identify.add_argument("--reference", metavar="TRAJ",
                          help="iv: the trajectory the computed-torque controller tracked")
    identify.add_argument("--natural-frequency", type=Range(float, high=10_000, above=0),
                          default=20.0, metavar="W",
                          help="iv: the controller's gains, Kp = W^2, Kd = 2 W (default "
                               "%(default)g)")
    identify.add_argument("--noise-std", type=Range(float, high=1e6, above=0),
                          nargs="+", metavar="SIGMA",
                          help="wls: torque noise std per joint [N m] (default: estimated "
                               "from OLS residuals)")
    friction_options(identify, nonlinear=True)
    preprocessing_options(identify)
    identify.add_argument("--drop-above", type=Range(float, high=1e6, above=0), metavar="PCT",
                          help="drop coefficients whose relative std exceeds PCT %% and "
                               "re-estimate (Gaz: 30; default: keep all)")
    identify.add_argument("-o", "--output", metavar="MODEL.yaml", help="write the model here")
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
    output_options(static)
    static.set_defaults(handler=_identify_static, output_suffixes={"-o": (".yaml", ".yml")})


def _identify(args: argparse.Namespace) -> int:
    from dynid.data import split
    from dynid.identification import CONSTRAINED_METHODS, ESTIMATORS, identify
    from dynid.robot import load_robot

    _check_method_options(args, CONSTRAINED_METHODS)
    robot = load_robot(args.robot)
    if args.validate is not None and not 0 < args.validate < 1:
        raise ValueError(f"`--validate` must be a fraction in (0, 1), got {args.validate}")
    data = prepared(args, args.data, robot)
    steps = data.metadata.get("preprocessing", [])
    check = None
    if args.validate is not None:
        data, check = split(data, 1.0 - args.validate)
    if args.method == "iv":
        return _identify_iv(args, robot, data, check, steps)
    if args.method == "nls":
        return _identify_nls(args, robot, data, check, steps)
    if args.method in CONSTRAINED_METHODS:
        return _identify_constrained(args, robot, data, check, steps)
    options = {"drop_above_percent": args.drop_above}
    if args.method == "wls" and args.noise_std is not None:
        if len(args.noise_std) != robot.n_joints:
            raise ValueError(f"`--noise-std` needs {robot.n_joints} values (one per joint), "
                             f"got {len(args.noise_std)}")
        options["noise_std"] = args.noise_std
    model = identify(robot, data, friction=linear_friction(robot, args),
                     estimator=ESTIMATORS[args.method](**options))
    return _show_identified(args, model, data, check, steps,
                            f"{robot.name}: {args.method.upper()} on {args.data} "
                            f"(friction {model.friction.name})")


def _check_method_options(args: argparse.Namespace, constrained: Sequence[str]) -> None:
    """Each method-specific option of `dynid identify` with a method that uses it."""
    uses = {
        "--reference": ("reference", ("iv",)),
        "--noise-std": ("noise_std", ("wls",)),
        "--drop-above": ("drop_above", ("ols", "wls")),
        "--prior": ("prior", tuple(constrained)),
        "--regulariser": ("regulariser", tuple(constrained)),
        "--parameters-output": ("parameters_output", (*constrained, "nls")),
        "--lasso": ("lasso", ("nls",)),
        "--max-samples": ("max_samples", ("nls",)),
    }
    for flag, (attribute, methods) in uses.items():
        if getattr(args, attribute) is not None and args.method not in methods:
            raise ValueError(f"`{flag}` is for --method {'|'.join(methods)}, not "
                             f"{args.method}")


def _show_identified(args, model, data, check, steps, title: str, *,
                     extra: dict | None = None, lines: tuple[str, ...] = (),
                     parameters=None) -> int:
    """Save, then print (or JSON, with ``extra`` merged in) an identified model with its
    identification and held-out RMSE; ``lines`` close the text; ``parameters``: the robot
    with the full link parameters, for ``--parameters-output``.

    Everything is computed and formatted first; the model and the parameters are then
    written together (both or neither), and only then printed: a failure leaves no file.
    """
    import numpy as np

    from dynid.metrics import rmse

    error = rmse(data.tau, model.predict(data.q, data.dq, data.ddq, data.t))
    held_out = (rmse(check.tau, model.predict(check.q, check.dq, check.ddq, check.t))
                if check is not None else None)
    if args.json:
        payload = {"robot": model.robot.name, "friction": model.friction.name,
                   "preprocessing": steps, **_coefficient_payload(model), "rmse": error,
                   "validation": None if check is None else {
                       "n_samples": check.n_samples, "rmse": held_out,
                       "rms_torque": np.sqrt(np.mean(check.tau**2, axis=0))},
                   "model_file": args.output, **(extra or {})}
        _write(args, model, parameters)
        print_json(payload)
        return 0
    text = _coefficient_lines(model, title)
    if steps:
        text.append("  preprocessing: " + ", ".join(steps))
    text.append("  RMSE per joint [N m], identification: " + " ".join(f"{v:.4g}" for v in error))
    if held_out is not None:
        text.append(f"  RMSE per joint [N m], validation ({check.n_samples} held-out samples): "
                    + " ".join(f"{v:.4g}" for v in held_out))
    text.extend(lines)
    if args.output:
        text.append(f"  model written to {args.output}")
    if parameters is not None and args.parameters_output:
        text.append(f"  link parameters written to {args.parameters_output}")
    _write(args, model, parameters)
    print("\n".join(text))
    return 0


def _write(args, model, parameters=None) -> None:
    """The model (``-o``) and the link parameters (``--parameters-output``): both or neither."""
    from dynid._files import atomic_write_all
    from dynid.identification import save_model
    from dynid.robot import save_robot

    writes = []
    if args.output:
        model.report["command"] = args.command_line
        writes.append((args.output, lambda tmp: save_model(model, tmp)))
    if parameters is not None and getattr(args, "parameters_output", None):
        writes.append((args.parameters_output, lambda tmp: save_robot(parameters, tmp)))
    if writes:
        atomic_write_all(writes)


def _identify_iv(args, robot, data, check, steps) -> int:
    from dynid.excitation import load_trajectory
    from dynid.identification import identify_iv

    if args.reference is None:
        raise ValueError("`--method iv` needs `--reference`: the trajectory the controller "
                         "tracked (the file written by `dynid excite`)")
    model = identify_iv(robot, data, load_trajectory(args.reference),
                        natural_frequency=args.natural_frequency,
                        friction=linear_friction(robot, args))
    return _show_identified(args, model, data, check, steps,
                            f"{robot.name}: IV on {args.data} "
                            f"({model.report['iterations']} iterations)")


def _identify_constrained(args, robot, data, check, steps) -> int:
    """CLS-1/2/3 or log-Cholesky: the model predicts with the constrained parameters; the
    full link parameters go to ``--parameters-output`` as a robot file."""
    import dataclasses

    from dynid.identification import identify_constrained
    from dynid.robot import load_robot

    prior = load_robot(args.prior).parameters if args.prior else None
    if prior is not None and prior.shape != robot.parameters.shape:
        raise ValueError(f"`--prior`: {args.prior!r} has {prior.shape[0]} links, the robot "
                         f"{robot.n_joints}")
    result = identify_constrained(robot, data, method=args.method,
                                  friction=linear_friction(robot, args), prior=prior,
                                  regulariser=args.regulariser or "euclidean")
    return _show_identified(
        args, result.model, data, check, steps,
        f"{robot.name}: {args.method.upper()} on {args.data} (friction "
        f"{result.model.friction.name}; solver {result.status}, {result.seconds:.2f} s)",
        extra={"constrained": {**result.to_json(),
                               "parameters_file": args.parameters_output}},
        lines=tuple(result.consistency.lines()),
        parameters=dataclasses.replace(robot, parameters=result.parameters,
                                       name=f"{robot.name}-{args.method}"))


def _identify_nls(args, robot, data, check, steps) -> int:
    """Physical parameters and a friction model fitted jointly (Gilbert et al.)."""
    import dataclasses

    from dynid.identification import NLS_FRICTION_MODELS, identify_nls

    if args.kv is not None or args.delta is not None:
        raise ValueError("`--kv` and `--delta` shape the linear arctan columns; --method nls "
                         "fits its friction models' own parameters")
    own = robot.friction.name if robot.friction.name in NLS_FRICTION_MODELS else "stribeck"
    name = args.friction or own
    if args.max_samples is not None and args.max_samples < 10:
        raise ValueError(f"`--max-samples` must be >= 10, got {args.max_samples}")
    result = identify_nls(robot, data, friction=name, lasso=args.lasso or 0.0,
                          max_samples=args.max_samples or 10_000,
                          progress=stderr_progress(args))
    return _show_identified(
        args, result.model, data, check, steps,
        f"{robot.name}: NLS on {args.data} (friction {result.friction.name}, fitted jointly; "
        f"{result.status}, {result.seconds:.2f} s)",
        extra={"nls": {**result.to_json(), "parameters_file": args.parameters_output}},
        lines=tuple(result.lines()),
        parameters=dataclasses.replace(robot, parameters=result.parameters,
                                       friction=result.friction, name=f"{robot.name}-nls"))


def _identify_static(args: argparse.Namespace) -> int:
    from dynid.data import read_static
    from dynid.identification import identify_static
    from dynid.robot import load_robot

    robot = load_robot(args.robot)
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
    report = dict(model.report)
    report["dropped"] = [model.base.base_names[k] for k in report.get("dropped", [])]
    return {**report, "coefficients": model.table()}


def _coefficient_lines(model, title: str) -> list[str]:
    report = model.report
    lines = [title]
    lines.append(f"  rank {report['rank']}, condition number {report['condition_number']:.1f}, "
                 f"relative error {report['relative_error_percent']:.4g} %, "
                 f"{report['n_samples']} samples ({report['n_equations']} equations)")
    dropped = [model.base.base_names[k] for k in report.get("dropped", [])]
    if dropped:
        lines.append(f"  dropped (relative std above the threshold): {', '.join(dropped)}")
    lines.append(f"  {'':>3}  {'value':>11}  {'std %':>8}  base parameter")
    for k, row in enumerate(model.table(), start=1):
        lines.append(f"  {k:>3}  {row['value']:>11.5g}  {row['relative_std_percent']:>8.3g}  "
                     f"{row['expression']}")
    return lines
