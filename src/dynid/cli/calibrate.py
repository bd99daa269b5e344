"""`dynid calibrate`: geometric calibration — which kinematic parameters the measurements can
see, calibration poses to measure, the twin's measurements, and the fit that writes the
corrected robot."""

from __future__ import annotations

import argparse
from pathlib import Path

from dynid.cli._outputs import FIGURE_SUFFIXES, output_options
from dynid.cli._parsing import SEED, Range, print_json
from dynid.cli._robot_options import ROBOT_HELP, loaded_robot, robot_options

KINDS = ("position", "pose", "plane")
ROBOT_SUFFIXES = (".yaml", ".yml", ".urdf")
MEASUREMENT_SUFFIXES = (".csv", ".npz")


def register(commands: argparse._SubParsersAction) -> None:
    calibrate = commands.add_parser(
        "calibrate", help="geometric calibration: the kinematic parameters from end-effector "
                          "measurements")
    steps = calibrate.add_subparsers(dest="calibrate_command", required=True)

    show = steps.add_parser("identifiable", help="the kinematic parameters a kind of "
                                                 "measurement can identify, and how the rest "
                                                 "regroup")
    _robot_and_model(show)
    show.add_argument("--kind", choices=KINDS, default="position",
                      help="what is measured (default %(default)s)")
    output_options(show)
    show.set_defaults(handler=_identifiable)

    poses = steps.add_parser("poses", help="D-, E- or A-optimal calibration poses")
    _robot_and_model(poses)
    poses.add_argument("-n", "--count", type=Range(int, 1, 20_000), required=True,
                       help="poses to choose")
    poses.add_argument("-o", "--output", required=True, metavar="POSES.csv",
                       help="the chosen joint positions q1..qn [rad, m]")
    poses.add_argument("--kind", choices=("position", "pose"), default="position",
                       help="what will be measured (default %(default)s)")
    poses.add_argument("--criterion", choices=("D", "E", "A"), default="D",
                       help="D: log det of the information matrix; E: its least eigenvalue; "
                            "A: the mean variance (default %(default)s)")
    poses.add_argument("--candidates", metavar="FILE",
                       help="choose among these joint positions (a CSV with q1..qn) instead of "
                            "random poses within the joint limits")
    poses.add_argument("--random", type=Range(int, 1, 20_000), default=2000, metavar="N",
                       help="random candidate poses within the joint limits (default "
                            "%(default)s)")
    poses.add_argument("--sigma-position", type=Range(float, high=1.0, above=0), metavar="M",
                       help="--kind pose: the instrument's position noise [m], with "
                            "--sigma-rotation, to weight rotations against positions as the fit "
                            "does (default: 1 rad counts as the reach)")
    poses.add_argument("--sigma-rotation", type=Range(float, high=1.0, above=0), metavar="RAD",
                       help="--kind pose: the instrument's rotation noise [rad]")
    poses.add_argument("--seed", type=SEED, default=0, help="random seed (default %(default)s)")
    output_options(poses)
    poses.set_defaults(handler=_poses, output_suffixes={"-o": (".csv",)})

    measure = steps.add_parser("measure", help="the twin: a robot with kinematic errors, "
                                               "measured with noise at given poses")
    _robot_and_model(measure)
    measure.add_argument("poses", metavar="POSES.csv",
                         help="joint positions q1..qn (e.g. from `dynid calibrate poses`)")
    measure.add_argument("-o", "--output", required=True, metavar="MEASUREMENTS",
                         help="the measurements (.csv or .npz)")
    measure.add_argument("--kind", choices=KINDS, default="position",
                         help="what is measured (default %(default)s); plane: contacts with "
                              "three planes (normals x, y, z) through the median tool point")
    measure.add_argument("--sigma-position", type=Range(float, high=1.0, above=0),
                         default=1e-4, metavar="M",
                         help="noise std of each measured coordinate [m] (default %(default)g)")
    measure.add_argument("--sigma-rotation", type=Range(float, high=1.0, above=0),
                         default=1e-3, metavar="RAD",
                         help="pose: noise std of each rotation component [rad] (default "
                              "%(default)g)")
    measure.add_argument("--offset-error", type=Range(float, 0, 0.5), default=5e-3,
                         metavar="RAD",
                         help="the truth's angle errors, uniform within +-RAD on every "
                              "identifiable angle (default %(default)g)")
    measure.add_argument("--length-error", type=Range(float, 0, 0.5), default=1e-3,
                         metavar="M",
                         help="the truth's length errors, uniform within +-M on every "
                              "identifiable length (default %(default)g)")
    measure.add_argument("--truth", metavar="TRUTH.json",
                         help="write the truth's parameter values (JSON) to compare a fit with")
    measure.add_argument("--seed", type=SEED, default=0, help="random seed (default %(default)s)")
    output_options(measure)
    measure.set_defaults(handler=_measure, output_suffixes={"-o": MEASUREMENT_SUFFIXES,
                                                            "--truth": (".json",)})

    fit = steps.add_parser("fit", help="Levenberg-Marquardt on the measurements; the "
                                       "corrected robot")
    _robot_and_model(fit)
    fit.add_argument("measurements", nargs="+", metavar="MEASUREMENTS",
                     help="measurement files: CSV or NPZ (see the docs' formats), or ROS 2 "
                          "bags (.mcap) of a pose topic beside a JointState topic; several "
                          "are fitted together")
    fit.add_argument("-o", "--output", metavar="CORRECTED",
                     help="the corrected robot: a robot file (.yaml) or a URDF (.urdf)")
    fit.add_argument("--urdf", metavar="CORRECTED.urdf",
                     help="the corrected robot as a URDF too (with -o .yaml; needed there "
                          "where the correction leaves the robot's DH table: a URDF robot, "
                          "or a Hayati tilt)")
    fit.add_argument("--validate", nargs="+", metavar="MEASUREMENTS",
                     help="held-out measurements: errors before and after on poses the fit "
                          "did not see")
    fit.add_argument("--heldout", type=Range(float, high=0.9, above=0), metavar="FRACTION",
                     help="hold out this random fraction of the measurements instead")
    fit.add_argument("--kind", choices=("position", "pose"),
                     help="read only the positions of pose files (default: what each file "
                          "holds)")
    fit.add_argument("--sigma-position", type=Range(float, high=1.0, above=0), metavar="M",
                     help="noise std of the measured coordinates [m], for files without a "
                          "sigma column")
    fit.add_argument("--sigma-rotation", type=Range(float, high=1.0, above=0), metavar="RAD",
                     help="noise std of the rotation components [rad], for pose files "
                          "without a sigma_rotation column")
    fit.add_argument("--joint-names", action="store_true",
                     help="the files' joint columns carry the robot's joint names (not "
                          "q1..qn); bags always match joints by name")
    fit.add_argument("--pose-topic", metavar="TOPIC",
                     help="bags: the pose topic (default: the bag's only one)")
    fit.add_argument("--joint-topic", metavar="TOPIC",
                     help="bags: the JointState topic (default: the bag's only one)")
    fit.add_argument("--max-gap", type=Range(float, high=10.0, above=0), default=0.01,
                     metavar="S",
                     help="bags: a pose farther than this from joint readings is dropped "
                          "(default %(default)g)")
    fit.add_argument("--plot", metavar="FIGURE",
                     help="errors per pose before and after, and their histogram (.png, .pdf, "
                          ".svg)")
    fit.add_argument("--seed", type=SEED, default=0,
                     help="--heldout: the split's random seed (default %(default)s)")
    output_options(fit)
    fit.set_defaults(handler=_fit, output_suffixes={"-o": ROBOT_SUFFIXES, "--plot":
                                                    FIGURE_SUFFIXES, "--urdf": (".urdf",)})


def _robot_and_model(parser: argparse.ArgumentParser) -> None:
    """The robot, and which of its kinematic parameters are modelled."""
    parser.add_argument("robot", help=ROBOT_HELP)
    parser.add_argument("--parameters", choices=("full", "offsets"), default="full",
                        help="full: every link parameter, with Hayati's tilt where consecutive "
                             "axes are parallel; offsets: the joint offsets only (default "
                             "%(default)s)")
    parser.add_argument("--base", action=argparse.BooleanOptionalAction, default=True,
                        help="estimate the base frame: where the robot stands in the "
                             "instrument's frame (default; --no-base: the instrument measures "
                             "in the robot's base frame)")
    parser.add_argument("--tool", action=argparse.BooleanOptionalAction, default=True,
                        help="estimate the tool frame (default; --no-tool: the robot's tool, "
                             "with --marker, is exact)")
    parser.add_argument("--marker", type=Range(float, -10.0, 10.0), nargs=3,
                        metavar=("X", "Y", "Z"),
                        help="the measured point in the robot's tool frame [m] (a marker or "
                             "a probe tip; default: the tool frame's origin)")
    robot_options(parser)


def _model(args: argparse.Namespace):
    """The kinematic model of the robot the arguments name."""
    import dataclasses

    from dynid.calibration import KinematicModel

    robot = loaded_robot(args)
    if args.marker is not None:
        robot = dataclasses.replace(robot, tool=robot.tool @ _marker(args))
    return KinematicModel(robot, parameters=args.parameters, base=args.base, tool=args.tool)


def _marker(args: argparse.Namespace):
    """The measured point's frame in the tool frame, ``(4, 4)`` (--marker; identity without)."""
    import numpy as np

    out = np.eye(4)
    if args.marker is not None:
        out[:3, 3] = args.marker
    return out


def _identifiable(args: argparse.Namespace) -> int:
    model = _model(args)
    found = model.identifiable(args.kind)
    if args.json:
        print_json({"robot": model.robot_nominal.name, "parameters": list(model.names),
                    "units": list(model.units), **found.report()})
        return 0
    print(f"{model.robot_nominal.name}: {model.n_parameters} kinematic parameters, "
          f"{found.rank} identifiable from {args.kind} measurements")
    if found.scale_held is not None:
        print(f"  {found.scale_held}: held at nominal to fix the robot's scale (plane contacts "
              "cannot see it)")
    for name in found.independent:
        regrouped = found.regrouped.get(name)
        print(f"  {name}" + (f"  (stands for {regrouped})" if regrouped else ""))
    if found.unidentifiable:
        print(f"  not seen by {args.kind} measurements (held at nominal): "
              + ", ".join(found.unidentifiable))
    return 0


def _poses(args: argparse.Namespace) -> int:
    from dynid.calibration import read_joint_positions, select_poses
    from dynid.calibration.io import write_joint_positions

    if args.candidates is None and args.count > args.random:
        raise ValueError(f"`-n`: {args.count} poses to choose from `--random` {args.random} "
                         "candidates; raise --random")
    model = _model(args)
    candidates = None if args.candidates is None else read_joint_positions(
        args.candidates, model.n_joints)
    chosen = select_poses(model, args.count, kind=args.kind, candidates=candidates,
                          n_candidates=args.random, criterion=args.criterion, seed=args.seed,
                          sigma_position=args.sigma_position,
                          sigma_rotation=args.sigma_rotation)
    write_joint_positions(args.output, chosen.q)
    summary = {"robot": model.robot_nominal.name, "count": int(chosen.q.shape[0]),
               "kind": args.kind, "criterion": chosen.criterion, "value": chosen.value,
               "condition_number": chosen.condition, "parameters": list(chosen.parameters),
               "output": args.output}
    if args.json:
        print_json(summary)
        return 0
    print(f"{model.robot_nominal.name}: {summary['count']} poses for {args.kind} "
          f"measurements of {len(chosen.parameters)} identifiable parameters; "
          f"{args.criterion}-criterion {chosen.value:.4g}, condition number "
          f"{chosen.condition:.3g}; written to {args.output}")
    return 0


def _measure(args: argparse.Namespace) -> int:
    import json

    from dynid._files import atomic_write_all, to_builtin
    from dynid.calibration import measure, perturbed, read_joint_positions
    from dynid.calibration.io import write_measurements

    model = _model(args)
    q = read_joint_positions(args.poses, model.n_joints)
    truth = perturbed(model, offset=args.offset_error, length=args.length_error,
                      seed=args.seed, kind="pose" if args.kind == "pose" else "position")
    data = measure(model, truth, q, kind=args.kind, sigma_position=args.sigma_position,
                   sigma_rotation=args.sigma_rotation, seed=args.seed)
    record = {"robot": model.robot_nominal.name, "kind": args.kind,
              "n_measurements": len(data), "sigma_position_m": args.sigma_position,
              "offset_error_rad": args.offset_error, "length_error_m": args.length_error,
              "seed": args.seed, "output": args.output,
              "truth": {name: {"value": float(v), "nominal": float(n), "unit": unit}
                        for name, v, n, unit in zip(model.names, truth, model.nominal,
                                                    model.units, strict=True)
                        if v != n}}
    writes = [(args.output, lambda tmp: write_measurements(data, tmp))]
    if args.truth is not None:
        text = json.dumps(to_builtin(record), indent=2)
        writes.append((args.truth, lambda tmp: tmp.write_text(text)))
    atomic_write_all(writes)
    if args.json:
        print_json(record)
        return 0
    print(f"{model.robot_nominal.name}: {len(data)} {args.kind} measurements of a twin with "
          f"{len(record['truth'])} kinematic errors (angles within +-{args.offset_error:g} "
          f"rad, lengths within +-{args.length_error:g} m), noise {args.sigma_position:g} m; "
          f"written to {args.output}" + (f", the truth to {args.truth}" if args.truth else ""))
    return 0


def _read_sets(args: argparse.Namespace, paths: list[str], joints: list[str]) -> list:
    from dynid.calibration.io import read_measurement_bag, read_measurements

    sets = []
    for path in paths:
        if Path(path).suffix.lower() == ".mcap" or Path(path).is_dir():
            sets.append(read_measurement_bag(
                path, pose_topic=args.pose_topic, joint_topic=args.joint_topic, joints=joints,
                sigma_position=args.sigma_position, sigma_rotation=args.sigma_rotation,
                kind=args.kind or "pose", max_gap=args.max_gap))
        else:
            sets.append(read_measurements(
                path, joints=joints if args.joint_names else None, kind=args.kind,
                sigma_position=args.sigma_position, sigma_rotation=args.sigma_rotation))
    return sets


def _fit(args: argparse.Namespace) -> int:
    import dataclasses

    import numpy as np

    from dynid.calibration import calibrate, plot_calibration

    if args.validate is not None and args.heldout is not None:
        raise ValueError("`--validate` gives held-out measurements and `--heldout` holds some "
                         "out of the fit's: give one")
    if args.urdf is not None and (args.output is None
                                  or Path(args.output).suffix.lower() == ".urdf"):
        raise ValueError("`--urdf` writes the URDF beside the robot file of `-o "
                         "CORRECTED.yaml`")
    if any(Path(path).suffix.lower() == ".mcap" or Path(path).is_dir()
           for path in args.measurements + (args.validate or [])) and args.sigma_position is None:
        raise ValueError("a bag's poses carry no noise: give `--sigma-position` (and "
                         "`--sigma-rotation` for poses)")
    model = _model(args)
    if args.output is not None and Path(args.output).suffix.lower() != ".urdf" \
            and args.urdf is None and model.robot_nominal.convention == "urdf":
        raise ValueError("`-o`: the corrected robot of a URDF robot is a URDF: give `--urdf "
                         "CORRECTED.urdf` for the robot file to point at, or write `-o` as "
                         ".urdf")
    joints = list(model.robot_nominal.joint_names)
    sets = _read_sets(args, args.measurements, joints)
    heldout = None if args.validate is None else _read_sets(args, args.validate, joints)
    if args.heldout is not None:
        split = [data.split(args.heldout, seed=args.seed) for data in sets]
        sets, heldout = [fit for fit, _ in split], [held for _, held in split]
    result = calibrate(model, sets)
    _check_plausible(model, sets, result)
    checked = None if heldout is None else result.heldout(heldout)
    # the tool frame without the marker: the robot's own (the marker is the instrument's)
    corrected = result.robot
    corrected = dataclasses.replace(corrected, tool=corrected.tool @ np.linalg.inv(_marker(args)))
    _write_robot(args, corrected)
    if args.plot is not None:
        from dynid.evaluation import save_figure

        save_figure(plot_calibration(result, heldout), args.plot)
    report = result.report()
    summary = {"robot": model.robot_nominal.name, **report,
               "heldout": None if checked is None else {
                   key: checked[key] for key in ("rms_position_before", "rms_position_after",
                                                 "rms_rotation_before", "rms_rotation_after")},
               "output": args.output, "urdf": args.urdf, "plot": args.plot}
    if args.json:
        print_json(summary)
        return 0
    print(f"{model.robot_nominal.name}: {len(result.estimated)} kinematic parameters from "
          f"{sum(len(data) for data in sets)} measurements ({result.iterations} evaluations, "
          f"{'converged' if result.converged else 'NOT converged: ' + result.message}); "
          f"chi2/dof {result.chi2_dof:.3g}")
    print(f"  RMS position error {1e3 * result.rms_position_before:.4g} mm -> "
          f"{1e3 * result.rms_position_after:.4g} mm"
          + ("" if result.rms_rotation_before is None else
             f"; rotation {1e3 * result.rms_rotation_before:.4g} mrad -> "
             f"{1e3 * result.rms_rotation_after:.4g} mrad"))
    held = None if result.identifiability is None else result.identifiability.scale_held
    if held is not None:
        print(f"  `{held}` held at nominal: plane contacts cannot see the robot's scale (add "
              "position measurements, a known distance, to estimate it)")
    if checked is not None:
        print(f"  held out: {1e3 * checked['rms_position_before']:.4g} mm -> "
              f"{1e3 * checked['rms_position_after']:.4g} mm")
    width = max(len(name) for name in result.estimated)
    print(f"  {'parameter':<{width}}  {'nominal':>12}  {'estimate':>12}  {'std':>9}")
    for row in report["parameters"]:
        if not row["estimated"]:
            continue
        scale, unit = (1e3, "mrad") if row["unit"] == "rad" else (1e3, "mm")
        print(f"  {row['name']:<{width}}  {scale * row['nominal']:>12.5f}  "
              f"{scale * row['value']:>12.5f}  {scale * row['std']:>9.3g} {unit}")
    base = report["base_xyz_m"]
    if args.base:
        print("  base frame in the instrument's: xyz " + " ".join(f"{v:.5f}" for v in base)
              + " m, rpy " + " ".join(f"{v:.5f}" for v in report["base_rpy_rad"]) + " rad")
    written = [path for path in (args.output, args.urdf, args.plot) if path is not None]
    if written:
        print(f"  written: {', '.join(written)}")
    if not np.isfinite(result.chi2_dof):
        print("  no redundancy: as many residuals as unknowns, no std")
    return 0


# the CLI writes no corrected robot beyond these (a unit or setup mistake, not a calibration)
MAX_CHI2_DOF = 100.0
MAX_LENGTH_CHANGE = 0.05  # of the reach
MAX_ANGLE_CHANGE = 0.2  # [rad]


def _check_plausible(model, sets: list, result) -> None:
    """ValueError (nothing written) when the fit is far from its noise (chi2/dof above
    ``MAX_CHI2_DOF``) or its corrections are implausible for a calibration (a length change
    above ``MAX_LENGTH_CHANGE`` of the reach, an angle change above ``MAX_ANGLE_CHANGE``; the
    base frame, where the instrument stands, excluded): a unit or setup mistake, named."""
    import numpy as np

    problems = []
    if np.isfinite(result.chi2_dof) and result.chi2_dof > MAX_CHI2_DOF:
        problems.append(f"chi2/dof {result.chi2_dof:.3g} > {MAX_CHI2_DOF:g}: the residuals are "
                        "far above the stated noise")
    change = result.values - result.start
    for name in result.estimated:
        k = model.names.index(name)
        if name.startswith("base "):
            continue
        if model.is_angle[k] and abs(change[k]) > MAX_ANGLE_CHANGE:
            problems.append(f"`{name}` changes by {change[k]:.3g} rad (> {MAX_ANGLE_CHANGE:g})")
        elif not model.is_angle[k] and abs(change[k]) > MAX_LENGTH_CHANGE * model.reach:
            problems.append(f"`{name}` changes by {change[k]:.3g} m (> {MAX_LENGTH_CHANGE:.0%} "
                            f"of the reach {model.reach:.3g} m)")
    if not problems:
        return
    measured = [d for d in sets if d.kind != "plane"]
    ratio = ""
    if measured:
        points = np.vstack([d.position for d in measured])
        modelled = np.vstack([model.pose(None, d.q)[:, :3, 3] for d in measured])
        spread = np.sqrt(((points - points.mean(axis=0)) ** 2).sum(axis=1).mean())
        nominal = np.sqrt(((modelled - modelled.mean(axis=0)) ** 2).sum(axis=1).mean())
        if nominal > 0:
            ratio = (f"; the measured points spread {spread / nominal:.3g} times as wide as the "
                     "robot's" + (" (positions in mm? name the columns x_mm, y_mm, z_mm)"
                                  if 300 < spread / nominal < 3000 else ""))
    raise ValueError(f"`measurements`: the fit is implausible, nothing written: "
                     f"{'; '.join(problems[:4])}{ratio}. Likely causes: positions in mm without "
                     "the `_mm` suffix, joints in degrees without `_deg`, a wrong `--marker`, "
                     "or the wrong robot")


def _write_robot(args: argparse.Namespace, robot) -> None:
    """The corrected robot to `-o` (a robot file or a URDF) and `--urdf`, all or nothing
    (``atomic_write_all``; a file already there is replaced only when every file is ready).
    A robot that keeps its DH table is a robot file of its own; one that left it (a URDF
    robot, a Hayati tilt) is a URDF, which the robot file then points at (`--urdf` needed)."""
    import dataclasses
    import os
    import tempfile

    from dynid._files import atomic_write_all, naming
    from dynid._reading import dump_yaml
    from dynid.export import check_names, to_urdf
    from dynid.robot import Source
    from dynid.robot._yaml import robot_to_dict

    if args.output is None:
        return
    check_names(robot)
    output = Path(args.output)
    if output.suffix.lower() == ".urdf":
        text = to_urdf(robot, None, None)
        atomic_write_all([(output, lambda tmp: tmp.write_text(text, encoding="utf-8"))])
        return
    if robot.convention != "urdf":
        spec = robot_to_dict(robot, folder=output.parent)
        writes = []
        if args.urdf is not None:
            urdf_text = to_urdf(robot, None, None)
            writes.append((args.urdf, lambda tmp: tmp.write_text(urdf_text, encoding="utf-8")))
    else:
        if args.urdf is None:
            raise ValueError("`-o`: the corrected robot leaves the DH table (a URDF robot, or "
                             "a Hayati tilt of parallel axes): give `--urdf CORRECTED.urdf` "
                             "for the robot file to point at, or write `-o` as .urdf")
        urdf = Path(args.urdf)
        urdf_text = to_urdf(robot, None, None)
        # the robot file describes the URDF it points at: read from a temporary copy beside
        # the final one, then the reference set to the final path; both renamed together
        with naming(urdf):  # a full disk names the URDF, not the staged copy
            handle, staged = tempfile.mkstemp(suffix=".urdf", dir=urdf.resolve().parent)
            os.close(handle)
        try:
            with naming(urdf):
                Path(staged).write_text(urdf_text, encoding="utf-8")
            pointed = dataclasses.replace(robot, source=Source(
                citation=robot.source.citation, url=staged,
                notes=(robot.source.notes + "\n" if robot.source.notes else "")
                + "kinematics calibrated by dynid calibrate"))
            spec = robot_to_dict(pointed, folder=output.parent)
        finally:
            Path(staged).unlink(missing_ok=True)
        final = urdf.resolve()
        relative = os.path.relpath(final, output.parent.resolve())
        spec["urdf"] = str(final) if relative.startswith(os.path.join(os.pardir, os.pardir)) \
            else relative
        writes = [(urdf, lambda tmp: tmp.write_text(urdf_text, encoding="utf-8"))]
    text = dump_yaml(spec, sort_keys=False, default_flow_style=None)
    atomic_write_all([*writes, (output, lambda tmp: tmp.write_text(text))])
