"""`dynid export`: an identified model (or a robot file) as URDF, MuJoCo MJCF or a dynid robot
file."""

from __future__ import annotations

import argparse
from pathlib import Path

from dynid.cli._outputs import output_options
from dynid.cli._parsing import print_json
from dynid.cli._robot_options import description, description_options, model_or_robot


def register(commands: argparse._SubParsersAction) -> None:
    export = commands.add_parser(
        "export", help="an identified model as URDF, MuJoCo MJCF or a dynid robot file")
    export.add_argument("source", metavar="MODEL",
                        help="a model file with full link parameters (cls3, nls, ...), a "
                             "robot file (e.g. from `dynid retrieve`), a URDF or a robot name "
                             "(a URDF to .yaml: a robot file that points at the URDF, with "
                             "its derived bounds written out to edit)")
    export.add_argument("-o", "--output", required=True, metavar="FILE",
                        help=".urdf, .xml (MJCF) or .yaml (dynid robot file)")
    export.add_argument("--name", help="the exported robot's name (default: the model's)")
    export.add_argument("--tip", metavar="LINK",
                        help="a URDF robot's tip link (where its arm ends; a URDF with a "
                             "gripper needs one)")
    description_options(export)
    output_options(export)
    export.set_defaults(handler=_export, output_suffixes={
        "-o": (".urdf", ".xml", ".mjcf", ".yaml", ".yml")})


def _export(args: argparse.Namespace) -> int:
    """A model's (or a robot file's) robot as URDF, MJCF or a dynid robot file."""
    import dataclasses

    from dynid.export import check_names, export_robot, identified_robot
    from dynid.model import LinearModel
    from dynid.robot import save_robot

    source = model_or_robot(args.source, tip=args.tip, **description(args))
    robot = identified_robot(source) if isinstance(source, LinearModel) else source
    if args.name is not None:
        if not args.name.strip():
            raise ValueError("`--name` is empty: give the exported robot's name, or leave "
                             "the option out to keep the model's")
        robot = dataclasses.replace(robot, name=args.name)
    check_names(robot)  # before anything is written: what would not load back
    suffix = Path(args.output).suffix.lower()
    if suffix in (".yaml", ".yml"):
        save_robot(robot, args.output)
    else:
        export_robot(robot, args.output)
    if args.json:
        print_json({"robot": robot.name, "output": args.output,
                    "total_mass": robot.total_mass})
        return 0
    print(f"{robot.name}: written to {args.output} ({robot.n_joints} joints, total mass "
          f"{robot.total_mass:.3f} kg, friction {robot.friction.name})")
    return 0
