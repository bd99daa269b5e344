"""`dynid excite`: an exciting Fourier trajectory, optimised for the conditioning of the base
regressor."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from dynid.cli._outputs import output_options
from dynid.cli._parsing import SEED, Range, check_samples, print_json, stderr_progress
from dynid.cli._robot_options import ROBOT_HELP, loaded_robot, robot_options

# dynid.excitation.CRITERIA (literal: `--help` imports nothing heavy)
CRITERIA = ("cond", "fro", "logdet", "sigma-min")
# grid points of the criterion: the base regressor on the grid is held in memory (~4 kB per
# point for 7 joints)
MAX_GRID = 50_000


def register(commands: argparse._SubParsersAction) -> None:
    excite = commands.add_parser("excite", help="design an exciting Fourier trajectory")
    excite.add_argument("robot", help=ROBOT_HELP)
    excite.add_argument("-o", "--output", required=True, metavar="TRAJ.csv",
                        help="time series t, q, dq, ddq (parameters beside it, .yaml)")
    excite.add_argument("--criterion", choices=CRITERIA, default="cond",
                        help="what to minimise (default %(default)s)")
    excite.add_argument("--harmonics", type=Range(int, 1, 50), default=10, metavar="L",
                        help="Fourier harmonics per joint (default %(default)s)")
    excite.add_argument("--period", type=Range(float, high=3600, above=0),
                        default=20.0, metavar="T",
                        help="seconds (omega_f = 2 pi / T; default %(default)g)")
    excite.add_argument("--rate", type=Range(float, high=100_000, above=0),
                        default=1000.0, metavar="HZ",
                        help="sample rate of the written time series (default %(default)g)")
    excite.add_argument("--grid-rate", type=Range(float, high=10_000, above=0),
                        default=100.0, metavar="HZ",
                        help="evaluation grid of the criterion (default %(default)g)")
    excite.add_argument("--acceleration-limit", type=Range(float, high=1e4, above=0), nargs="+",
                        metavar="RAD_S2",
                        help="joint acceleration limits [rad/s^2], one value or one per joint, "
                             "in place of the robot's (default: the robot's; where it has none, "
                             "as a URDF, derived from its effort limits and inertia: "
                             "dynid.excitation.limits, printed)")
    excite.add_argument("--continuous-range", type=Range(float, high=100.0, above=0),
                        default=math.pi, metavar="RAD",
                        help="a joint without position limits (continuous) moves within "
                             "[-RAD, RAD] around zero (default %(default).6g: pi)")
    excite.add_argument("--rest", action=argparse.BooleanOptionalAction, default=True,
                        help="zero velocity and acceleration at t = 0 and at the end, ready to "
                             "send to a robot (default; the .yaml says where the arm must be "
                             "before it starts); --no-rest: starts and ends at speed, for "
                             "simulation only (at_rest: false)")
    excite.add_argument("--starts", type=Range(int, 1, 1000), default=2,
                        help="random starts (default %(default)s)")
    excite.add_argument("--iterations", type=Range(int, 0, 100_000), default=45,
                        help="L-BFGS iterations of the final refinement (default %(default)s)")
    excite.add_argument("--seed", type=SEED, default=0,
                        help="random seed (default %(default)s)")
    output_options(excite, quiet=True)
    robot_options(excite)
    excite.set_defaults(handler=_excite, output_suffixes={"-o": (".csv",)},
                        derived_outputs=_beside)


def _beside(args: argparse.Namespace) -> dict[str, Path]:
    """The trajectory's parameters, written beside the CSV."""
    return {"-o (its .yaml)": Path(args.output).with_suffix(".yaml")}


def _with_acceleration_limits(robot, values: list[float]):
    """``robot`` with the acceleration limits of `--acceleration-limit`."""
    import dataclasses

    import numpy as np

    if len(values) not in (1, robot.n_joints):
        raise ValueError(f"`--acceleration-limit` needs one value or {robot.n_joints} (one per "
                         f"joint), got {len(values)}")
    limits = np.broadcast_to(np.asarray(values, dtype=float), (robot.n_joints,))
    return dataclasses.replace(robot, limits=dataclasses.replace(robot.limits,
                                                                 acceleration=limits.copy()))


def _excite(args: argparse.Namespace) -> int:
    from dynid.excitation import optimize_excitation, save_trajectory

    check_samples(args.period, args.rate, "`--period` and `--rate`")
    if args.rest and args.harmonics < 2:
        raise ValueError("`--harmonics 1` at rest is no motion: give 2 or more, or `--no-rest`")
    if args.period * args.grid_rate > MAX_GRID:
        raise ValueError(f"`--period` and `--grid-rate`: {args.period:g} s at "
                         f"{args.grid_rate:g} Hz is {args.period * args.grid_rate:.3g} grid "
                         f"points, more than {MAX_GRID:,} (the regressor on the grid is held "
                         "in memory); lower the grid rate")
    robot = loaded_robot(args)
    if args.acceleration_limit is not None:
        robot = _with_acceleration_limits(robot, args.acceleration_limit)
    result = optimize_excitation(
        robot, criterion=args.criterion, harmonics=args.harmonics, period=args.period,
        rate=args.grid_rate, rest=args.rest, seed=args.seed, starts=args.starts,
        max_iterations=args.iterations, continuous_range=args.continuous_range,
        progress=stderr_progress(args))
    save_trajectory(args.output, result.trajectory, duration=args.period, rate=args.rate,
                    extra={"criterion": result.criterion, "value": result.value,
                           "condition_number": result.condition_number,
                           # what the trajectory keeps to, derived ones included
                           "acceleration_limits": result.limits.acceleration.tolist(),
                           **({"derived_limits": result.derived_limits}
                              if result.derived_limits else {}),
                           # a derived limit that cripples a joint (warned on stderr too)
                           **({"under_excited": [entry["message"]
                                                 for entry in result.under_excited]}
                              if result.under_excited else {})},
                    allow_moving_ends=not args.rest)
    start = result.trajectory.sample([0.0])[0][0]
    payload = {**result.to_json(), "output": args.output,
               "parameters": str(Path(args.output).with_suffix(".yaml")),
               "at_rest": args.rest, "start_q": start}
    if args.json:
        print_json(payload)
        return 0
    print(f"{robot.name}: {result.criterion} {result.start_value:.4g} (best random start) -> "
          f"{result.value:.4g}; condition number {result.condition_number:.3g}; closest to a "
          f"position limit {result.max_abs_q_margin:.3g} rad; {result.seconds:.1f} s")
    for note in result.derived_limits:
        print(f"  {note}")
    print(f"  time series written to {args.output}, parameters to {payload['parameters']}")
    if args.rest:
        print("  starts and ends at rest; move the arm to q = ["
              + ", ".join(f"{v:.4f}" for v in start) + "] rad first")
    else:
        print("  --no-rest: starts and ends at speed (at_rest: false), for simulation only")
    return 0
