"""`dynid simulate`: the digital twin logs a trajectory, open loop or closed loop."""

from __future__ import annotations

import argparse

from dynid.cli._controller import control_law, controller_options
from dynid.cli._fit_options import drive_gain
from dynid.cli._outputs import output_options
from dynid.cli._parsing import (
    SEED,
    Range,
    check_samples,
    options_named,
    print_json,
    stderr_progress,
)
from dynid.cli._robot_options import contacts_from, loaded_robot, robot_options

# the library keywords of the closed loop and their options here
LOOP_KEYWORDS = {"rate": "--rate", "substeps": "--substeps", "controller": "--controller",
                 "natural_frequency": "--natural-frequency", "stiffness": "--stiffness",
                 "damping": "--damping", "duration": "--duration", "contacts": "--contact"}

def register(commands: argparse._SubParsersAction) -> None:
    simulate = commands.add_parser("simulate", help="the digital twin: log a trajectory")
    simulate.add_argument("robot", help="built-in robot name, or a .yaml / .urdf file (truth)")
    simulate.add_argument("trajectory", help="trajectory file: CSV (t, q, dq, ddq) or the "
                                             "YAML parameters written by `dynid excite`")
    simulate.add_argument("-o", "--output", required=True, metavar="DATA",
                          help="dataset to write (.csv or .npz)")
    simulate.add_argument("--duration", type=Range(float, high=86_400, above=0),
                          help="seconds (default: the trajectory's)")
    simulate.add_argument("--rate", type=Range(float, high=100_000, above=0), default=1000.0,
                          help="Hz (default %(default)g)")
    simulate.add_argument("--closed-loop", action="store_true",
                          help="closed-loop tracking, computed torque or joint impedance, "
                               "integrated by RK4 (default: open loop)")
    controller_options(simulate, "closed loop")
    simulate.add_argument("--substeps", type=Range(int, 1, 10_000), metavar="N",
                          help="closed loop: RK4 steps per control period (default: the fewest "
                               "the robot's fastest dynamics allow, h |lambda| <= 0.5)")
    simulate.add_argument("--noise", type=Range(float, 0, 1e3), nargs="+", metavar="SIGMA",
                          help="torque noise std [N m], one value or one per joint (default: "
                               "none)")
    simulate.add_argument("--bias", type=Range(float, -1e3, 1e3), nargs="+",
                          help="torque bias [N m], one value or one per joint (default: none)")
    simulate.add_argument("--position-resolution", type=Range(float, 0, 1),
                          default=0.0, metavar="RAD",
                          help="encoder quantisation step (default %(default)g: none)")
    simulate.add_argument("--velocity-from-positions", action="store_true",
                          help="log velocities as differences of the logged positions")
    simulate.add_argument("--jitter", type=Range(float, 0, 1), default=0.0, metavar="S",
                          help="time-stamp jitter std (default %(default)g)")
    simulate.add_argument("--drop", type=Range(float, 0, 0.99), default=0.0, metavar="P",
                          help="probability of losing each sample (default %(default)g)")
    simulate.add_argument("--drive-gains", type=drive_gain, nargs="+", metavar="K",
                          help="log motor currents i = tau / K [A] instead of torques: the "
                               "drive gains K [N m/A] (torque per current; nonzero, a sign "
                               "allowed), one value for every joint or one per joint; --noise "
                               "and --bias stay in N m. The log's columns are current1..n, "
                               "which `dynid identify` reads as currents")
    simulate.add_argument("--payload-mass", type=Range(float, high=1000, above=0), metavar="KG",
                          help="a known payload rigidly on the last link (the payload log of "
                               "drive gains from currents, as `dynid identify --payload-log "
                               "LOG --payload-mass KG` reads it): its mass [kg]; its inertia a "
                               "uniform solid sphere of radius 5 cm about its centre of mass")
    simulate.add_argument("--payload-com", type=Range(float, -100, 100), nargs=3,
                          metavar=("X", "Y", "Z"),
                          help="the payload's centre of mass in the tool frame [m] (default: "
                               "the tool point)")
    simulate.add_argument(
        "--contact", action="append", metavar="SPEC",
        help="an external force on the arm, repeatable: START[+DURATION]:FX,FY,FZ[,MX,MY,MZ]"
             "[:LINK][@PX,PY,PZ]; times in s (or 50ms), the force [N] (moment [N m]) in the "
             "base frame, LINK a link name or number (default the last), the point [m] in the "
             "link's frame (default the tool point); without +DURATION it lasts to the end. "
             "E.g. 1.0+50ms:0,0,-10 (a 10 N pulse at the tool), 3:5,0,0:4 (a push on link 4 "
             "from 3 s on)")
    simulate.add_argument("--seed", type=SEED, default=0,
                          help="random seed of the sensor model (default %(default)s)")
    output_options(simulate, quiet=True)
    robot_options(simulate)
    simulate.set_defaults(handler=_simulate, output_suffixes={"-o": (".csv", ".npz")})


def _simulate(args: argparse.Namespace) -> int:
    from dynid.data import write_dataset
    from dynid.excitation import FourierTrajectory, load_trajectory
    from dynid.simulate import SensorModel, simulate_closed_loop, simulate_open_loop
    from dynid.simulate.twin import with_payload

    robot = loaded_robot(args)
    if args.drive_gains is not None and len(args.drive_gains) not in (1, robot.n_joints):
        raise ValueError(f"`--drive-gains` takes one value for every joint or one per joint "
                         f"({robot.n_joints} for {robot.name!r}), got {len(args.drive_gains)}")
    if args.payload_com is not None and args.payload_mass is None:
        raise ValueError("`--payload-com` places the payload of `--payload-mass KG`")
    payload = None if args.payload_mass is None else (
        args.payload_mass, None if args.payload_com is None else tuple(args.payload_com))
    if payload is not None:
        robot = with_payload(robot, *payload)
    contacts = contacts_from(args.contact or [], robot)
    trajectory = load_trajectory(args.trajectory)
    duration = args.duration
    if duration is None:
        own = getattr(trajectory, "duration", None)  # sampled and ramped trajectories
        if own is None and isinstance(trajectory, FourierTrajectory):
            own = trajectory.period
        if own is None:
            raise ValueError("`--duration` is needed for this trajectory family")
        duration = own
    check_samples(duration, args.rate, "`--duration` and `--rate`")
    if args.jitter >= 0.5 / args.rate:
        raise ValueError(f"`--jitter` must be below half the sample period ({0.5 / args.rate:g} "
                         f"s at {args.rate:g} Hz), got {args.jitter:g}: time stamps would "
                         "swap order")

    def per_joint(values, absent=0.0):  # one value for every joint, or one per joint
        return absent if values is None else (values[0] if len(values) == 1 else values)

    sensor = SensorModel(
        torque_noise_std=per_joint(args.noise), torque_bias=per_joint(args.bias),
        position_resolution=args.position_resolution,
        velocity_from_positions=args.velocity_from_positions, jitter_std=args.jitter,
        drop_probability=args.drop, drive_gains=per_joint(args.drive_gains, None))
    loop_options = {"--natural-frequency": args.natural_frequency,
                    "--stiffness": args.stiffness, "--damping": args.damping,
                    "--controller": args.controller, "--substeps": args.substeps}
    if args.closed_loop:
        law = control_law(args, robot, rate=args.rate, resolution=args.position_resolution,
                          velocity_from_positions=args.velocity_from_positions,
                          substeps=args.substeps)
        with options_named(LOOP_KEYWORDS):
            data = simulate_closed_loop(robot, trajectory, duration=duration, controller=law,
                                        sensor=sensor, seed=args.seed,
                                        progress=stderr_progress(args), contacts=contacts)
    elif any(value is not None for value in loop_options.values()):
        used = [flag for flag, value in loop_options.items() if value is not None]
        raise ValueError(f"`{'`, `'.join(used)}` need --closed-loop")
    else:
        data = simulate_open_loop(robot, trajectory, duration=duration, rate=args.rate,
                                  sensor=sensor, seed=args.seed, contacts=contacts)
    write_dataset(args.output, data)
    summary = {"robot": robot.name, "n_samples": data.n_samples, "duration_s": data.duration,
               "closed_loop": args.closed_loop, "output": args.output,
               "contacts": data.metadata.get("contacts", []), "effort": data.effort,
               "drive_gains": data.metadata["sensor"].get("drive_gains"),
               "payload": None if payload is None else
               {"mass": payload[0], "com_tool": None if payload[1] is None else list(payload[1]),
                "inertia": "uniform solid sphere, radius 0.05 m"},
               **({"control_law": data.metadata["source"],
                   "controller": data.metadata["controller"],
                   "rk4_substeps": data.metadata["rk4_substeps"],
                   "tracking_rms": data.metadata["tracking_rms"]} if args.closed_loop else {})}
    if args.json:
        print_json(summary)
    else:
        loop = "closed loop" if args.closed_loop else "open loop"
        effort = ("motor currents [A], drive gains "
                  + " ".join(f"{k:g}" for k in data.metadata["sensor"]["drive_gains"])
                  + " N m/A" if data.effort == "current" else "joint torques [N m]")
        print(f"{robot.name}: {data.n_samples} samples over {data.duration:.3f} s ({loop}, "
              f"{effort}) written to {args.output}")
        if payload is not None:
            mass, com = payload
            print(f"  payload on the last link: {mass:g} kg, centre of mass "
                  + ("at the tool point" if com is None else
                     "(" + ", ".join(f"{c:g}" for c in com) + ") m in the tool frame"))
        if args.closed_loop:
            print(f"  RK4 steps per control period: {data.metadata['rk4_substeps']}")
            print("  tracking RMS per joint [rad]: "
                  + " ".join(f"{v:.3g}" for v in data.metadata["tracking_rms"]))
        for contact in data.metadata.get("contacts", []):
            print(f"  contact on {contact['link_name']} from {contact['start']:g} s to "
                  f"{contact['stop']:g} s, force {contact['force']} N")
    return 0
