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

# the largest --perturb, as a fraction (dynid.simulate.truth.MAX_PERTURBATION; not imported:
# building the parser imports no library module)
MAX_PERTURBATION = 0.9

# the library keywords of the closed loop and their options here
LOOP_KEYWORDS = {"rate": "--rate", "substeps": "--substeps", "controller": "--controller",
                 "natural_frequency": "--natural-frequency", "stiffness": "--stiffness",
                 "damping": "--damping", "duration": "--duration", "contacts": "--contact"}
# the library keywords of the twin's truth and sensor and their options here
TRUTH_KEYWORDS = {"relative": "--perturb", "rotor_inertia": "--rotor-inertia",
                  "viscous": "--viscous", "coulomb": "--coulomb", "torque_delay": "--delay"}

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
    truth = simulate.add_argument_group(
        "a truth that differs from the robot file (the twin of a real arm; the truth is "
        "written beside the log, DATA.truth.yaml)")
    truth.add_argument("--perturb", type=Range(float, 0, 100 * MAX_PERTURBATION),
                       metavar="PCT",
                       help="move every link's mass, centre of mass and inertia by a random "
                            "relative amount up to PCT %%, each link kept a physical body "
                            "(drawn from --truth-seed; default: the robot file's values). "
                            "The closed loop's controller keeps the robot file's model")
    truth.add_argument("--truth-seed", type=SEED, default=0, metavar="N",
                       help="random seed of --perturb (default %(default)s): logs with other "
                            "--seed values share the truth")
    truth.add_argument("--rotor-inertia", type=Range(float, 0, 1e3), nargs="+",
                       metavar="KG_M2",
                       help="the drives' reflected rotor inertia [kg m^2] (MuJoCo's armature), "
                            "one value for every joint or one per joint (default: the robot "
                            "file's); the closed loop's controller knows them")
    truth.add_argument("--viscous", type=Range(float, 0, 1e4), nargs="+", metavar="FV",
                       help="viscous friction [N m s/rad], one value or one per joint: the "
                            "truth's friction becomes viscous-Coulomb (with --coulomb; the "
                            "other terms the robot file's viscous-Coulomb ones, else zero)")
    truth.add_argument("--coulomb", type=Range(float, 0, 1e4), nargs="+", metavar="FC",
                       help="dry (Coulomb) friction [N m], one value or one per joint (see "
                            "--viscous)")
    truth.add_argument("--delay", type=Range(float, 0, 10_000), default=0.0, metavar="MS",
                       help="the torque channel lags the positions by MS milliseconds: the "
                            "torque logged at t is the one applied at t - MS (the log starts "
                            "MS late; default %(default)g)")
    truth.add_argument("--engine", choices=("dynid", "mujoco"), default="dynid",
                       help="what simulates the truth: dynid's own dynamics (default), or "
                            "MuJoCo (needs the mujoco package, dynid[mujoco]): the truth "
                            "exported to MJCF (rotor inertia as armature, --viscous as damping, "
                            "--coulomb as frictionloss, MuJoCo's soft dry friction) and tracked "
                            "by computed torque on MuJoCo's own model at --rate, gains from "
                            "--natural-frequency, reading the exact state (the sensor options "
                            "shape the log only); the friction MuJoCo applied is measured into "
                            "the truth file")
    truth.add_argument("--no-velocity", action="store_true",
                       help="write the log without velocity columns (drives that log "
                            "positions only)")
    output_options(simulate, quiet=True)
    robot_options(simulate)
    simulate.set_defaults(handler=_simulate, output_suffixes={"-o": (".csv", ".npz")},
                          derived_outputs=_beside)


def _beside(args: argparse.Namespace) -> dict:
    """The twin's truth, written beside the log."""
    from dynid.simulate.truth import truth_path

    return {"-o (its .truth.yaml)": truth_path(args.output)}


def _simulate(args: argparse.Namespace) -> int:
    from dynid.excitation import FourierTrajectory, load_trajectory
    from dynid.simulate import SensorModel, simulate_closed_loop, simulate_open_loop
    from dynid.simulate.truth import twin_truth
    from dynid.simulate.twin import with_payload

    description = loaded_robot(args)
    with options_named(TRUTH_KEYWORDS):
        robot = twin_truth(description, perturb=(args.perturb or 0.0) / 100,
                           rotor_inertia=args.rotor_inertia, viscous=args.viscous,
                           coulomb=args.coulomb, seed=args.truth_seed)
    if args.drive_gains is not None and len(args.drive_gains) not in (1, robot.n_joints):
        raise ValueError(f"`--drive-gains` takes one value for every joint or one per joint "
                         f"({robot.n_joints} for {robot.name!r}), got {len(args.drive_gains)}")
    if args.payload_com is not None and args.payload_mass is None:
        raise ValueError("`--payload-com` places the payload of `--payload-mass KG`")
    payload = None if args.payload_mass is None else (
        args.payload_mass, None if args.payload_com is None else tuple(args.payload_com))
    if payload is not None:
        robot = with_payload(robot, *payload)
        description = with_payload(description, *payload)
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
        drop_probability=args.drop, drive_gains=per_joint(args.drive_gains, None),
        torque_delay=args.delay / 1000)
    loop_options = {"--natural-frequency": args.natural_frequency,
                    "--stiffness": args.stiffness, "--damping": args.damping,
                    "--controller": args.controller, "--substeps": args.substeps}
    if args.engine == "mujoco":
        data = _mujoco_run(args, robot, trajectory, duration, sensor, loop_options)
    elif args.closed_loop:
        # the controller's model (default) is the robot file, not the truth: what a user's
        # controller knows; with the drives' rotor inertias, which its vendor knows (without
        # them a light wrist's gains would be the link's, 10-100 times too low)
        known = (description if args.rotor_inertia is None else
                 description.with_rotor_inertia(robot.rotor_inertia))
        law = control_law(args, known, rate=args.rate, resolution=args.position_resolution,
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
    if args.no_velocity and data.ddq is not None:  # nor accelerations: positions and torques
        import dataclasses

        data = dataclasses.replace(data, ddq=None)
    truth_file = _write(args, data, description, robot)
    summary = {"robot": robot.name, "n_samples": data.n_samples, "duration_s": data.duration,
               "closed_loop": args.closed_loop, "engine": args.engine, "output": args.output,
               "contacts": data.metadata.get("contacts", []), "effort": data.effort,
               "drive_gains": data.metadata["sensor"].get("drive_gains"),
               "truth": str(truth_file), "differs_from_robot_file": _differs(args),
               "payload": None if payload is None else
               {"mass": payload[0], "com_tool": None if payload[1] is None else list(payload[1]),
                "inertia": "uniform solid sphere, radius 0.05 m"},
               **({"control_law": data.metadata["source"],
                   "controller": data.metadata["controller"],
                   "rk4_substeps": data.metadata["rk4_substeps"],
                   "tracking_rms": data.metadata["tracking_rms"]} if args.closed_loop else {}),
               **({"control_law": data.metadata["source"],
                   "tracking_rms": data.metadata["tracking_rms"],
                   "mujoco_friction": data.metadata["mujoco_friction"]}
                  if args.engine == "mujoco" else {})}
    if args.json:
        print_json(summary)
    else:
        loop = ("MuJoCo, computed torque" if args.engine == "mujoco" else
                "closed loop" if args.closed_loop else "open loop")
        effort = ("motor currents [A], drive gains "
                  + " ".join(f"{k:g}" for k in data.metadata["sensor"]["drive_gains"])
                  + " N m/A" if data.effort == "current" else "joint torques [N m]")
        print(f"{robot.name}: {data.n_samples} samples over {data.duration:.3f} s ({loop}, "
              f"{effort}) written to {args.output}")
        if _differs(args):
            print(f"  truth ({', '.join(_differs(args))}) written to {truth_file}")
        if payload is not None:
            mass, com = payload
            print(f"  payload on the last link: {mass:g} kg, centre of mass "
                  + ("at the tool point" if com is None else
                     "(" + ", ".join(f"{c:g}" for c in com) + ") m in the tool frame"))
        if args.closed_loop:
            print(f"  RK4 steps per control period: {data.metadata['rk4_substeps']}")
        if args.closed_loop or args.engine == "mujoco":
            print("  tracking RMS per joint [rad]: "
                  + " ".join(f"{v:.3g}" for v in data.metadata["tracking_rms"]))
        for contact in data.metadata.get("contacts", []):
            print(f"  contact on {contact['link_name']} from {contact['start']:g} s to "
                  f"{contact['stop']:g} s, force {contact['force']} N")
    return 0


def _differs(args: argparse.Namespace) -> list[str]:
    """The options that make the truth (or its log) differ from the robot file's twin."""
    given = {"--perturb": bool(args.perturb), "--rotor-inertia": args.rotor_inertia is not None,
             "--viscous": args.viscous is not None, "--coulomb": args.coulomb is not None,
             "--delay": args.delay > 0, "--no-velocity": args.no_velocity}
    return [option for option, on in given.items() if on]


def _write(args: argparse.Namespace, data, description, truth):
    """The log and its truth (``DATA.truth.yaml``), written together; the truth's path."""
    from pathlib import Path

    from dynid._files import atomic_write_all
    from dynid._reading import dump_yaml
    from dynid.data import write_dataset
    from dynid.simulate.truth import truth_path, truth_to_dict

    path = truth_path(args.output)
    log = {"file": Path(args.output).name, "engine": args.engine, "seed": args.seed,
           "torque_delay_s": args.delay / 1000, "velocities": not args.no_velocity,
           "closed_loop": args.closed_loop, "sensor": data.metadata["sensor"],
           **({"mujoco_friction": data.metadata["mujoco_friction"]}
              if "mujoco_friction" in data.metadata else {})}
    perturbation = ({"percent": args.perturb, "seed": args.truth_seed} if args.perturb
                    else None)
    spec = truth_to_dict(truth, description=description, log=log, perturbation=perturbation,
                         folder=path.parent)
    text = dump_yaml(spec, sort_keys=False, default_flow_style=None)
    atomic_write_all([
        (args.output, lambda tmp: write_dataset(tmp, data, velocities=not args.no_velocity)),
        (path, lambda tmp: tmp.write_text(text, encoding="utf-8"))])
    return path


# what a MuJoCo run does not take: its loop is its own (computed torque on MuJoCo's model)
_NOT_IN_MUJOCO = {"--closed-loop": "closed_loop", "--stiffness": "stiffness",
                  "--damping": "damping", "--controller": "controller",
                  "--substeps": "substeps", "--contact": "contact"}


def _mujoco_run(args: argparse.Namespace, truth, trajectory, duration: float, sensor,
                loop_options: dict):
    """The log of ``truth`` simulated by MuJoCo (``dynid.simulate.mujoco_twin``)."""
    from dynid.export.writers import to_mjcf
    from dynid.friction.models import NoFriction, ViscousCoulomb
    from dynid.simulate.mujoco_twin import simulate_mujoco

    given = [flag for flag, dest in _NOT_IN_MUJOCO.items() if getattr(args, dest)]
    if given:
        raise ValueError(f"`--engine mujoco` runs its own loop (computed torque on MuJoCo's "
                         f"model, --natural-frequency its gains): `{'`, `'.join(given)}` "
                         f"{'is' if len(given) == 1 else 'are'} for --engine dynid")
    friction = truth.friction
    exact = isinstance(friction, NoFriction) or (isinstance(friction, ViscousCoulomb)
                                                 and not friction.fo.any())
    if not exact:
        kind = friction.name + (" with offsets fo" if isinstance(friction, ViscousCoulomb)
                                else "")
        raise ValueError(f"`--engine mujoco`: MuJoCo's joints have viscous (damping) and dry "
                         f"(frictionloss) friction only; {truth.name!r}'s friction is {kind}: "
                         "give the truth's with --viscous and --coulomb (0 for none)")
    w = loop_options["--natural-frequency"]
    with options_named({"natural_frequency": "--natural-frequency"}):
        return simulate_mujoco(to_mjcf(truth), trajectory, duration=duration, rate=args.rate,
                               natural_frequency=20.0 if w is None else
                               (w[0] if len(w) == 1 else w),
                               sensor=sensor, seed=args.seed)
