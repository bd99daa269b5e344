"""`dynid compare`: identification methods compared over logs (the Jaco2 paper's Table 5)."""

from __future__ import annotations

import argparse
from pathlib import Path

from dynid.cli._fit_options import (
    NONLINEAR_FRICTION,
    current_options,
    friction_options,
    linear_friction,
    nls_friction,
    scale_from_options,
)
from dynid.cli._log_options import dask_client, prepared, preprocessing_options, scheduler_option
from dynid.cli._outputs import FIGURE_SUFFIXES, output_options
from dynid.cli._parsing import print_json, renamed_option, stderr_progress
from dynid.cli._robot_options import (
    bounds_file,
    joint_keys,
    loaded_robot,
    robot_argument,
    robot_options,
)
from dynid.cli.identify import bootstrap_options, check_bootstrap_options

# dynid.identification.COMPARE_METHODS and DEFAULT_METHODS (literal: `--help` imports nothing heavy)
COMPARE_CHOICES = ("cad", "ols", "wls", "iv", "cls1", "cls2", "cls3", "log-cholesky", "nls",
                   "irls-huber", "irls-tukey", "tls", "ridge", "elastic-net", "pc-irls-huber",
                   "pc-irls-tukey", "pc-ridge", "pc-elastic-net", "rls", "ekf", "srekf", "ukf",
                   "srukf")
COMPARE_DEFAULTS = ("cad", "ols", "wls", "cls1", "cls2", "cls3", "log-cholesky", "nls")
# dynid.identification._currents.CURRENT_METHODS: the methods that identify drive gains
CURRENT_DEFAULTS = ("ols", "cls1", "cls2", "cls3", "log-cholesky", "nls")


def register(commands: argparse._SubParsersAction) -> None:
    compare = commands.add_parser(
        "compare", help="compare identification methods over trajectories (Jaco2 Table 5)")
    compare.add_argument("robot", help="built-in robot name, or a .yaml file (bounds for CLS)")
    compare.add_argument("data", nargs="+", metavar="DATA",
                         help="two or more logs: each identifies in turn, the others validate")
    compare.add_argument("--methods", nargs="+", choices=COMPARE_CHOICES,
                         help="default: " + " ".join(COMPARE_DEFAULTS) + "; for motor-current "
                              "logs: " + " ".join(CURRENT_DEFAULTS))
    compare.add_argument("--prior", metavar="ROBOT", type=robot_argument,
                         help="the CAD values: the cad row, the CLS prior, the NLS start "
                              "(default: the robot's own parameters)")
    compare.add_argument("--reference", metavar="TRAJ", nargs="+",
                         help="iv: the trajectory the computed-torque controller tracked (one "
                              "for all logs, or one per log, in the order of DATA)")
    renamed_option(compare, "--references", "--reference", nargs="+")
    renamed_option(compare, "--nls-friction", "--friction", nargs="?")
    compare.add_argument("--bounds", metavar="BOUNDS.yaml",
                         help="constrained, nls: parameter bounds (the robot file's `bounds:` "
                              "block form; default the robot's own, or derived from a URDF)")
    compare.add_argument("--joints", nargs="+", metavar="JOINT",
                         help="score these joints only (names or numbers from 1)")
    compare.add_argument("--reestimate-offsets", action="store_true",
                         help="validate with each log's own torque offsets (its mean residual "
                              "per joint): torque sensors drift between runs")
    bootstrap_options(compare, "every fit but cad (each method's own refits)")
    friction_options(compare, nonlinear=True,
                     nls="for the nls row, the linear methods keeping their default (the "
                         "nls row's default: the robot file's, else stribeck, as in "
                         "`dynid identify`)")
    current_options(compare)
    robot_options(compare)
    compare.add_argument("-o", "--output", metavar="TABLE", help="write .md, .csv or .json")
    compare.add_argument("--plot", metavar="PNG", help="validation errors per method")
    preprocessing_options(compare, split=False)
    scheduler_option(compare, "run the fits")
    output_options(compare, quiet=True)
    compare.set_defaults(handler=_compare, output_suffixes={"-o": (".md", ".csv", ".json"),
                                                         "--plot": FIGURE_SUFFIXES})


def _compare(args: argparse.Namespace) -> int:
    """The Jaco2 paper's Table 5 over the given logs."""
    from dynid.identification import compare_methods, write_table

    check_bootstrap_options(args)
    robot = loaded_robot(args)
    prior = loaded_robot(args, args.prior, "--prior") if args.prior else None
    references = None
    if args.reference:
        from dynid.excitation import load_trajectory

        if len(args.reference) not in (1, len(args.data)):
            raise ValueError(f"`--reference` needs one trajectory for all logs or one per log "
                             f"({len(args.data)}), got {len(args.reference)}")
        references = [load_trajectory(path) for path in args.reference]
        references = references * len(args.data) if len(references) == 1 else references
    datasets = [prepared(args, path, robot) for path in args.data]
    currents = scale_from_options(args, robot, datasets)
    methods = args.methods or list(CURRENT_DEFAULTS if currents else COMPARE_DEFAULTS)
    with dask_client(args) as client:
        table = compare_methods(robot, datasets, names=[Path(p).stem for p in args.data],
                                methods=methods, prior=prior, references=references, **currents,
                                nls_friction=nls_friction(robot, args.friction),
                                friction=_linear_columns(robot, args),
                                bounds=None if args.bounds is None else bounds_file(
                                    args.bounds, robot.n_joints),
                                joints=joint_keys(args.joints),
                                reestimate_offsets=args.reestimate_offsets,
                                bootstrap=args.bootstrap,
                                block_length=args.block_length or "auto", seed=args.seed,
                                executor=None if client is None else client.get_executor(),
                                progress=stderr_progress(args))
    writes = []  # the table and the figure appear together or not at all
    if args.output:
        writes.append((args.output, lambda tmp: write_table(table, tmp, suffix=args.output)))
    if args.plot:
        from dynid.evaluation import comparison_figure, save_figure

        figure = comparison_figure(table.methods, table.validation_errors(),
                                   title=f"{robot.name}: validation errors over "
                                         f"{len(datasets)} trajectories")
        writes.append((args.plot, lambda tmp: save_figure(figure, tmp)))
    if writes:
        from dynid._files import atomic_write_all

        atomic_write_all(writes)
    if args.json:
        print_json({"robot": robot.name, **table.to_json(), "output": args.output})
        return 0
    print(f"{robot.name}: {len(table.methods)} methods over {len(datasets)} trajectories "
          "(each identifies in turn, the others validate; * the smallest w of the row)")
    print("\n".join(table.lines()))
    for path in (args.output, args.plot):
        if path:
            print(f"  written to {path}")
    return 0


def _linear_columns(robot, args: argparse.Namespace):
    """The linear methods' friction columns: --friction when it is linear; for a nonlinear
    model (which NLS fits) the default, as without --friction."""
    if args.friction in NONLINEAR_FRICTION:
        return linear_friction(robot, argparse.Namespace(**{**vars(args), "friction": None}))
    return linear_friction(robot, args)
