"""`dynid retrieve`: feasible link parameters from identified base coefficients (SDP, or Gaz et
al.'s penalty search)."""

from __future__ import annotations

import argparse
from pathlib import Path

from dynid.cli._log_options import dask_client, scheduler_option
from dynid.cli._outputs import output_options
from dynid.cli._parsing import SEED, Range, print_json, stderr_progress
from dynid.cli._robot_options import bounds_file, description_options, loaded_robot, robot_argument


def register(commands: argparse._SubParsersAction) -> None:
    retrieve = commands.add_parser(
        "retrieve", help="feasible link parameters from identified base coefficients")
    retrieve.add_argument("robot", help="built-in robot name, a .yaml robot file, a .urdf or "
                                        "a .urdf.xacro (bounds: the file's, else derived from "
                                        "a URDF)")
    retrieve.add_argument("--tip", metavar="LINK",
                          help="a URDF robot's tip link (where its arm ends; a URDF with a "
                               "gripper needs one)")
    retrieve.add_argument("coefficients", metavar="COEFFS",
                          help="a model file written by `dynid identify` / `identify-static`")
    retrieve.add_argument("--method", choices=["sdp", "penalty"], default="sdp",
                          help="sdp: the convex route, globally optimal (default); penalty: "
                               "Gaz et al.'s Algorithm 1 (annealing + local, Q restarts)")
    retrieve.add_argument("--restarts", type=Range(int, 1, 1000), metavar="Q",
                          help="penalty: independent runs, in parallel (default 8)")
    retrieve.add_argument("--stages", type=Range(int, 1, 100), metavar="KAPPA",
                          help="penalty: successive penalty steps per run (default 10)")
    retrieve.add_argument("--seed", type=SEED, help="penalty: first run's seed (default 0)")
    retrieve.add_argument("--bounds", metavar="FILE",
                          help="YAML `bounds:` mapping (default: the robot file's)")
    retrieve.add_argument("--total-mass", type=Range(float, 0, 1e4),
                          nargs=2, metavar=("MIN", "MAX"),
                          help="the robot's total-mass range [kg] (default: the bounds')")
    retrieve.add_argument("--prior", metavar="ROBOT", type=robot_argument,
                          help="tie-break towards this robot's parameters (e.g. panda-cad); "
                               "penalty: every stage pulls towards it")
    retrieve.add_argument("--prior-weight", type=Range(float, high=1e6, above=0), metavar="W",
                          help="penalty: the pull towards --prior against the relative fit "
                               "(default 1e-3)")
    retrieve.add_argument("-o", "--output", metavar="MODEL.yaml",
                          help="write the model carried by the retrieved parameters (.yaml: a "
                               "dynid-model/1 file that validate, report, export, codegen "
                               "read, its full link set checked for consistency); .urdf, .xml: "
                               "the robot with them, as --parameters-output")
    retrieve.add_argument("--parameters-output", metavar="PARAMS.yaml",
                          help="write the robot with the retrieved parameters: a dynid robot "
                               "file (.yaml; a URDF robot's points at its URDF), or URDF / "
                               "MJCF (.urdf, .xml)")
    description_options(retrieve)
    scheduler_option(retrieve, "run the penalty restarts")
    output_options(retrieve, quiet=True)
    retrieve.set_defaults(handler=_retrieve, output_suffixes={
        "-o": ROBOT_SUFFIXES, "--parameters-output": ROBOT_SUFFIXES})


ROBOT_SUFFIXES = (".yaml", ".yml", ".urdf", ".xml", ".mjcf")


def _is_yaml(path: str) -> bool:
    return Path(path).suffix.lower() in (".yaml", ".yml")


def _retrieve(args: argparse.Namespace) -> int:
    import dataclasses

    from dynid.identification import retrieve_penalty, retrieve_sdp
    from dynid.model import load_model, save_model
    from dynid.robot import save_robot

    if args.parameters_output and args.output and not _is_yaml(args.output):
        raise ValueError("`-o` names a robot export (.urdf, .xml) and `--parameters-output` "
                         "another: give one of them")
    robot = loaded_robot(args)
    model = load_model(args.coefficients)
    if model.robot.n_joints != robot.n_joints:
        raise ValueError(f"`COEFFS` is a model of {model.robot.n_joints} joints, `ROBOT` has "
                         f"{robot.n_joints}")
    bounds = robot.bounds if args.bounds is None else bounds_file(args.bounds, robot.n_joints)
    total_mass = tuple(args.total_mass) if args.total_mass else None
    # coefficients dropped at identification (high relative std) are not fitted
    exclude = [int(k) for k in model.report.get("dropped", [])]
    prior = loaded_robot(args, args.prior, "--prior").parameters if args.prior else None
    if args.prior_weight is not None and (args.method != "penalty" or prior is None):
        raise ValueError("`--prior-weight` weighs --prior in --method penalty")
    if args.method == "sdp":
        if (args.restarts, args.stages, args.seed, args.scheduler) != (None,) * 4:
            raise ValueError("`--restarts`, `--stages`, `--seed` and `--scheduler` are for "
                             "--method penalty")
        result = retrieve_sdp(robot, model.base, model.coefficients, bounds=bounds,
                              total_mass=total_mass, exclude=exclude, prior=prior)
    else:
        with dask_client(args) as client:
            result = retrieve_penalty(
                robot, model.base, model.coefficients, bounds=bounds, total_mass=total_mass,
                exclude=exclude, prior=prior, prior_weight=args.prior_weight or 1e-3,
                restarts=8 if args.restarts is None else args.restarts,
                stages=10 if args.stages is None else args.stages, seed=args.seed or 0,
                executor=None if client is None else client.get_executor(),
                progress=stderr_progress(args))
    robot_output = args.parameters_output or (
        args.output if args.output and not _is_yaml(args.output) else None)
    if robot_output:
        retrieved = dataclasses.replace(robot, parameters=result.parameters,
                                        name=f"{robot.name}-retrieved")
        if _is_yaml(robot_output):
            save_robot(retrieved, robot_output)
        else:
            from dynid.export import export_robot

            export_robot(retrieved, robot_output)
    model_output = args.output if args.output and _is_yaml(args.output) else None
    if model_output:
        save_model(model.with_physical_parameters(result.parameters,
                                                  method=f"retrieve-{result.method}"),
                   model_output)
    if args.json:
        print_json({**result.to_json(), "output": args.output, "model": model_output,
                    "parameters_output": robot_output})
        return 0
    left_out = (f" ({len(exclude)} dropped at identification left out: "
                f"{', '.join(model.base.base_names[k] for k in exclude)})" if exclude else "")
    print(f"{robot.name}: feasible parameters by {result.method} in {result.seconds:.2f} s "
          f"({result.status}{'; ' + result.message if result.message else ''}); relative "
          f"error {result.relative_error_percent:.4g} % on {result.residual.size} "
          f"coefficients{left_out}")
    print("\n".join(result.consistency.lines()))
    if model_output:
        print(f"  model with the retrieved parameters written to {model_output}")
    if robot_output:
        print(f"  robot with the retrieved parameters written to {robot_output}")
    return 0
