"""The ``dynid`` command."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

__all__ = ["main"]


def _print_json(payload: dict) -> None:
    print(json.dumps(payload, indent=2))


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


def _demo(args: argparse.Namespace) -> int:
    from dynid.demo import format_summary, run_demo

    if args.plot and not Path(args.plot).parent.is_dir():  # fail before the run, not after
        raise ValueError(f"`--plot`: folder {str(Path(args.plot).parent)!r} does not exist")
    result = run_demo(duration=args.duration, noise_std=args.noise, seed=args.seed,
                      progress=_progress(args))
    if args.plot:
        from dynid.plots import plot_torques

        plot_torques(result.validation.t, result.validation.tau, result.predicted, args.plot,
                     title=f"{result.robot} twin, validation trajectory: measured vs identified")
    if args.json:
        _print_json(result.to_json())
    else:
        print(format_summary(result))
        if args.plot:
            print(f"  plot written to {args.plot}")
    return 0


def _bench(args: argparse.Namespace) -> int:
    from dynid.bench import format_bench, run_bench

    result = run_bench(robot=args.robot, sizes=args.sizes, repeat=args.repeat,
                       progress=_progress(args))
    if args.json:
        _print_json(result)
    else:
        print(format_bench(result))
    return 0


def _parser() -> argparse.ArgumentParser:
    from dynid.bench import DEFAULT_REPEAT, DEFAULT_SIZES
    from dynid.demo import DEFAULT_DURATION, DEFAULT_NOISE_STD

    parser = argparse.ArgumentParser(
        prog="dynid", description="Dynamic identification of robot manipulators.")
    commands = parser.add_subparsers(dest="command", required=True)

    robots = commands.add_parser("robots", help="list the built-in robots")
    robots.add_argument("--json", action="store_true", help="machine-readable output")
    robots.set_defaults(run=_robots)

    robot = commands.add_parser("robot", help="inspect a robot")
    robot_commands = robot.add_subparsers(dest="robot_command", required=True)
    show = robot_commands.add_parser("show", help="joints, convention, limits, mass, base count")
    show.add_argument("robot", help="built-in robot name, or a .yaml / .urdf file")
    show.add_argument("--json", action="store_true", help="machine-readable output")
    show.set_defaults(run=_robot_show)

    demo = commands.add_parser("demo", help="identify the built-in Panda digital twin end to end")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    demo.add_argument("--duration", type=float, default=DEFAULT_DURATION,
                      help=f"seconds per trajectory (default {DEFAULT_DURATION:g})")
    demo.add_argument("--noise", type=float, default=DEFAULT_NOISE_STD,
                      help=f"torque noise standard deviation [N m] (default {DEFAULT_NOISE_STD:g})")
    demo.add_argument("--plot", metavar="PNG", help="write the validation torque plot here")
    demo.add_argument("--json", action="store_true", help="machine-readable output")
    demo.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    demo.set_defaults(run=_demo)

    bench = commands.add_parser("bench", help="time the regressor and RNEA against pinocchio")
    bench.add_argument("--robot", default="panda", help="robot (default panda)")
    bench.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES),
                       help=f"sample counts (default {' '.join(map(str, DEFAULT_SIZES))})")
    bench.add_argument("--repeat", type=int, default=DEFAULT_REPEAT,
                       help=f"best of this many runs (default {DEFAULT_REPEAT})")
    bench.add_argument("--json", action="store_true", help="machine-readable output")
    bench.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    bench.set_defaults(run=_bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    np.set_printoptions(precision=4, suppress=True)
    try:
        return args.run(args)
    except (ValueError, TypeError, OSError) as error:
        print(f"dynid: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
