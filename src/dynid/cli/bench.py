"""`dynid bench`: the measuring instruments (``dynid.bench``), one suite at a time."""

from __future__ import annotations

import argparse

from dynid.bench import SUITES
from dynid.cli._outputs import output_options
from dynid.cli._parsing import Range, options_named, print_json, stderr_progress

# dynid.bench.dynamics's defaults (literal: `--help` does not import it, which loads pinocchio)
DEFAULT_SIZES = (1_000, 10_000, 100_000)
DEFAULT_REPEAT = 5

# the suites that take --sizes and --repeat, and --samples and --folder
TIMING_SUITES = ("dynamics", "all")
SCALE_SUITES = ("scale",)


def register(commands: argparse._SubParsersAction) -> None:
    bench = commands.add_parser("bench", help="time dynid's steps against pinocchio and targets")
    robot_suites = [name for name, suite in SUITES.items() if suite.robot]
    bench.add_argument("--robot",
                       help=f"robot of the {', '.join(robot_suites)} suites (default: the "
                            "suite's, below)")
    bench.add_argument("--sizes", type=Range(int, 1, 10_000_000), nargs="+",
                       help=f"dynamics, all: sample counts (default "
                            f"{' '.join(map(str, DEFAULT_SIZES))})")
    bench.add_argument("--repeat", type=Range(int, 1, 1000),
                       help=f"dynamics, all: best of this many runs (default {DEFAULT_REPEAT})")
    bench.add_argument("--suite", choices=list(SUITES), default="dynamics",
                       help="default %(default)s; " + "; ".join(
                           f"{name}: {suite.help.replace('%', '%%')}"  # argparse formats it
                           + (f" (on {suite.robot})" if suite.robot else "")
                           for name, suite in SUITES.items()))
    bench.add_argument("--samples", type=Range(int, 10_000, 1_000_000_000),
                       help="scale: the streamed log's samples (default 10000000)")
    bench.add_argument("--folder", metavar="DIR",
                       help="scale: where the streamed log is written (default: the system's "
                            "temporary folder)")
    output_options(bench, quiet=True)
    bench.set_defaults(handler=_bench)


def _bench(args: argparse.Namespace) -> int:
    from pathlib import Path

    from dynid.bench import run_suite, summary

    suite = SUITES[args.suite]
    for flag, value, suites in (("--robot", args.robot,
                                 tuple(name for name, s in SUITES.items() if s.robot)),
                                ("--sizes", args.sizes, TIMING_SUITES),
                                ("--repeat", args.repeat, TIMING_SUITES),
                                ("--samples", args.samples, SCALE_SUITES),
                                ("--folder", args.folder, SCALE_SUITES)):
        if value is not None and args.suite not in suites:
            raise ValueError(f"`{flag}` is for --suite {', '.join(suites)}; the {args.suite} "
                             "suite runs on its own fixed setting")
    if args.folder is not None and not Path(args.folder).is_dir():
        raise ValueError(f"`--folder`: {args.folder} is not a folder")
    options: dict = {}
    if args.suite in TIMING_SUITES:
        options = {"sizes": args.sizes or list(DEFAULT_SIZES),
                   "repeat": args.repeat or DEFAULT_REPEAT}
    if args.suite in SCALE_SUITES:
        options = {"n_samples": args.samples or 10_000_000, "folder": args.folder}
    with options_named({"name_or_path": "--robot"}):
        result = run_suite(args.suite, robot=args.robot if suite.robot else None,
                           progress=stderr_progress(args), **options)
    if args.json:
        print_json(result)
    else:
        print(summary(args.suite, result))
    return 0
