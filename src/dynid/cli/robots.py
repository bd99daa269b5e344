"""`dynid robots` (the built-in robots) and `dynid robot show` (one robot in detail)."""

from __future__ import annotations

import argparse
import math

from dynid.cli._common import ROBOT_HELP, output_options, print_json


def register(commands: argparse._SubParsersAction) -> None:
    robots = commands.add_parser("robots", help="list the built-in robots")
    output_options(robots)
    robots.set_defaults(handler=_robots)

    robot = commands.add_parser("robot", help="inspect a robot")
    robot_commands = robot.add_subparsers(dest="robot_command", required=True)
    show = robot_commands.add_parser("show", help="joints, convention, limits, mass, base count")
    show.add_argument("robot", help=ROBOT_HELP)
    output_options(show)
    show.set_defaults(handler=_robot_show)


def _robots(args: argparse.Namespace) -> int:
    from dynid.robot import builtin_robots, load_robot

    rows = []
    for name in builtin_robots():
        robot = load_robot(name)
        rows.append({"name": name, "n_joints": robot.n_joints, "convention": robot.convention,
                     "description": robot.description})
    if args.json:
        print_json({"robots": rows})
    else:
        for row in rows:
            print(f"{row['name']:<10} {row['n_joints']} joints  {row['convention']:<4} "
                  f"{row['description']}")
    return 0


def _robot_show(args: argparse.Namespace) -> int:
    from dynid.identification import robot_base_parameters
    from dynid.robot import load_robot
    from dynid.robot.inertia import MASS

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
        print_json(payload)
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
            row[key] = float(values[k]) if math.isfinite(values[k]) else None
        rows.append(row)
    return rows
