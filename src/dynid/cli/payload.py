"""`dynid payload`: a payload on the last link identified, the arm's model frozen (Gilbert
eq. 22, Table 5)."""

from __future__ import annotations

import argparse

from dynid.cli._log_options import prepared, preprocessing_options
from dynid.cli._outputs import output_options
from dynid.cli._parsing import Range, print_json
from dynid.cli._robot_options import (
    ROBOT_HELP,
    description,
    loaded_robot,
    model_or_robot,
    robot_options,
)


def register(commands: argparse._SubParsersAction) -> None:
    payload = commands.add_parser(
        "payload", help="identify a payload on the last link, the arm's model frozen")
    payload.add_argument("robot", help=ROBOT_HELP)
    payload.add_argument("arm", metavar="ARM",
                         help="the arm's model without the payload: a model file from "
                              "`dynid identify`, or a robot file with link parameters")
    payload.add_argument("data", help="a log recorded with the payload (as for `dynid "
                                      "identify`)")
    payload.add_argument("--mass", type=Range(float, 0, 1e4), nargs=2, metavar=("MIN", "MAX"),
                         help="the payload's mass range [kg] (default: no range)")
    preprocessing_options(payload, split=False)
    output_options(payload)
    robot_options(payload)
    payload.set_defaults(handler=_payload)


def _payload(args: argparse.Namespace) -> int:
    """A payload on the last link, the arm's model frozen (Gilbert eq. 22, Table 5)."""
    from dynid.identification import identify_payload

    robot = loaded_robot(args)
    arm = model_or_robot(args.arm, tip=args.tip, **description(args, main=False))
    data = prepared(args, args.data, robot)
    result = identify_payload(robot, arm, data,
                              mass=tuple(args.mass) if args.mass is not None else None)
    if args.json:
        print_json({"robot": robot.name, **result.to_json()})
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
