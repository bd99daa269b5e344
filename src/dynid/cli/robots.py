"""`dynid robots` (the built-in robots) and `dynid robot show` (one robot in detail)."""

from __future__ import annotations

import argparse
import math

from dynid.cli._outputs import output_options
from dynid.cli._parsing import print_json
from dynid.cli._robot_options import ROBOT_HELP, description_options, loaded_robot, rtol_option

# the optional extra that installs example-robot-data (dynid.robot._example_robot_data.INSTALL;
# literal here: `dynid robots` imports nothing it does not need)
_EXAMPLE_ROBOT_DATA = "example-robot-data"

TIP_HELP = ("the link where a URDF robot's arm ends (a URDF with a gripper or another branch "
            "needs one; the joints after it are locked)")


def register(commands: argparse._SubParsersAction) -> None:
    robots = commands.add_parser(
        "robots", help="list the built-in robots (and example-robot-data's, when installed)")
    output_options(robots)
    robots.add_argument("--markdown", action="store_true",
                        help="dynid's own built-in robots as the README's Markdown table")
    robots.set_defaults(handler=_robots)

    robot = commands.add_parser("robot", help="inspect a robot")
    robot_commands = robot.add_subparsers(dest="robot_command", required=True)
    show = robot_commands.add_parser(
        "show", help="joints, convention, limits, mass, base count, bounds and priors")
    show.add_argument("robot", help=ROBOT_HELP)
    show.add_argument("--tip", metavar="LINK", help=TIP_HELP)
    description_options(show)
    rtol_option(show)
    output_options(show)
    show.set_defaults(handler=_robot_show)


def _robots(args: argparse.Namespace) -> int:
    from dynid.robot import builtin_robots, example_robots, load_robot
    from dynid.robot._example_robot_data import INSTALL, robots_folder

    rows = []
    for name in builtin_robots():
        robot = load_robot(name)
        rows.append({"name": name, "n_joints": robot.n_joints, "convention": robot.convention,
                     "description": robot.description, "source": "dynid"})
    for name, entry in example_robots(builtin_robots()):  # listed without loading pinocchio
        rows.append({"name": name, "n_joints": entry.n_joints, "convention": "urdf",
                     "description": entry.description, "source": _EXAMPLE_ROBOT_DATA})
    installed = robots_folder() is not None
    if args.markdown:
        print(_markdown_table(rows))
        return 0
    if args.json:
        print_json({"robots": rows, "example_robot_data": {"installed": installed,
                                                           "install": INSTALL}})
    else:
        width = max([10, *(len(row["name"]) for row in rows)])
        for row in rows:
            marker = f" [{_EXAMPLE_ROBOT_DATA}]" if row["source"] == _EXAMPLE_ROBOT_DATA else ""
            print(f"{row['name']:<{width}} {row['n_joints']} joints  {row['convention']:<4} "
                  f"{row['description']}{marker}")
        if not installed:
            print(f"(UR3/5/10, Kinova, xArm7, ... by name: {INSTALL})")
    return 0


def _markdown_table(rows: list[dict]) -> str:
    """The README's table of the built-in robots: those of ``rows`` (as ``dynid robots
    --json`` lists them) that dynid ships, whatever else is installed."""
    lines = ["| name | joints | convention | description |", "|---|---|---|---|"]
    for row in rows:
        if row["source"] == "dynid":
            description = row["description"].replace("|", "\\|")  # a pipe inside a cell
            lines.append(f"| `{row['name']}` | {row['n_joints']} | "
                         f"{row['convention'].upper()} | {description} |")
    return "\n".join(lines)


def _robot_show(args: argparse.Namespace) -> int:
    from dynid.excitation.limits import excitation_limits
    from dynid.model import robot_base_parameters
    from dynid.robot.inertia import MASS

    robot = loaded_robot(args)
    base = robot_base_parameters(robot, rtol=args.rtol)
    joints = _joint_rows(robot)
    completed = excitation_limits(robot)  # what `dynid excite` fills in
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
        "rotor_inertia": robot.rotor_inertia.tolist(),
        "transmission": {"reductions": robot.transmission.reductions.tolist(),
                         "coupling": robot.transmission.coupling.tolist(),
                         "motors": list(robot.transmission.motor_names)},
        "bounds": _bounds_payload(robot.bounds),
        "excitation_limits": {
            **{key: getattr(completed.robot.limits, key).tolist()
               for key in ("lower", "upper", "velocity", "acceleration")},
            "derived": {key: [robot.joint_names[j] for j in joints_filled]
                        for key, joints_filled in completed.derived.items()}},
        "source": {"citation": robot.source.citation, "url": robot.source.url,
                   "notes": robot.source.notes, "xacro_args": dict(robot.source.xacro_args),
                   "packages": dict(robot.source.packages)},
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
    width = max(10, *(len(row["name"]) + 1 for row in joints))  # long URDF joint names
    print("  " + f"{header[0]:>{width}}" + "".join(f"{h:>10}" for h in header[1:]))
    for row, link in zip(joints, payload["links"], strict=True):
        cells = [row["type"][:3]]
        cells += [f"{row[key]:.4f}" for key in geometry]
        cells += ["-" if row[key] is None else f"{row[key]:.4g}"
                  for key in ("lower", "upper", "velocity", "acceleration", "torque")]
        cells.append(f"{link['mass']:.3f}")
        print("  " + f"{row['name']:>{width}}" + "".join(f"{c:>10}" for c in cells))
    for note in completed.notes():
        print(f"  for `dynid excite`: {note}")
    if robot.rotor_inertia.any():
        print("  rotor inertia (reflected): "
              + ", ".join(f"{v:.4g}" for v in robot.rotor_inertia) + " kg m^2")
    if not robot.transmission.direct:
        print("  transmission (theta = G q; motor: joint x reduction):")
        print("\n".join(robot.transmission.describe(robot.joint_names)))
    _print_bounds(robot)
    if robot.source.citation:
        print(f"  source: {' '.join(robot.source.citation.split())}")
    if robot.convention == "urdf" and robot.source.url:
        print(f"  urdf: {robot.source.url}")
        if robot.source.xacro_args:
            print("    xacro arguments: " + ", ".join(
                f"{name}:={value}" for name, value in robot.source.xacro_args))
    for note in filter(None, robot.source.notes.splitlines()) if robot.convention == "urdf" \
            else []:
        print(f"    {note}")
    return 0


def _bounds_payload(bounds) -> dict | None:
    if bounds is None:
        return None
    return {**bounds.to_dict(), "derived": bounds.derived,
            "basis": [link.basis for link in bounds.links]}


def _print_bounds(robot) -> None:
    """The parameter bounds, labelled "derived" (from the description) or "as written"."""
    bounds = robot.bounds
    if bounds is None:
        print("  bounds: none (the constrained methods and retrieval need them: a robot file's "
              "`bounds:` or --bounds FILE)")
        return
    label = "derived" if bounds.derived else "as written"
    total = (f", total mass {bounds.total_mass[0]:.3f}-{bounds.total_mass[1]:.3f} kg"
             if bounds.total_mass else "")
    print(f"  bounds ({label}){total}: {' '.join(bounds.source.split())}")
    header = ["link", "mass min", "mass max", "CoM box lower [m]", "CoM box upper [m]"]
    print((f"    {header[0]:<16}{header[1]:>10}{header[2]:>10}  {header[3]:<24}"
           f"{header[4]:<24}" + ("  from" if bounds.derived else "")).rstrip())
    for name, link in zip(robot.link_names, bounds.links, strict=True):
        lower = " ".join(f"{v:+.3f}" for v in link.com_lower)
        upper = " ".join(f"{v:+.3f}" for v in link.com_upper)
        line = (f"    {name[:15]:<16}{link.mass[0]:>10.3f}{link.mass[1]:>10.3f}  {lower:<24}"
                f"{upper:<24}" + (f"  {link.basis}" if bounds.derived else ""))
        print(line.rstrip())


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
