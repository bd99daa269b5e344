"""`dynid data inspect`: a log's duration, rate and jitter, gaps, ranges and noise per joint,
what its effort column holds and the units it was read in. `dynid data prepare`: a raw log
prepared as identification prepares it (resampled, filtered, differentiated, trimmed), piece by
piece into an NPZ that `dynid identify ROBOT FILE --as-is --mmap` streams: a log of any length.
"""

from __future__ import annotations

import argparse

from dynid.cli._log_options import (
    on_joint_side,
    preprocessing_options,
    step_options,
    velocity_source,
)
from dynid.cli._outputs import output_options
from dynid.cli._parsing import print_json, stderr_progress
from dynid.cli._robot_options import description_options, loaded_robot, robot_options


def register(commands: argparse._SubParsersAction) -> None:
    data = commands.add_parser("data", help="inspect and prepare logs")
    data_commands = data.add_subparsers(dest="data_command", required=True)
    inspect = data_commands.add_parser(
        "inspect", help="duration, rate and jitter, gaps, ranges, noise per joint")
    inspect.add_argument("file", help="CSV, NPZ, a ROS 2 bag (.mcap) or a Panda log folder")
    inspect.add_argument("--robot", help="compare the ranges with this robot's limits")
    preprocessing_options(inspect, steps=False)
    output_options(inspect)
    robot_options(inspect)
    inspect.set_defaults(handler=_data_inspect)

    prepare = data_commands.add_parser(
        "prepare", help="resample, filter, differentiate and trim a log of any length into an "
                        "NPZ that `identify --as-is --mmap` streams")
    prepare.add_argument("file", help="CSV, NPZ, a ROS 2 bag (.mcap) or a Panda log folder")
    prepare.add_argument("-o", "--output", required=True, metavar="PREPARED.npz",
                         help="the prepared log: an uncompressed NPZ, written piece by piece, "
                              "atomically")
    prepare.add_argument("--robot", help="pick and order the joints by this robot's joint "
                                         "names (a ROS 2 bag, a CSV with named columns)")
    preprocessing_options(prepare, steps=False)
    prepare.add_argument("--mmap", action="store_true",
                         help="memory-map the NPZ log (uncompressed, SI units) instead of "
                              "reading it in: a log longer than memory")
    step_options(prepare)
    prepare.add_argument("--tip", metavar="LINK",
                         help="with --robot a tree URDF (an arm with a gripper): the link where "
                              "the arm ends")
    description_options(prepare)
    output_options(prepare, quiet=True)
    prepare.set_defaults(handler=_data_prepare, output_suffixes={"-o": (".npz",)})


def _data_inspect(args: argparse.Namespace) -> int:
    from dynid.data import inspect, read_dataset
    from dynid.metrics import NOT_FINITE_NOTE, any_not_finite, cell

    robot = loaded_robot(args) if args.robot else None
    data = read_dataset(args.file, joint_names=list(robot.joint_names) if robot else None,
                        columns=args.columns, units=args.units, effort=args.effort)
    data = on_joint_side(args, data, robot)
    report = inspect(data, robot)
    current = data.effort == "current"
    report["effort"] = data.effort
    report["units"] = dict(data.metadata.get("units", {}))
    if current and "limits" in report:  # currents are not comparable with torque limits
        del report["limits"]["tau_fraction_of_limit"]
    if args.json:
        print_json(report)
        return 0
    step = report["step_ms"]
    print(f"{args.file}: {report['n_samples']} samples, {report['n_joints']} joints, "
          f"{report['duration_s']:.3f} s")
    print(f"  effort: {'motor currents [A]' if current else 'joint torques [N m]'}; read in "
          + ", ".join(f"{field} {unit}" for field, unit in report["units"].items())
          + " (shown in SI)")
    print(f"  rate {report['rate_hz']:.4g} Hz; step {step['median']:.4g} ms median, "
          f"{step['std']:.3g} ms std, {step['min']:.4g}..{step['max']:.4g} ms")
    print(f"  gaps over {report['gaps']['threshold_ms']:.3g} ms: {report['gaps']['count']}, "
          f"largest {report['gaps']['largest_ms']:.3g} ms; accelerations "
          f"{'present' if report['has_ddq'] else 'absent'}")
    label = "|i| max" if current else "|tau| max"
    rows = [("q min", report["range"]["q_min"]), ("q max", report["range"]["q_max"]),
            ("|dq| max", report["range"]["dq_abs_max"]),
            (label, report["range"]["tau_abs_max"]),
            *((f"noise {'i' if k == 'tau' and current else k}", v)
              for k, v in report["noise_std"].items())]
    if "limits" in report:
        rows += [("q outside", report["limits"]["q_outside"]),
                 ("dq/limit", report["limits"]["dq_fraction_of_limit"])]
        if not current:
            rows.append(("tau/limit", report["limits"]["tau_fraction_of_limit"]))
    print("  " + " " * 10 + "".join(f"{j + 1:>10d}" for j in range(report["n_joints"])))
    table = [f"  {name:<10}" + "".join(f"{cell(v, '.4g'):>10}" for v in values)
             for name, values in rows]
    print("\n".join(table))
    if any_not_finite(*table):
        print(f"  {NOT_FINITE_NOTE}")
    return 0


def _data_prepare(args: argparse.Namespace) -> int:
    from dynid.data import prepare_pieces, read_dataset, write_log_pieces
    from dynid.data._stream_prepare import time_series

    robot = loaded_robot(args) if args.robot else None
    data = read_dataset(args.file, joint_names=list(robot.joint_names) if robot else None,
                        columns=args.columns, units=args.units, effort=args.effort,
                        mmap=args.mmap)
    data = on_joint_side(args, data, robot)
    pieces = prepare_pieces(time_series(data), rate=args.resample, cutoff=args.cutoff,
                            order=args.order, trim_seconds=args.trim,
                            velocity=velocity_source(args), progress=stderr_progress(args))
    seen: dict = {"n_samples": 0}

    def counted():
        for piece in pieces:
            seen.setdefault("t_start", float(piece.t[0]))
            seen.setdefault("preprocessing", list(piece.metadata.get("preprocessing", [])))
            seen["n_samples"] += piece.n_samples
            seen["t_end"] = float(piece.t[-1])
            yield piece

    write_log_pieces(args.output, counted())
    summary = {"output": args.output, "n_joints": data.n_joints, **seen}
    if args.json:
        print_json(summary)
        return 0
    print(f"{args.output}: {summary['n_samples']} samples, {data.n_joints} joints, "
          f"t {summary['t_start']:.6g}..{summary['t_end']:.6g} s")
    for step in summary["preprocessing"]:
        print(f"  {step}")
    return 0
