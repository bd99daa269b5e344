"""`dynid data inspect`: a log's duration, rate and jitter, gaps, ranges and noise per joint,
what its effort column holds and the units it was read in."""

from __future__ import annotations

import argparse

from dynid.cli._common import (
    loaded_robot,
    output_options,
    preprocessing_options,
    print_json,
    robot_options,
)


def register(commands: argparse._SubParsersAction) -> None:
    data = commands.add_parser("data", help="inspect logs")
    data_commands = data.add_subparsers(dest="data_command", required=True)
    inspect = data_commands.add_parser(
        "inspect", help="duration, rate and jitter, gaps, ranges, noise per joint")
    inspect.add_argument("file", help="CSV, NPZ, a ROS 2 bag (.mcap) or a Panda log folder")
    inspect.add_argument("--robot", help="compare the ranges with this robot's limits")
    preprocessing_options(inspect, steps=False)
    output_options(inspect)
    robot_options(inspect)
    inspect.set_defaults(handler=_data_inspect)


def _data_inspect(args: argparse.Namespace) -> int:
    from dynid.data import inspect, read_dataset

    robot = loaded_robot(args) if args.robot else None
    data = read_dataset(args.file, joint_names=list(robot.joint_names) if robot else None,
                        columns=args.columns, units=args.units, effort=args.effort)
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
    for name, values in rows:
        print(f"  {name:<10}" + "".join(f"{v:>10.4g}" for v in values))
    return 0
