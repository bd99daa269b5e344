"""The control law a closed loop ran, from the command line: one set of options and one builder
for `dynid simulate --closed-loop` (the loop to run) and `dynid identify --method iv, didim,
pc-didim, cloe, clie` (the loop that recorded the logs)."""

from __future__ import annotations

import argparse

from dynid.cli._parsing import Range
from dynid.cli._robot_options import loaded_robot

# a computed-torque controller's default natural frequency [rad/s]
NATURAL_FREQUENCY = 20.0
# the options, by argparse destination
CONTROLLER_OPTIONS = {"natural_frequency": "--natural-frequency", "stiffness": "--stiffness",
                      "damping": "--damping", "controller": "--controller"}


def controller_options(parser: argparse.ArgumentParser, who: str) -> None:
    """--natural-frequency, --stiffness, --damping and --controller; ``who``: which methods
    or mode they are for (the help's prefix)."""
    parser.add_argument("--natural-frequency", type=Range(float, high=10_000, above=0),
                        nargs="+", metavar="W",
                        help=f"{who}: a computed-torque controller, Kp = W^2, Kd = 2 W "
                             f"[rad/s], one value or one per joint (default "
                             f"{NATURAL_FREQUENCY:g})")
    parser.add_argument("--stiffness", type=Range(float, 0, 1e9), nargs="+", metavar="K",
                        help=f"{who}: a joint impedance instead, K [N m/rad], one value or one "
                             "per joint (with --damping)")
    parser.add_argument("--damping", type=Range(float, 0, 1e9), nargs="+", metavar="D",
                        help=f"{who}: the joint impedance's D [N m s/rad]")
    parser.add_argument("--controller", metavar="ROBOT|none",
                        help=f"{who}: the model inside the controller (default: the robot's; "
                             "none: a pure PD impedance, no model)")


def control_law(args: argparse.Namespace, robot, *, rate: float, resolution: float = 0.0,
                velocity_from_positions: bool = False, substeps: int | None = None):
    """The ``Controller`` the options describe for ``robot``: computed torque at
    --natural-frequency (default ``NATURAL_FREQUENCY``), or a joint impedance from --stiffness
    and --damping, on the model --controller names (default ``robot``; none: no model), at
    ``rate`` Hz with the encoders ``resolution`` and ``velocity_from_positions``."""
    from dynid.simulate import Controller

    n = robot.n_joints
    for dest in ("natural_frequency", "stiffness", "damping"):
        values = getattr(args, dest)
        if values is not None and len(values) not in (1, n):
            raise ValueError(f"`{CONTROLLER_OPTIONS[dest]}` takes one value or one per joint "
                             f"({n} for {robot.name!r}), got {len(values)}")
    if args.controller is None:
        model = robot
    elif args.controller.lower() == "none":
        model = None
    else:
        model = loaded_robot(args, args.controller, "--controller")
        if model.n_joints != n:
            raise ValueError(f"`--controller`: {args.controller!r} has {model.n_joints} "
                             f"joints, the robot {n}")

    def per_joint(values):
        return None if values is None else (values[0] if len(values) == 1 else values)

    encoders = {"rate": rate, "substeps": substeps, "resolution": resolution,
                "velocity_from_positions": bool(velocity_from_positions)}
    if args.stiffness is not None or args.damping is not None:
        if args.stiffness is None or args.damping is None:
            raise ValueError("a joint impedance needs both `--stiffness` and `--damping`")
        if args.natural_frequency is not None:
            raise ValueError("`--natural-frequency` sets a computed-torque controller; "
                             "`--stiffness` and `--damping` a joint impedance: give one")
        return Controller.impedance(per_joint(args.stiffness), per_joint(args.damping),
                                    model=model, **encoders)
    if model is None:
        raise ValueError("`--controller none` is a pure PD impedance: give `--stiffness` and "
                         "`--damping`")
    return Controller.computed_torque(
        model, per_joint(args.natural_frequency) or NATURAL_FREQUENCY, **encoders)
