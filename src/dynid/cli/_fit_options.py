"""What a fit is told: the friction models a command can name (literal, like every choice list
of the parser: `--help` imports nothing heavy) and their columns, motor currents and drive
gains."""

from __future__ import annotations

import argparse

from dynid.cli._log_options import prepared
from dynid.cli._parsing import Range

# The friction models a command can name (literal, like every choice list of the parser:
# `--help` imports nothing heavy). Linear in their parameters: regressor columns.
LINEAR_FRICTION = ("none", "viscous-coulomb", "arctan")


# Nonlinear: fitted by `dynid identify --method nls` or `dynid friction`.
NONLINEAR_FRICTION = ("sigmoid", "stribeck", "lugre")


def nls_friction(robot, given: str | None) -> str:
    """The friction model NLS fits: ``given`` (--friction), else the robot file's when NLS
    fits it, else stribeck — one default for identify and compare."""
    from dynid.identification import NLS_FRICTION_MODELS

    if given is not None:
        return given
    return robot.friction.name if robot.friction.name in NLS_FRICTION_MODELS else "stribeck"


def current_options(parser: argparse.ArgumentParser) -> None:
    """What fixes the scale of motor-current logs (see `scale_from_options`): a payload log with
    its known payload, or known drive gains."""
    parser.add_argument("--payload-log", metavar="LOG",
                        help="currents: a current log with a known payload on the last link; "
                             "fixes the drive gains' scale (with --payload-mass)")
    parser.add_argument("--payload-mass", type=Range(float, high=1e4, above=0), metavar="KG",
                        help="currents: the payload's mass [kg]")
    parser.add_argument("--payload-com", type=Range(float, -100, 100), nargs=3,
                        metavar=("X", "Y", "Z"),
                        help="currents: the payload's CoM in the tool frame [m] (default: "
                             "identified)")
    parser.add_argument("--gain", action="append", metavar="JOINT=K", type=known_gain,
                        help="currents: a known drive gain [N m/A] (joint name or number); "
                             "fixes the scale without a payload log; repeatable")


# a drive gain's size [N m/A] (torque per motor current, gear ratio included), either sign
DRIVE_GAIN_LIMITS = (1e-6, 1e6)


def drive_gain(text: str) -> float:
    """An argparse type: a drive gain [N m/A], nonzero, of either sign, its size within
    ``DRIVE_GAIN_LIMITS``."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number [N m/A], got {text!r}") from None
    low, high = DRIVE_GAIN_LIMITS
    if not low <= abs(value) <= high:  # NaN, inf and 0 fail too
        raise argparse.ArgumentTypeError(
            f"expected a finite nonzero gain [N m/A] (torque per current) of size {low:g} to "
            f"{high:g}, got {text!r}")
    return value


def known_gain(text: str) -> tuple:
    """`--gain JOINT=K`: a joint (name or 1-based number) and its gain [N m/A]."""
    joint, separator, value = text.partition("=")
    if not separator or not joint:
        raise argparse.ArgumentTypeError(f"expected JOINT=K (e.g. 1=0.85 or joint1=0.85), got "
                                         f"{text!r}")
    gain = drive_gain(value)
    from dynid._validation import is_index

    return (int(joint) if is_index(joint) else joint, gain)


def scale_from_options(args: argparse.Namespace, robot, logs) -> dict:
    """For motor-current logs, what fixes their scale (Gautier & Briot 2014): the payload log
    and its known payload, and the known gains, as keywords of the fits; ``{}`` for torque
    logs."""
    from dynid.identification import KnownPayload

    efforts = {log.effort for log in logs}
    if "current" not in efforts:
        if args.payload_log or args.gain or args.payload_mass is not None:
            raise ValueError("`--payload-log`, `--payload-mass` and `--gain` fix the scale of "
                             "motor-current logs; these logs hold torques (a current log says "
                             "so in its columns, or give --effort current)")
        return {}
    if efforts != {"current"}:
        raise ValueError("the logs mix torques and motor currents: give logs of one kind")
    if (args.payload_log is None) != (args.payload_mass is None):
        raise ValueError("`--payload-log` and `--payload-mass` come together: the log with "
                         "the payload, and its known mass")
    if args.payload_com is not None and args.payload_log is None:
        raise ValueError("`--payload-com` describes the payload of `--payload-log`")
    payload_log = payload = None
    if args.payload_log is not None:
        payload_log = prepared(args, args.payload_log, robot)
        if payload_log.effort != "current":
            raise ValueError(f"`--payload-log` {args.payload_log} holds torques; it must log "
                             "motor currents like the other logs")
        payload = KnownPayload(args.payload_mass, args.payload_com)
    if payload is None and not args.gain:
        raise ValueError("motor currents fix the dynamics only up to a scale: from currents "
                         "alone only the ratios of the parameters and drive gains are "
                         "identifiable. Fix the scale with `--payload-log LOG --payload-mass "
                         "KG` (a log with a known payload on the last link) or `--gain "
                         "JOINT=K` (one known drive gain, e.g. from the drive's datasheet)")
    return {"payload_data": payload_log, "payload": payload, "gains": dict(args.gain or [])}


def friction_options(parser: argparse.ArgumentParser, *, nonlinear: bool = False,
                     nls: str = "with --method nls (default there: the robot file's, else "
                                "stribeck)") -> None:
    """--friction, and the arctan shape constants --kv and --delta (see `linear_friction`);
    ``nonlinear``: sigmoid, stribeck and lugre too, for NLS (``nls`` says when and its
    default)."""
    if nonlinear:
        parser.add_argument("--friction", choices=[*LINEAR_FRICTION, *NONLINEAR_FRICTION],
                            help="friction model: linear columns (default: the robot file's "
                                 "model when linear, else viscous-coulomb, as for a URDF); "
                                 f"sigmoid, stribeck and lugre {nls}")
    else:
        parser.add_argument("--friction", choices=LINEAR_FRICTION,
                            help="linear friction columns (default: the robot file's model "
                                 "when linear, else viscous-coulomb, as for a URDF)")
    parser.add_argument("--kv", type=Range(float, high=1e6, above=0),
                        help="arctan: sign-shape constant k_v [s/rad] (default: the robot "
                             "file's arctan value, else dynid.friction.DEFAULT_ARCTAN_K_V)")
    parser.add_argument("--delta", type=Range(float, 0, 1e6),
                        help="arctan: Stribeck-shape constant [s/rad] (default: the robot "
                             "file's arctan value, else dynid.friction.DEFAULT_ARCTAN_DELTA)")


def linear_friction(robot, args: argparse.Namespace):
    """The linear friction columns asked for: --friction, else the robot file's, else
    viscous + Coulomb + offset."""
    from dynid.friction import (
        DEFAULT_ARCTAN_DELTA,
        DEFAULT_ARCTAN_K_V,
        Arctan,
        NoFriction,
        ViscousCoulomb,
    )
    from dynid.model import default_friction

    n = robot.n_joints
    if (args.kv is not None or args.delta is not None) and args.friction != "arctan":
        raise ValueError("`--kv` and `--delta` shape the arctan model: add `--friction arctan`")
    if args.friction in NONLINEAR_FRICTION:
        raise ValueError(f"`--friction {args.friction}` is not linear in its parameters: fit "
                         "it with `dynid identify --method nls` (jointly with the links) or "
                         "`dynid friction` (on the residuals)")
    if args.friction is None:
        return default_friction(robot)
    if args.friction == "none":
        return NoFriction(n)
    if args.friction == "viscous-coulomb":
        return ViscousCoulomb.zeros(n)
    own = robot.friction if isinstance(robot.friction, Arctan) else None
    k_v = args.kv if args.kv is not None else (own.k_v if own else DEFAULT_ARCTAN_K_V)
    delta = args.delta if args.delta is not None else (own.delta if own else DEFAULT_ARCTAN_DELTA)
    return Arctan.template(n, k_v=k_v, delta=delta)
