"""The ``dynid`` command."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

# `dynid identify --method`: the estimators of dynid.estimate, IDIM-IV, and
# dynid.constrained.CONSTRAINED_METHODS (kept literal so `--help` imports nothing heavy)
IDENTIFY_METHODS = ("ols", "wls", "iv", "cls1", "cls2", "cls3", "log-cholesky", "nls")
LINEAR_FRICTION = ("none", "viscous-coulomb", "arctan")
# dynid.compare.COMPARE_METHODS and DEFAULT_METHODS (literal: `--help` imports nothing heavy)
COMPARE_CHOICES = ("cad", "ols", "wls", "iv", "cls1", "cls2", "cls3", "log-cholesky", "nls")
COMPARE_DEFAULTS = ("cad", "ols", "wls", "cls1", "cls2", "cls3", "log-cholesky", "nls")
NONLINEAR_FRICTION = ("sigmoid", "stribeck", "lugre")

__all__ = ["main"]


def _print_json(payload: dict) -> None:
    from dynid._files import to_builtin

    print(json.dumps(to_builtin(payload, nonfinite_as_none=True), indent=2))


def _progress(args: argparse.Namespace):
    """Progress lines go to stderr, so that stdout stays clean for --json."""
    return (lambda line: print(line, file=sys.stderr, flush=True)) if not args.quiet else None


def _robots(args: argparse.Namespace) -> int:
    from dynid.robot import builtin_robots, load_robot

    rows = []
    for name in builtin_robots():
        robot = load_robot(name)
        rows.append({"name": name, "n_joints": robot.n_joints, "convention": robot.convention,
                     "description": robot.description})
    if args.json:
        _print_json({"robots": rows})
    else:
        for row in rows:
            print(f"{row['name']:<10} {row['n_joints']} joints  {row['convention']:<4} "
                  f"{row['description']}")
    return 0


def _joint_rows(robot) -> list[dict]:
    from dynid.robot import robot_to_dict

    limits = robot.limits
    table = robot_to_dict(robot)["kinematics"]["joints"] if robot.table is not None else None
    rows = []
    for k, joint in enumerate(robot.joints):
        row = {"name": joint.name, "type": joint.kind}
        if table is not None:
            row.update(table[k])
        for key, values in (("lower", limits.lower), ("upper", limits.upper),
                            ("velocity", limits.velocity), ("acceleration", limits.acceleration),
                            ("torque", limits.torque)):
            # JSON has no inf: an unspecified limit is null
            row[key] = float(values[k]) if np.isfinite(values[k]) else None
        rows.append(row)
    return rows


def _robot_show(args: argparse.Namespace) -> int:
    from dynid.identifiability import robot_base_parameters
    from dynid.inertia import MASS
    from dynid.robot import load_robot

    robot = load_robot(args.robot)
    base = robot_base_parameters(robot)
    joints = _joint_rows(robot)
    payload = {
        "name": robot.name,
        "description": robot.description,
        "n_joints": robot.n_joints,
        "convention": robot.convention,
        "total_mass": robot.total_mass,
        "n_base_parameters": base.rank,
        "gravity": robot.gravity.tolist(),
        "joints": joints,
        "links": [{"name": name, "mass": float(pi[MASS])}
                  for name, pi in zip(robot.link_names, robot.parameters, strict=True)],
        "friction": robot.friction.to_dict(),
        "source": {"citation": robot.source.citation, "url": robot.source.url},
    }
    if args.json:
        _print_json(payload)
        return 0
    print(f"{robot.name}: {robot.description}")
    print(f"  {robot.n_joints} joints, {robot.convention.upper()} convention, total mass "
          f"{robot.total_mass:.3f} kg, gravity {robot.gravity.tolist()} m/s^2")
    print(f"  base parameters (torque regressor): {base.rank} of {base.n_parameters}")
    print(f"  friction: {robot.friction.name}")
    geometry = [key for key in ("a", "alpha", "d", "theta") if key in joints[0]]
    header = ["joint", "type", *geometry, "lower", "upper", "vel", "acc", "torque", "mass"]
    print("  " + "".join(f"{h:>10}" for h in header))
    for row, link in zip(joints, payload["links"], strict=True):
        cells = [row["name"], row["type"][:3]]
        cells += [f"{row[key]:.4f}" for key in geometry]
        cells += ["-" if row[key] is None else f"{row[key]:.4g}"
                  for key in ("lower", "upper", "velocity", "acceleration", "torque")]
        cells.append(f"{link['mass']:.3f}")
        print("  " + "".join(f"{c:>10}" for c in cells))
    if robot.source.citation:
        print(f"  source: {' '.join(robot.source.citation.split())}")
    return 0


def _friction(robot, args: argparse.Namespace):
    """The linear friction columns asked for: --friction, else the robot file's, else
    viscous + Coulomb + offset."""
    from dynid.friction import (
        DEFAULT_ARCTAN_DELTA,
        DEFAULT_ARCTAN_K_V,
        Arctan,
        NoFriction,
        ViscousCoulomb,
    )
    from dynid.identify import default_friction

    n = robot.n_joints
    if (args.kv is not None or args.delta is not None) and args.friction != "arctan":
        raise ValueError("`--kv` and `--delta` shape the arctan model: add `--friction arctan`")
    if args.friction in NONLINEAR_FRICTION:
        raise ValueError(f"`--friction {args.friction}` is not linear in its parameters: fit "
                         "it with `dynid identify --method nls` (jointly with the links) or "
                         "`dynid friction` (on the residuals)")
    if args.friction is None:
        return default_friction(robot)
    if args.friction == "none":
        return NoFriction(n)
    if args.friction == "viscous-coulomb":
        return ViscousCoulomb.zeros(n)
    own = robot.friction if isinstance(robot.friction, Arctan) else None
    k_v = args.kv if args.kv is not None else (own.k_v if own else DEFAULT_ARCTAN_K_V)
    delta = args.delta if args.delta is not None else (own.delta if own else DEFAULT_ARCTAN_DELTA)
    return Arctan.template(n, k_v=k_v, delta=delta)


def _base(args: argparse.Namespace) -> int:
    from dynid.identifiability import robot_base_parameters
    from dynid.identify import joint1_gravity_is_zero
    from dynid.robot import load_robot

    robot = load_robot(args.robot)
    kind = "static" if args.static else "torque"
    if args.static and args.friction not in (None, "none"):
        raise ValueError("`--static`: the static regressor has no friction columns (no motion)")
    # friction columns: asked for, or the robot file's when linear; none for a nonlinear model
    if args.static or (args.friction is None and not robot.friction.linear):
        friction = None
    else:
        friction = _friction(robot, args)
    if friction is not None and not friction.coefficient_names():
        friction = None
    drop = joint1_gravity_is_zero(robot) if args.static else False
    options = {"friction": friction, "kind": kind, "drop_joint1_gravity": drop}
    base = robot_base_parameters(robot, method=args.method, **options)
    pi = robot.parameters.ravel()
    if friction is not None:  # the robot file's own values when it is that model, else zeros
        pi = np.concatenate([pi, friction.coefficients])
    values = base.base(pi)
    rows = [{"index": k + 1, "name": name, "expression": text, "value": float(value)}
            for k, (name, text, value) in enumerate(zip(base.base_names, base.expressions(),
                                                         values, strict=True))]
    payload = {"robot": robot.name, "regressor": kind, "method": base.method, "rank": base.rank,
               "n_parameters": base.n_parameters, "base_parameters": rows,
               "classification": base.classification()}
    if kind == "static":
        payload["joint1_gravity_dropped"] = drop
    if args.symbolic:
        from dynid.symbolic import symbolic_regrouping

        symbolic = symbolic_regrouping(robot, base, **options)
        for row, text in zip(rows, symbolic.strings(), strict=True):
            row["symbolic"] = text
        payload["lengths"] = symbolic.lengths
        payload["numeric_terms"] = [f"{base.base_names[k]}: {name}"
                                    for k, name in symbolic.numeric_terms]
    if args.json:
        _print_json(payload)
        return 0
    classes = base.classification()
    print(f"{robot.name}: {base.rank} base parameters of {base.n_parameters} ({kind} regressor"
          f"{', joint-1 gravity dropped' if drop else ''}; representatives by {base.method})")
    for label in ("alone", "combination", "unidentifiable"):
        names = [name for name, c in classes.items() if c == label]
        print(f"  identifiable {label}: {len(names)}" if label != "unidentifiable"
              else f"  unidentifiable: {len(names)} ({', '.join(names)})")
    if args.symbolic:
        print("  lengths: " + ", ".join(f"{k} = {v:g}" for k, v in payload["lengths"].items()))
    for row in rows:
        text = row["symbolic"] if args.symbolic else row["expression"]
        print(f"  {row['index']:>3}  {row['value']:>11.5g}  {text}")
    return 0


def _check_output(path: str | None, flag: str = "-o") -> None:
    """Fail before the work, not after it, when an output folder is missing."""
    if path and not Path(path).parent.is_dir():
        raise ValueError(f"`{flag}`: folder {str(Path(path).parent)!r} does not exist")


def _coefficient_payload(model) -> dict:
    report = dict(model.report)
    report["dropped"] = [model.base.base_names[k] for k in report.get("dropped", [])]
    return {**report, "coefficients": model.table()}


def _print_coefficients(model, title: str) -> None:
    report = model.report
    print(title)
    print(f"  rank {report['rank']}, condition number {report['condition_number']:.1f}, "
          f"relative error {report['relative_error_percent']:.4g} %, "
          f"{report['n_samples']} samples ({report['n_equations']} equations)")
    dropped = [model.base.base_names[k] for k in report.get("dropped", [])]
    if dropped:
        print(f"  dropped (relative std above the threshold): {', '.join(dropped)}")
    print(f"  {'':>3}  {'value':>11}  {'std %':>8}  base parameter")
    for k, row in enumerate(model.table(), start=1):
        print(f"  {k:>3}  {row['value']:>11.5g}  {row['relative_std_percent']:>8.3g}  "
              f"{row['expression']}")


def _identify(args: argparse.Namespace) -> int:

    from dynid.constrained import CONSTRAINED_METHODS
    from dynid.estimate import ESTIMATORS
    from dynid.identify import identify
    from dynid.preprocess import split
    from dynid.robot import load_robot

    _check_method_options(args, CONSTRAINED_METHODS)
    _check_output(args.output)
    _check_output(args.parameters_output, "--parameters-output")
    robot = load_robot(args.robot)
    if args.validate is not None and not 0 < args.validate < 1:
        raise ValueError(f"`--validate` must be a fraction in (0, 1), got {args.validate}")
    data = _prepared(args, args.data)
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
    model = identify(robot, data, friction=_friction(robot, args),
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


def _show_identified(args, model, data, check, steps, title: str,
                     extra: dict | None = None) -> int:
    """Save, then print (or JSON, with ``extra`` merged in) an identified model with its
    identification and held-out RMSE."""
    from dynid.model import save_model
    from dynid.validate import rmse

    error = rmse(data.tau, model.predict(data.q, data.dq, data.ddq, data.t))
    held_out = (rmse(check.tau, model.predict(check.q, check.dq, check.ddq, check.t))
                if check is not None else None)
    if args.output:
        model.report["command"] = args.command_line
        save_model(model, args.output)
    if args.json:
        _print_json({"robot": model.robot.name, "friction": model.friction.name,
                     "preprocessing": steps, **_coefficient_payload(model), "rmse": error,
                     "validation": None if check is None else {
                         "n_samples": check.n_samples, "rmse": held_out,
                         "rms_torque": np.sqrt(np.mean(check.tau**2, axis=0))},
                     "model_file": args.output, **(extra or {})})
        return 0
    _print_coefficients(model, title)
    if steps:
        print("  preprocessing: " + ", ".join(steps))
    print("  RMSE per joint [N m], identification: " + " ".join(f"{v:.4g}" for v in error))
    if held_out is not None:
        print(f"  RMSE per joint [N m], validation ({check.n_samples} held-out samples): "
              + " ".join(f"{v:.4g}" for v in held_out))
    if args.output:
        print(f"  model written to {args.output}")
    return 0


def _identify_iv(args, robot, data, check, steps) -> int:
    from dynid.identify import identify_iv
    from dynid.trajectory import load_trajectory

    if args.reference is None:
        raise ValueError("`--method iv` needs `--reference`: the trajectory the controller "
                         "tracked (the file written by `dynid excite`)")
    model = identify_iv(robot, data, load_trajectory(args.reference),
                        natural_frequency=args.natural_frequency,
                        friction=_friction(robot, args))
    return _show_identified(args, model, data, check, steps,
                            f"{robot.name}: IV on {args.data} "
                            f"({model.report['iterations']} iterations)")


def _identify_constrained(args, robot, data, check, steps) -> int:
    """CLS-1/2/3 or log-Cholesky: the model predicts with the constrained parameters; the
    full link parameters go to ``--parameters-output`` as a robot file."""
    import dataclasses

    from dynid.constrained import identify_constrained
    from dynid.robot import load_robot, save_robot

    _check_output(args.parameters_output, "--parameters-output")
    prior = load_robot(args.prior).parameters if args.prior else None
    if prior is not None and prior.shape != robot.parameters.shape:
        raise ValueError(f"`--prior`: {args.prior!r} has {prior.shape[0]} links, the robot "
                         f"{robot.n_joints}")
    result = identify_constrained(robot, data, method=args.method,
                                  friction=_friction(robot, args), prior=prior,
                                  regulariser=args.regulariser or "euclidean")
    if args.parameters_output:
        save_robot(dataclasses.replace(robot, parameters=result.parameters,
                                       name=f"{robot.name}-{args.method}"),
                   args.parameters_output)
    _show_identified(
        args, result.model, data, check, steps,
        f"{robot.name}: {args.method.upper()} on {args.data} (friction "
        f"{result.model.friction.name}; solver {result.status}, {result.seconds:.2f} s)",
        extra={"constrained": {**result.to_json(),
                               "parameters_file": args.parameters_output}})
    if not args.json:
        print("\n".join(result.consistency.lines()))
        if args.parameters_output:
            print(f"  link parameters written to {args.parameters_output}")
    return 0


def _identify_nls(args, robot, data, check, steps) -> int:
    """Physical parameters and a friction model fitted jointly (Gilbert et al.)."""
    import dataclasses

    from dynid.nls import NLS_FRICTION_MODELS, identify_nls
    from dynid.robot import save_robot

    _check_output(args.parameters_output, "--parameters-output")
    if args.kv is not None or args.delta is not None:
        raise ValueError("`--kv` and `--delta` shape the linear arctan columns; --method nls "
                         "fits its friction models' own parameters")
    own = robot.friction.name if robot.friction.name in NLS_FRICTION_MODELS else "stribeck"
    name = args.friction or own
    if args.max_samples is not None and args.max_samples < 10:
        raise ValueError(f"`--max-samples` must be >= 10, got {args.max_samples}")
    result = identify_nls(robot, data, friction=name, lasso=args.lasso or 0.0,
                          max_samples=args.max_samples or 10_000, progress=_progress(args))
    if args.parameters_output:
        save_robot(dataclasses.replace(robot, parameters=result.parameters,
                                       friction=result.friction, name=f"{robot.name}-nls"),
                   args.parameters_output)
    _show_identified(
        args, result.model, data, check, steps,
        f"{robot.name}: NLS on {args.data} (friction {result.friction.name}, fitted jointly; "
        f"{result.status}, {result.seconds:.2f} s)",
        extra={"nls": {**result.to_json(), "parameters_file": args.parameters_output}})
    if not args.json:
        print(f"  friction {result.friction.name}, per joint:")
        for j, row in enumerate(result.friction.per_joint()):
            cells = ", ".join(f"{field} {value:.4g}" for field, value
                              in zip(result.friction.field_names(), row, strict=True))
            print(f"    joint {j + 1}: {cells}")
        print("\n".join(result.consistency.lines()))
        if args.parameters_output:
            print(f"  link parameters and friction written to {args.parameters_output}")
    return 0


def _friction_compare(args: argparse.Namespace) -> int:
    """Gilbert's Tables 6-7: each friction model fitted, RMSE and MAE per joint."""
    from dynid.nls import compare_friction
    from dynid.preprocess import split
    from dynid.robot import load_robot

    robot = load_robot(args.robot)
    if (args.validate is None) == (args.validation is None):
        raise ValueError("give the validation data: `--validation FILE` or `--validate "
                         "FRACTION` (one of them)")
    if args.validate is not None and not 0 < args.validate < 1:
        raise ValueError(f"`--validate` must be a fraction in (0, 1), got {args.validate}")
    data = _prepared(args, args.data)
    if args.validate is not None:
        data, check = split(data, 1.0 - args.validate)
    else:
        check = _prepared(args, args.validation)
    if check.n_joints != robot.n_joints or data.n_joints != robot.n_joints:
        raise ValueError(f"the logs must have the robot's {robot.n_joints} joints")
    options = {}
    if args.method == "nls":
        if args.model is not None or args.optimizer is not None:
            raise ValueError("`--model` and `--optimizer` are for --method residual")
        options = {"max_samples": args.max_samples or 10_000}
    else:
        if args.max_samples is not None:
            raise ValueError("`--max-samples` is for --method nls")
        from dynid.model import load_model

        options = {"optimizer": args.optimizer or "least-squares",
                   "rigid": load_model(args.model) if args.model else None}
    kept = [name for name in args.models if name != "none"]
    if args.output is not None:
        _check_output(args.output)
        if len(kept) != 1:
            raise ValueError(f"`-o` writes one model: give one friction model in `--models` "
                             f"(besides none), got {kept}")
    table = compare_friction(robot, data, check, models=args.models, method=args.method,
                             progress=_progress(args), **options)
    if args.output is not None:
        from dynid.model import save_model

        chosen = table.fitted[args.models.index(kept[0])]
        chosen.report["command"] = args.command_line
        save_model(chosen, args.output)
    if args.json:
        _print_json({"robot": robot.name, **table.to_json(), "model_file": args.output})
        return 0
    way = ("physical parameters and friction fitted jointly" if args.method == "nls"
           else f"friction fitted on the residual of {args.model}" if args.model
           else "friction fitted on the residual of one rigid-body OLS fit")
    print(f"{robot.name}: friction models on {args.data} ({way}; validation "
          f"{check.n_samples} samples)")
    print("\n".join(table.lines()))
    if args.output is not None:
        print(f"  model with {kept[0]} friction written to {args.output}")
    return 0


def _validate(args: argparse.Namespace) -> int:
    """An identified model on a log: errors, residuals, consistency, M(q) > 0."""
    from dynid.model import load_model
    from dynid.validate import check_compatible, validate_model

    _check_output(args.plot, "--plot")
    model = load_model(args.model)
    data = _prepared(args, args.data)
    check_compatible(model, data)
    report = validate_model(model, data, n_poses=args.poses)
    if args.plot:
        from dynid.plots import plot_torques

        plot_torques(data.t, data.tau, model.predict(data.q, data.dq, data.ddq, data.t),
                     args.plot, rigid=model.rigid_torque(data.q, data.dq, data.ddq),
                     title=f"{model.robot.name}: {args.data}, measured vs model")
    if args.json:
        _print_json({"model": args.model, "data": args.data,
                     "preprocessing": data.metadata.get("preprocessing", []),
                     **report.to_json(), "plot": args.plot})
        return 0
    print(f"{model.robot.name}: {args.model} on {args.data}")
    print("\n".join(report.lines()))
    if args.plot:
        print(f"  plot written to {args.plot}")
    return 0


def _compare(args: argparse.Namespace) -> int:
    """The Jaco2 paper's Table 5 over the given logs."""
    from dynid.compare import compare_methods, write_table
    from dynid.robot import load_robot

    _check_output(args.output)
    _check_output(args.plot, "--plot")
    if args.output and Path(args.output).suffix.lower() not in (".md", ".csv", ".json"):
        raise ValueError(f"`-o` must end in .md, .csv or .json, got {args.output!r}")
    robot = load_robot(args.robot)
    prior = load_robot(args.prior) if args.prior else None
    references = None
    if args.references:
        from dynid.trajectory import load_trajectory

        if len(args.references) != len(args.data):
            raise ValueError(f"`--references` needs one trajectory per log ({len(args.data)}), "
                             f"got {len(args.references)}")
        references = [load_trajectory(path) for path in args.references]
    datasets = [_prepared(args, path) for path in args.data]
    table = compare_methods(robot, datasets, names=[Path(p).stem for p in args.data],
                            methods=args.methods, prior=prior, references=references,
                            nls_friction=args.nls_friction, progress=_progress(args))
    if args.output:
        write_table(table, args.output)
    if args.plot:
        from dynid.plots import comparison_figure, save_figure

        save_figure(comparison_figure(table.methods, table.validation_errors(),
                                      title=f"{robot.name}: validation errors over "
                                            f"{len(datasets)} trajectories"), args.plot)
    if args.json:
        _print_json({"robot": robot.name, **table.to_json(), "output": args.output})
        return 0
    print(f"{robot.name}: {len(table.methods)} methods over {len(datasets)} trajectories "
          "(each identifies in turn, the others validate; * the smallest w of the row)")
    print("\n".join(table.lines()))
    for path in (args.output, args.plot):
        if path:
            print(f"  written to {path}")
    return 0


def _report(args: argparse.Namespace) -> int:
    """A self-contained HTML report of a model validated on a log."""
    from dynid.model import load_model
    from dynid.report import build_report, write_report
    from dynid.validate import check_compatible, validate_model

    _check_output(args.output)
    model = load_model(args.model)
    data = _prepared(args, args.data)
    check_compatible(model, data)
    identification = _prepared(args, args.identification) if args.identification else None
    if identification is not None:
        check_compatible(model, identification)
    validation = validate_model(model, data, n_poses=args.poses)
    text = build_report(model, data, validation, identification=identification,
                        data_name=args.data, command=args.command_line, title=args.title)
    write_report(args.output, text)
    if args.json:
        _print_json({"report": args.output, **validation.to_json()})
        return 0
    print(f"{model.robot.name}: report on {args.data} written to {args.output}")
    return 0


def _export(args: argparse.Namespace) -> int:
    """A model's (or a robot file's) robot as URDF, MJCF or a dynid robot file."""
    import dataclasses

    from dynid.export import export_robot, identified_robot
    from dynid.model import LinearModel
    from dynid.robot import save_robot

    _check_output(args.output)
    source = _model_or_robot(args.source)
    robot = identified_robot(source) if isinstance(source, LinearModel) else source
    if args.name:
        robot = dataclasses.replace(robot, name=args.name)
    suffix = Path(args.output).suffix.lower()
    if suffix in (".yaml", ".yml"):
        save_robot(robot, args.output)
    else:
        export_robot(robot, args.output)
    if args.json:
        _print_json({"robot": robot.name, "output": args.output,
                     "total_mass": robot.total_mass})
        return 0
    print(f"{robot.name}: written to {args.output} ({robot.n_joints} joints, total mass "
          f"{robot.total_mass:.3f} kg, friction {robot.friction.name})")
    return 0


def _payload(args: argparse.Namespace) -> int:
    """A payload on the last link, the arm's model frozen (Gilbert eq. 22, Table 5)."""
    from dynid.payload import identify_payload
    from dynid.robot import load_robot

    robot = load_robot(args.robot)
    arm = _model_or_robot(args.arm)
    data = _prepared(args, args.data)
    result = identify_payload(robot, arm, data,
                              mass=tuple(args.mass) if args.mass is not None else None)
    if args.json:
        _print_json({"robot": robot.name, **result.to_json()})
        return 0
    std = result.std
    print(f"{robot.name}: payload on the last link from {args.data} ({data.n_samples} samples, "
          f"solver {result.status}, {result.seconds:.2f} s)")
    print(f"  mass {result.mass:.4f} kg (std {std[0]:.2g})")
    print("  CoM, link frame [m]: " + " ".join(f"{v:.4f}" for v in result.com))
    print("  CoM, tool frame [m]: " + " ".join(f"{v:.4f}" for v in result.com_tool))
    entries = zip(("xx", "xy", "xz", "yy", "yz", "zz"),
                  result.inertia_com[[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]], strict=True)
    print("  inertia about the CoM, link axes [kg m^2]: "
          + " ".join(f"{name} {value:.3g}" for name, value in entries))
    print(f"  physically consistent: {'yes' if result.consistency.consistent else 'NO'}")
    print("  RMSE per joint [N m], arm alone: "
          + " ".join(f"{v:.4g}" for v in result.rmse_before))
    print("  RMSE per joint [N m], with the payload: "
          + " ".join(f"{v:.4g}" for v in result.rmse_after))
    return 0


def _model_or_robot(path: str):
    """A ``dynid-model/1`` file as a LinearModel; anything else (a built-in name, a robot file,
    a URDF) as a robot."""
    import yaml

    from dynid.model import MODEL_SCHEMA, load_model
    from dynid.robot import load_robot

    file = Path(path)
    if file.is_file() and file.suffix.lower() in (".yaml", ".yml"):
        try:
            spec = yaml.safe_load(file.read_text())
        except (OSError, yaml.YAMLError) as error:
            raise ValueError(f"cannot read {path!r}: {error}") from None
        if isinstance(spec, dict) and spec.get("schema") == MODEL_SCHEMA:
            return load_model(file)
    return load_robot(path)


def _identify_static(args: argparse.Namespace) -> int:
    from dynid.data import read_static
    from dynid.identify import identify_static
    from dynid.model import save_model
    from dynid.robot import load_robot

    _check_output(args.output)
    robot = load_robot(args.robot)
    drop = {"auto": None, "keep": False, "drop": True}[args.joint1_gravity]
    model = identify_static(robot, read_static(args.file), drop_joint1_gravity=drop,
                            method=args.method, drop_above_percent=args.drop_above)
    if args.output:
        model.report["command"] = args.command_line
        save_model(model, args.output)
    if args.json:
        _print_json({"robot": robot.name, **_coefficient_payload(model),
                     "model_file": args.output})
        return 0
    _print_coefficients(model, f"{robot.name}: reverse engineering from M(q), g(q) in "
                               f"{args.file}")
    if args.output:
        print(f"  coefficients written to {args.output}")
    return 0


def _retrieve(args: argparse.Namespace) -> int:
    import dataclasses

    from dynid.consistency import ParameterBounds
    from dynid.model import load_model
    from dynid.retrieve import retrieve_penalty, retrieve_sdp
    from dynid.robot import load_robot, save_robot

    _check_output(args.output)
    robot = load_robot(args.robot)
    model = load_model(args.coefficients)
    if model.robot.n_joints != robot.n_joints:
        raise ValueError(f"`COEFFS` is a model of {model.robot.n_joints} joints, `ROBOT` has "
                         f"{robot.n_joints}")
    bounds = robot.bounds
    if args.bounds:
        import yaml

        bounds = ParameterBounds.from_dict(yaml.safe_load(Path(args.bounds).read_text()),
                                           robot.n_joints)
    total_mass = tuple(args.total_mass) if args.total_mass else None
    # coefficients dropped at identification (high relative std) are not fitted
    exclude = [int(k) for k in model.report.get("dropped", [])]
    if args.method == "sdp":
        if (args.restarts, args.stages, args.seed) != (None, None, None):
            raise ValueError("`--restarts`, `--stages` and `--seed` are for --method penalty")
        prior = load_robot(args.prior).parameters if args.prior else None
        result = retrieve_sdp(robot, model.base, model.coefficients, bounds=bounds,
                              total_mass=total_mass, exclude=exclude, prior=prior)
    else:
        if args.prior:
            raise ValueError("`--prior` is for --method sdp (the penalty search starts at "
                             "random points in the bounds)")
        result = retrieve_penalty(robot, model.base, model.coefficients, bounds=bounds,
                                  total_mass=total_mass, exclude=exclude,
                                  restarts=8 if args.restarts is None else args.restarts,
                                  stages=10 if args.stages is None else args.stages,
                                  seed=args.seed or 0, progress=_progress(args))
    if args.output:
        save_robot(dataclasses.replace(robot, parameters=result.parameters,
                                       name=f"{robot.name}-retrieved"), args.output)
    if args.json:
        _print_json({**result.to_json(), "output": args.output})
        return 0
    left_out = (f" ({len(exclude)} dropped at identification left out: "
                f"{', '.join(model.base.base_names[k] for k in exclude)})" if exclude else "")
    print(f"{robot.name}: feasible parameters by {result.method} in {result.seconds:.2f} s "
          f"({result.status}{'; ' + result.message if result.message else ''}); relative "
          f"error {result.relative_error_percent:.4g} % on {result.residual.size} "
          f"coefficients{left_out}")
    print("\n".join(result.consistency.lines()))
    if args.output:
        print(f"  parameters written to {args.output}")
    return 0


def _excite(args: argparse.Namespace) -> int:
    from dynid.excitation import optimize_excitation
    from dynid.robot import load_robot
    from dynid.trajectory import sample_times, save_trajectory

    _check_output(args.output)
    sample_times(args.period, args.rate)  # the written series: checked before the search
    robot = load_robot(args.robot)
    result = optimize_excitation(
        robot, criterion=args.criterion, harmonics=args.harmonics, period=args.period,
        rate=args.grid_rate, rest=args.rest, seed=args.seed, starts=args.starts,
        max_iterations=args.iterations, progress=_progress(args))
    save_trajectory(args.output, result.trajectory, duration=args.period, rate=args.rate,
                    extra={"criterion": result.criterion, "value": result.value,
                           "condition_number": result.condition_number})
    payload = {**result.to_json(), "output": args.output,
               "parameters": str(Path(args.output).with_suffix(".yaml"))}
    if args.json:
        _print_json(payload)
        return 0
    print(f"{robot.name}: {result.criterion} {result.start_value:.4g} (best random start) -> "
          f"{result.value:.4g}; condition number {result.condition_number:.3g}; closest to a "
          f"position limit {result.max_abs_q_margin:.3g} rad; {result.seconds:.1f} s")
    print(f"  time series written to {args.output}, parameters to {payload['parameters']}")
    return 0


def _named_robot(flag: str, name_or_path: str):
    """The robot an option names; its error names the option."""
    from dynid.robot import load_robot

    try:
        return load_robot(name_or_path)
    except ValueError as error:
        raise ValueError(f"`{flag}`: {error}") from None


def _simulate(args: argparse.Namespace) -> int:
    from dynid.data import write_dataset
    from dynid.robot import load_robot
    from dynid.simulate import SensorModel, simulate_closed_loop, simulate_open_loop
    from dynid.trajectory import FourierTrajectory, load_trajectory

    _check_output(args.output)
    robot = load_robot(args.robot)
    trajectory = load_trajectory(args.trajectory)
    duration = args.duration
    if duration is None:
        own = getattr(trajectory, "duration", None)  # sampled and ramped trajectories
        if own is None and isinstance(trajectory, FourierTrajectory):
            own = trajectory.period
        if own is None:
            raise ValueError("`--duration` is needed for this trajectory family")
        duration = own
    def per_joint(values, absent=0.0):  # one value for every joint, or one per joint
        return absent if values is None else (values[0] if len(values) == 1 else values)

    sensor = SensorModel(
        torque_noise_std=per_joint(args.noise), torque_bias=per_joint(args.bias),
        position_resolution=args.position_resolution,
        velocity_from_positions=args.velocity_from_positions, jitter_std=args.jitter,
        drop_probability=args.drop)
    loop_options = {"--natural-frequency": args.natural_frequency,
                    "--stiffness": args.stiffness, "--damping": args.damping,
                    "--controller": args.controller}
    if args.closed_loop:
        data = simulate_closed_loop(
            robot, trajectory, duration=duration, rate=args.rate,
            natural_frequency=per_joint(args.natural_frequency, None),
            stiffness=per_joint(args.stiffness, None), damping=per_joint(args.damping, None),
            controller=_named_robot("--controller", args.controller) if args.controller
            else None,
            sensor=sensor, seed=args.seed)
    elif any(value is not None for value in loop_options.values()):
        used = [flag for flag, value in loop_options.items() if value is not None]
        raise ValueError(f"`{'`, `'.join(used)}` need --closed-loop")
    else:
        data = simulate_open_loop(robot, trajectory, duration=duration, rate=args.rate,
                                  sensor=sensor, seed=args.seed)
    write_dataset(args.output, data)
    summary = {"robot": robot.name, "n_samples": data.n_samples, "duration_s": data.duration,
               "closed_loop": args.closed_loop, "output": args.output,
               **({"control_law": data.metadata["source"],
                   "controller": data.metadata["controller"],
                   "tracking_rms": data.metadata["tracking_rms"]} if args.closed_loop else {})}
    if args.json:
        _print_json(summary)
    else:
        loop = "closed loop" if args.closed_loop else "open loop"
        print(f"{robot.name}: {data.n_samples} samples over {data.duration:.3f} s ({loop}) "
              f"written to {args.output}")
        if args.closed_loop:
            print("  tracking RMS per joint [rad]: "
                  + " ".join(f"{v:.3g}" for v in data.metadata["tracking_rms"]))
    return 0


def _data_inspect(args: argparse.Namespace) -> int:
    from dynid.data import read_dataset
    from dynid.preprocess import inspect
    from dynid.robot import load_robot

    robot = load_robot(args.robot) if args.robot else None
    report = inspect(read_dataset(args.file), robot)
    if args.json:
        _print_json(report)
        return 0
    step = report["step_ms"]
    print(f"{args.file}: {report['n_samples']} samples, {report['n_joints']} joints, "
          f"{report['duration_s']:.3f} s")
    print(f"  rate {report['rate_hz']:.4g} Hz; step {step['median']:.4g} ms median, "
          f"{step['std']:.3g} ms std, {step['min']:.4g}..{step['max']:.4g} ms")
    print(f"  gaps over {report['gaps']['threshold_ms']:.3g} ms: {report['gaps']['count']}, "
          f"largest {report['gaps']['largest_ms']:.3g} ms; accelerations "
          f"{'present' if report['has_ddq'] else 'absent'}")
    rows = [("q min", report["range"]["q_min"]), ("q max", report["range"]["q_max"]),
            ("|dq| max", report["range"]["dq_abs_max"]),
            ("|tau| max", report["range"]["tau_abs_max"]),
            *((f"noise {k}", v) for k, v in report["noise_std"].items())]
    if "limits" in report:
        rows += [("q outside", report["limits"]["q_outside"]),
                 ("dq/limit", report["limits"]["dq_fraction_of_limit"]),
                 ("tau/limit", report["limits"]["tau_fraction_of_limit"])]
    print("  " + " " * 10 + "".join(f"{j + 1:>10d}" for j in range(report["n_joints"])))
    for label, values in rows:
        print(f"  {label:<10}" + "".join(f"{v:>10.4g}" for v in values))
    return 0


def _demo(args: argparse.Namespace) -> int:
    from dynid.demo import format_summary, run_demo

    result = run_demo(output=args.output, duration=args.duration, rate=args.rate,
                      noise_std=args.noise, iterations=args.iterations, seed=args.seed,
                      command=args.command_line, progress=_progress(args))
    if args.json:
        _print_json(result.to_json())
    else:
        print(format_summary(result))
    return 0


def _bench(args: argparse.Namespace) -> int:
    from dynid.bench import (
        format_bench,
        format_compare,
        format_consistency,
        format_identification,
        run_bench,
        run_compare_bench,
        run_consistency_bench,
        run_identification_bench,
    )

    result: dict = {}
    if args.suite in ("dynamics", "all"):
        result = run_bench(robot=args.robot, sizes=args.sizes, repeat=args.repeat,
                           progress=_progress(args))
    if args.suite in ("identification", "all"):
        result["identification"] = run_identification_bench(robot=args.robot,
                                                            progress=_progress(args))
    if args.suite in ("consistency", "all"):
        result["consistency"] = run_consistency_bench(robot=args.robot,
                                                      progress=_progress(args))
    if args.suite in ("compare", "all"):
        result["compare"] = run_compare_bench(robot=args.robot, progress=_progress(args))
    if args.json:
        _print_json(result)
        return 0
    if "by_size" in result:
        print(format_bench(result))
    if "identification" in result:
        print(format_identification(result["identification"]))
    if "consistency" in result:
        print(format_consistency(result["consistency"]))
    if "compare" in result:
        print(format_compare(result["compare"]))
    return 0


def _friction_options(parser: argparse.ArgumentParser, *, nonlinear: bool = False) -> None:
    if nonlinear:
        parser.add_argument("--friction", choices=[*LINEAR_FRICTION, *NONLINEAR_FRICTION],
                            help="friction model: linear columns (default: the robot file's "
                                 "model when linear, else viscous-coulomb); sigmoid, stribeck "
                                 "and lugre with --method nls (default there: the robot "
                                 "file's, else stribeck)")
    else:
        parser.add_argument("--friction", choices=LINEAR_FRICTION,
                            help="linear friction columns (default: the robot file's model "
                                 "when linear, else viscous-coulomb)")
    parser.add_argument("--kv", type=float, help="arctan: sign-shape constant k_v [s/rad]")
    parser.add_argument("--delta", type=float, help="arctan: Stribeck-shape constant [s/rad]")


def _output_options(parser: argparse.ArgumentParser, *, quiet: bool = False) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    if quiet:
        parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def _validation_options(parser: argparse.ArgumentParser) -> None:
    """What validating a model on a log takes: the M(q) > 0 sampling and the log's
    preprocessing."""
    parser.add_argument("--poses", type=int, default=1000, metavar="N",
                        help="poses sampled for the M(q) > 0 check (default 1000)")
    _preprocessing_options(parser, split=False)


def _preprocessing_options(parser: argparse.ArgumentParser, *, split: bool = True) -> None:
    parser.add_argument("--resample", type=float, metavar="HZ",
                        help="resample to this rate (irregular logs are resampled at their "
                             "median rate anyway)")
    parser.add_argument("--cutoff", type=float, metavar="HZ",
                        help="zero-phase Butterworth low-pass (default 5 Hz when the log has "
                             "no ddq; none otherwise)")
    parser.add_argument("--order", type=int, default=4, help="Butterworth order (default 4)")
    parser.add_argument("--trim", type=float, metavar="S",
                        help="seconds dropped at both ends (default 0.5 when filtered here)")
    if split:
        parser.add_argument("--validate", type=float, metavar="FRACTION",
                            help="hold out this final fraction of the log and report its RMSE")


def _prepared(args: argparse.Namespace, path: str):
    """The log at ``path`` read and preprocessed as the options say."""
    from dynid.data import read_dataset
    from dynid.preprocess import prepare

    return prepare(read_dataset(path), rate=args.resample, cutoff=args.cutoff,
                   order=args.order, trim_seconds=args.trim)


def _parser() -> argparse.ArgumentParser:
    from dynid.bench import DEFAULT_REPEAT, DEFAULT_SIZES
    from dynid.demo import DEFAULT_DURATION, DEFAULT_ITERATIONS, DEFAULT_NOISE_STD

    parser = argparse.ArgumentParser(
        prog="dynid", description="Dynamic identification of robot manipulators.")
    commands = parser.add_subparsers(dest="command", required=True)

    robots = commands.add_parser("robots", help="list the built-in robots")
    _output_options(robots)
    robots.set_defaults(run=_robots)

    robot = commands.add_parser("robot", help="inspect a robot")
    robot_commands = robot.add_subparsers(dest="robot_command", required=True)
    show = robot_commands.add_parser("show", help="joints, convention, limits, mass, base count")
    show.add_argument("robot", help="built-in robot name, or a .yaml / .urdf file")
    _output_options(show)
    show.set_defaults(run=_robot_show)

    base = commands.add_parser("base", help="base parameters: regroupings of a robot's "
                               "standard parameters")
    base.add_argument("robot", help="built-in robot name, or a .yaml / .urdf file")
    base.add_argument("--static", action="store_true",
                      help="of the static [M(q); g(q)] regressor (Gaz eq. 17-20) instead of the "
                           "joint-torque regressor")
    base.add_argument("--method", choices=["rref", "qr"], default="rref",
                      help="how representatives are chosen (default rref, like the papers)")
    base.add_argument("--symbolic", action="store_true",
                      help="expressions in the DH/MDH lengths (sympy)")
    _friction_options(base)
    _output_options(base)
    base.set_defaults(run=_base)

    identify = commands.add_parser("identify", help="identify base parameters from a log")
    identify.add_argument("robot", help="built-in robot name, or a .yaml / .urdf file")
    identify.add_argument("data", help="CSV (t, q1..qn, dq1..dqn, tau1..taun[, ddq1..ddqn]), "
                                       "NPZ (t, q, dq, tau[, ddq]) or a Panda log folder")
    identify.add_argument("--method", choices=IDENTIFY_METHODS, default="ols",
                          help="estimator (default ols); iv: IDIM-IV for closed-loop logs, "
                               "needs --reference; cls1/cls2/cls3/log-cholesky: physically "
                               "constrained full parameters (needs bounds in the robot file); "
                               "nls: physical parameters and a friction model jointly")
    identify.add_argument("--prior", metavar="ROBOT",
                          help="constrained: regularise towards this robot's parameters "
                               "(default: the robot's own)")
    identify.add_argument("--regulariser", choices=["euclidean", "entropic"],
                          help="constrained: distance to the prior (default euclidean)")
    identify.add_argument("--parameters-output", metavar="PARAMS.yaml",
                          help="constrained, nls: write the robot with the identified link "
                               "parameters (nls: and friction)")
    identify.add_argument("--lasso", type=float, metavar="LAMBDA",
                          help="nls: L1 weight on the products of inertia (Gilbert eq. 29)")
    identify.add_argument("--max-samples", type=int, metavar="N",
                          help="nls: decimate longer logs to N samples for the fit "
                               "(default 10000)")
    identify.add_argument("--reference", metavar="TRAJ",
                          help="iv: the trajectory the computed-torque controller tracked")
    identify.add_argument("--natural-frequency", type=float, default=20.0, metavar="W",
                          help="iv: the controller's gains, Kp = W^2, Kd = 2 W (default 20)")
    identify.add_argument("--noise-std", type=float, nargs="+", metavar="SIGMA",
                          help="wls: torque noise std per joint [N m] (default: estimated "
                               "from OLS residuals)")
    _friction_options(identify, nonlinear=True)
    _preprocessing_options(identify)
    identify.add_argument("--drop-above", type=float, metavar="PCT",
                          help="drop coefficients whose relative std exceeds PCT %% and "
                               "re-estimate (Gaz: 30)")
    identify.add_argument("-o", "--output", metavar="MODEL.yaml", help="write the model here")
    _output_options(identify, quiet=True)
    identify.set_defaults(run=_identify)

    friction = commands.add_parser(
        "friction", help="compare friction models: RMSE and MAE per joint (Gilbert Tables 6-7)")
    friction.add_argument("robot", help="built-in robot name, or a .yaml / .urdf file")
    friction.add_argument("data", help="the identification log (as for `dynid identify`)")
    friction.add_argument("--validation", metavar="LOG", help="a validation log")
    friction.add_argument("--models", nargs="+", default=["none", "lugre", "stribeck", "sigmoid"],
                          choices=["none", *LINEAR_FRICTION[1:], *NONLINEAR_FRICTION],
                          help="friction models to compare (default none lugre stribeck "
                               "sigmoid)")
    friction.add_argument("--method", choices=["nls", "residual"], default="nls",
                          help="nls: physical parameters and friction jointly (Gilbert, "
                               "default); residual: friction fitted on the residual of a "
                               "rigid-body OLS fit (Gaz)")
    friction.add_argument("--max-samples", type=int, metavar="N",
                          help="nls: decimate longer logs to N samples (default 10000)")
    friction.add_argument("--model", metavar="MODEL.yaml",
                          help="residual: fit on what this model leaves (e.g. from `dynid "
                               "identify-static`), instead of a rigid-body OLS fit of DATA")
    friction.add_argument("--optimizer", choices=["least-squares", "nelder-mead"],
                          help="residual: per-joint fit (default least-squares; Gaz used "
                               "Nelder-Mead)")
    friction.add_argument("-o", "--output", metavar="MODEL.yaml",
                          help="write the model with the one friction model of --models")
    _preprocessing_options(friction)
    _output_options(friction, quiet=True)
    friction.set_defaults(run=_friction_compare)

    compare = commands.add_parser(
        "compare", help="compare identification methods over trajectories (Jaco2 Table 5)")
    compare.add_argument("robot", help="built-in robot name, or a .yaml file (bounds for CLS)")
    compare.add_argument("data", nargs="+", metavar="DATA",
                         help="two or more logs: each identifies in turn, the others validate")
    compare.add_argument("--methods", nargs="+", default=list(COMPARE_DEFAULTS),
                         choices=COMPARE_CHOICES,
                         help="default: " + " ".join(COMPARE_DEFAULTS))
    compare.add_argument("--prior", metavar="ROBOT",
                         help="the CAD values: the cad row, the CLS prior, the NLS start "
                              "(default: the robot's own parameters)")
    compare.add_argument("--references", nargs="+", metavar="TRAJ",
                         help="iv: the trajectory each log tracked, in the order of DATA")
    compare.add_argument("--nls-friction", choices=[*LINEAR_FRICTION, *NONLINEAR_FRICTION],
                         help="nls: the friction model (default: the robot file's, else "
                              "viscous-coulomb)")
    compare.add_argument("-o", "--output", metavar="TABLE", help="write .md, .csv or .json")
    compare.add_argument("--plot", metavar="PNG", help="validation errors per method")
    _preprocessing_options(compare, split=False)
    _output_options(compare, quiet=True)
    compare.set_defaults(run=_compare)

    export = commands.add_parser(
        "export", help="an identified model as URDF, MuJoCo MJCF or a dynid robot file")
    export.add_argument("source", metavar="MODEL",
                        help="a model file with full link parameters (cls3, nls, ...) or a "
                             "robot file (e.g. from `dynid retrieve`)")
    export.add_argument("-o", "--output", required=True, metavar="FILE",
                        help=".urdf, .xml (MJCF) or .yaml (dynid robot file)")
    export.add_argument("--name", help="the exported robot's name")
    _output_options(export)
    export.set_defaults(run=_export)

    report = commands.add_parser(
        "report", help="a self-contained HTML report of a model validated on a log")
    report.add_argument("model", help="a model file from `dynid identify` (or nls, friction)")
    report.add_argument("data", help="the validation log")
    report.add_argument("-o", "--output", required=True, metavar="REPORT.html")
    report.add_argument("--identification", metavar="LOG",
                        help="the log the model was fitted on: its trajectory is plotted")
    report.add_argument("--title", help="the report's title")
    _validation_options(report)
    _output_options(report)
    report.set_defaults(run=_report)

    validate = commands.add_parser(
        "validate", help="an identified model on a log: errors, residuals, consistency")
    validate.add_argument("model", help="a model file from `dynid identify` (or friction, nls)")
    validate.add_argument("data", help="a log (as for `dynid identify`)")
    validate.add_argument("--plot", metavar="PNG", help="measured vs predicted torques")
    _validation_options(validate)
    _output_options(validate)
    validate.set_defaults(run=_validate)

    payload = commands.add_parser(
        "payload", help="identify a payload on the last link, the arm's model frozen")
    payload.add_argument("robot", help="built-in robot name, or a .yaml / .urdf file")
    payload.add_argument("arm", metavar="ARM",
                         help="the arm's model without the payload: a model file from "
                              "`dynid identify`, or a robot file with link parameters")
    payload.add_argument("data", help="a log recorded with the payload (as for `dynid "
                                      "identify`)")
    payload.add_argument("--mass", type=float, nargs=2, metavar=("MIN", "MAX"),
                         help="the payload's mass range [kg]")
    _preprocessing_options(payload, split=False)
    _output_options(payload)
    payload.set_defaults(run=_payload)

    static = commands.add_parser(
        "identify-static", help="reverse-engineer a controller's model from M(q), g(q) samples")
    static.add_argument("robot", help="built-in robot name, or a .yaml / .urdf file")
    static.add_argument("file", help="NPZ (q, M, g) or CSV (q1..qn, M11, M21, M22, ..., "
                                     "g1..gn)")
    static.add_argument("--joint1-gravity", choices=["auto", "keep", "drop"], default="auto",
                        help="g1 rows: dropped when identically zero (auto, default)")
    static.add_argument("--method", choices=["rref", "qr"], default="rref",
                        help="how base-parameter representatives are chosen")
    static.add_argument("--drop-above", type=float, metavar="PCT",
                        help="drop coefficients whose relative std exceeds PCT %% (Gaz: 30)")
    static.add_argument("-o", "--output", metavar="COEFFICIENTS.yaml",
                        help="write the model here")
    _output_options(static)
    static.set_defaults(run=_identify_static)

    retrieve = commands.add_parser(
        "retrieve", help="feasible link parameters from identified base coefficients")
    retrieve.add_argument("robot", help="built-in robot name, or a .yaml file (with bounds)")
    retrieve.add_argument("coefficients", metavar="COEFFS",
                          help="a model file written by `dynid identify` / `identify-static`")
    retrieve.add_argument("--method", choices=["sdp", "penalty"], default="sdp",
                          help="sdp: the convex route, globally optimal (default); penalty: "
                               "Gaz et al.'s Algorithm 1 (annealing + local, Q restarts)")
    retrieve.add_argument("--restarts", type=int, metavar="Q",
                          help="penalty: independent runs, in parallel (default 8)")
    retrieve.add_argument("--stages", type=int, metavar="KAPPA",
                          help="penalty: successive penalty steps per run (default 10)")
    retrieve.add_argument("--seed", type=int, help="penalty: first run's seed (default 0)")
    retrieve.add_argument("--bounds", metavar="FILE",
                          help="YAML `bounds:` mapping (default: the robot file's)")
    retrieve.add_argument("--total-mass", type=float, nargs=2, metavar=("MIN", "MAX"))
    retrieve.add_argument("--prior", metavar="ROBOT",
                          help="sdp: tie-break towards this robot's parameters (e.g. "
                               "panda-cad)")
    retrieve.add_argument("-o", "--output", metavar="PARAMS.yaml",
                          help="write the robot with the retrieved parameters")
    _output_options(retrieve, quiet=True)
    retrieve.set_defaults(run=_retrieve)

    excite = commands.add_parser("excite", help="design an exciting Fourier trajectory")
    excite.add_argument("robot", help="built-in robot name, or a .yaml / .urdf file")
    excite.add_argument("-o", "--output", required=True, metavar="TRAJ.csv",
                        help="time series t, q, dq, ddq (parameters beside it, .yaml)")
    excite.add_argument("--criterion", choices=["cond", "fro", "logdet", "sigma-min"],
                        default="cond", help="what to minimise (default cond)")
    excite.add_argument("--harmonics", type=int, default=10, metavar="L")
    excite.add_argument("--period", type=float, default=20.0, metavar="T",
                        help="seconds (omega_f = 2 pi / T; default 20)")
    excite.add_argument("--rate", type=float, default=1000.0, metavar="HZ",
                        help="sample rate of the written time series (default 1000)")
    excite.add_argument("--grid-rate", type=float, default=100.0, metavar="HZ",
                        help="evaluation grid of the criterion (default 100)")
    excite.add_argument("--rest", action="store_true",
                        help="zero velocity and acceleration at both ends")
    excite.add_argument("--starts", type=int, default=2, help="random starts (default 2)")
    excite.add_argument("--iterations", type=int, default=45,
                        help="L-BFGS iterations of the final refinement (default 45)")
    excite.add_argument("--seed", type=int, default=0)
    _output_options(excite, quiet=True)
    excite.set_defaults(run=_excite)

    simulate = commands.add_parser("simulate", help="the digital twin: log a trajectory")
    simulate.add_argument("robot", help="built-in robot name, or a .yaml / .urdf file (truth)")
    simulate.add_argument("trajectory", help="trajectory file: CSV (t, q, dq, ddq) or the "
                                             "YAML parameters written by `dynid excite`")
    simulate.add_argument("-o", "--output", required=True, metavar="DATA",
                          help="dataset to write (.csv or .npz)")
    simulate.add_argument("--duration", type=float, help="seconds (default: the trajectory's)")
    simulate.add_argument("--rate", type=float, default=1000.0, help="Hz (default 1000)")
    simulate.add_argument("--closed-loop", action="store_true",
                          help="closed-loop tracking, computed torque or joint impedance, "
                               "integrated by RK4 (default: open loop)")
    simulate.add_argument("--natural-frequency", type=float, nargs="+", metavar="W",
                          help="closed loop, computed torque: Kp = W^2, Kd = 2 W [rad/s], one "
                               "value or one per joint (default 20)")
    simulate.add_argument("--stiffness", type=float, nargs="+", metavar="K",
                          help="closed loop, joint impedance instead: K [N m/rad], one value or "
                               "one per joint (with --damping)")
    simulate.add_argument("--damping", type=float, nargs="+", metavar="D",
                          help="closed loop, joint impedance: D [N m s/rad]")
    simulate.add_argument("--controller", metavar="ROBOT",
                          help="closed loop: the model inside the controller (default: the "
                               "simulated robot without friction)")
    simulate.add_argument("--noise", type=float, nargs="+", metavar="SIGMA",
                          help="torque noise std [N m], one value or one per joint")
    simulate.add_argument("--bias", type=float, nargs="+", help="torque bias [N m]")
    simulate.add_argument("--position-resolution", type=float, default=0.0, metavar="RAD",
                          help="encoder quantisation step")
    simulate.add_argument("--velocity-from-positions", action="store_true",
                          help="log velocities as differences of the logged positions")
    simulate.add_argument("--jitter", type=float, default=0.0, metavar="S",
                          help="time-stamp jitter std")
    simulate.add_argument("--drop", type=float, default=0.0, metavar="P",
                          help="probability of losing each sample")
    simulate.add_argument("--seed", type=int, default=0)
    _output_options(simulate)
    simulate.set_defaults(run=_simulate)

    data = commands.add_parser("data", help="inspect logs")
    data_commands = data.add_subparsers(dest="data_command", required=True)
    inspect = data_commands.add_parser(
        "inspect", help="duration, rate and jitter, gaps, ranges, noise per joint")
    inspect.add_argument("file", help="CSV, NPZ or a Panda log folder")
    inspect.add_argument("--robot", help="compare the ranges with this robot's limits")
    _output_options(inspect)
    inspect.set_defaults(run=_data_inspect)

    demo = commands.add_parser(
        "demo", help="the whole workflow on the built-in Panda digital twin: excitation, "
                     "closed-loop log, preprocessing, OLS and CLS-3, retrieval, validation, "
                     "report and URDF")
    demo.add_argument("-o", "--output", default="dynid-demo", metavar="DIR",
                      help="folder for the logs, models, report and URDF (default dynid-demo)")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    demo.add_argument("--duration", type=float, default=DEFAULT_DURATION,
                      help=f"seconds per trajectory (default {DEFAULT_DURATION:g})")
    demo.add_argument("--rate", type=float, default=1000.0,
                      help="control and logging rate [Hz] (default 1000)")
    demo.add_argument("--noise", type=float, default=DEFAULT_NOISE_STD,
                      help=f"torque noise standard deviation [N m] (default {DEFAULT_NOISE_STD:g})")
    demo.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS,
                      help=f"excitation search iterations (default {DEFAULT_ITERATIONS})")
    _output_options(demo, quiet=True)
    demo.set_defaults(run=_demo)

    bench = commands.add_parser("bench", help="time the regressor and RNEA against pinocchio")
    bench.add_argument("--robot", default="panda", help="robot (default panda)")
    bench.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES),
                       help=f"sample counts (default {' '.join(map(str, DEFAULT_SIZES))})")
    bench.add_argument("--repeat", type=int, default=DEFAULT_REPEAT,
                       help=f"best of this many runs (default {DEFAULT_REPEAT})")
    bench.add_argument("--suite", choices=["dynamics", "identification", "consistency",
                                           "compare", "all"],
                       default="dynamics",
                       help="dynamics: regressor and RNEA vs pinocchio (default); "
                            "identification: OLS from 1e5 samples and reverse engineering "
                            "from 1010 poses; consistency: CLS-3, NLS, SDP and penalty "
                            "retrieval; compare: 5 logs x 8 methods, and the demo; all: these "
                            "four (make bench adds the excitation and preprocessing pipeline)")
    _output_options(bench, quiet=True)
    bench.set_defaults(run=_bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    args.command_line = "dynid " + shlex.join(argv)  # provenance, kept in models and reports
    np.set_printoptions(precision=4, suppress=True)
    try:
        return args.run(args)
    except (ValueError, TypeError, OSError) as error:
        print(f"dynid: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
