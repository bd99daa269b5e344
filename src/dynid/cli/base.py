"""`dynid base`: a robot's base parameters, numeric or (--symbolic) in its table lengths."""

from __future__ import annotations

import argparse

from dynid.cli._fit_options import friction_options, linear_friction
from dynid.cli._outputs import output_options
from dynid.cli._parsing import print_json, stderr_progress
from dynid.cli._robot_options import ROBOT_HELP, loaded_robot, robot_options, rtol_option


def register(commands: argparse._SubParsersAction) -> None:
    base = commands.add_parser("base", help="base parameters: regroupings of a robot's "
                               "standard parameters")
    base.add_argument("robot", help=ROBOT_HELP)
    base.add_argument("--static", action="store_true",
                      help="of the static [M(q); g(q)] regressor (Gaz eq. 17-20) instead of the "
                           "joint-torque regressor")
    base.add_argument("--method", choices=["rref", "qr"], default="rref",
                      help="how representatives are chosen (default %(default)s, like the "
                           "papers)")
    base.add_argument("--symbolic", action="store_true",
                      help="expressions in the DH/MDH lengths (sympy)")
    rtol_option(base)
    friction_options(base)
    output_options(base, quiet=True)
    robot_options(base)
    base.set_defaults(handler=_base)


def _base(args: argparse.Namespace) -> int:
    import numpy as np

    from dynid.model import joint1_gravity_is_zero, robot_base_parameters
    from dynid.model.base_parameters import structural_factor
    from dynid.robot.inertia import N_LINK_PARAMETERS

    robot = loaded_robot(args)
    kind = "static" if args.static else "torque"
    if args.static and args.friction not in (None, "none"):
        raise ValueError("`--static`: the static regressor has no friction columns (no motion)")
    # friction columns: asked for, or the robot file's when linear; none for a nonlinear model
    if args.static or (args.friction is None and not robot.friction.linear):
        friction = None
    else:
        friction = linear_friction(robot, args)
    if friction is not None and not friction.coefficient_names():
        friction = None
    drop = joint1_gravity_is_zero(robot) if args.static else False
    options = {"friction": friction, "kind": kind, "drop_joint1_gravity": drop}
    factor = structural_factor(robot, **options)
    base = robot_base_parameters(robot, method=args.method, rtol=args.rtol, factor=factor,
                                 **options)
    pi = robot.parameters.ravel()
    if friction is not None:  # the robot file's own values when it is that model, else zeros
        pi = np.concatenate([pi, friction.coefficients])
    values = base.base(pi)
    rows = [{"index": k + 1, "name": name, "expression": text, "value": float(value)}
            for k, (name, text, value) in enumerate(zip(base.base_names, base.expressions(),
                                                         values, strict=True))]
    # the rigid body's count, as `robot show` gives it (from the same states: the factor's
    # leading block); friction columns counted apart
    size = N_LINK_PARAMETERS * robot.n_joints
    rigid = (base if friction is None else
             robot_base_parameters(robot, method=args.method, rtol=args.rtol, kind=kind,
                                   drop_joint1_gravity=drop, factor=factor[:size, :size]))
    payload = {"robot": robot.name, "regressor": kind, "method": base.method, "rank": base.rank,
               "n_parameters": base.n_parameters, "rigid_rank": rigid.rank,
               "n_rigid_parameters": rigid.n_parameters,
               "friction_columns": base.n_parameters - rigid.n_parameters,
               "base_parameters": rows,
               "classification": base.classification()}
    if kind == "static":
        payload["joint1_gravity_dropped"] = drop
    if args.symbolic:
        from dynid.model import symbolic_regrouping

        symbolic = symbolic_regrouping(robot, base, progress=stderr_progress(args), **options)
        for row, text in zip(rows, symbolic.strings(), strict=True):
            row["symbolic"] = text
        payload["lengths"] = symbolic.lengths
        payload["numeric_terms"] = [f"{base.base_names[k]}: {name}"
                                    for k, name in symbolic.numeric_terms]
    if args.json:
        print_json(payload)
        return 0
    classes = base.classification()
    extra = base.n_parameters - rigid.n_parameters
    columns = (f"; with the {extra} {friction.name} friction columns: {base.rank} of "
               f"{base.n_parameters} in all" if extra else "")
    print(f"{robot.name}: {rigid.rank} base parameters of {rigid.n_parameters} rigid-body "
          f"parameters{columns} ({kind} regressor"
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
