"""`dynid demo`: the whole workflow on the built-in Panda digital twin (``dynid.workflow.demo``)."""

from __future__ import annotations

import argparse

from dynid.cli._outputs import output_options
from dynid.cli._parsing import SEED, Range, check_samples, print_json, stderr_progress

# the demo's defaults (literal: `--help` does not import dynid.workflow.demo: it loads numba)
DEFAULT_DURATION = 20.0
DEFAULT_NOISE_STD = 0.1
DEFAULT_ITERATIONS = 20


def register(commands: argparse._SubParsersAction) -> None:
    demo = commands.add_parser(
        "demo", help="the whole workflow on the built-in Panda digital twin: excitation, "
                     "closed-loop log, preprocessing, OLS and CLS-3, retrieval, validation, "
                     "report and URDF")
    demo.add_argument("-o", "--output", default="dynid-demo", metavar="DIR",
                      help="folder for the logs, models, report and URDF (default %(default)s)")
    demo.add_argument("--seed", type=SEED, default=0, help="random seed (default %(default)s)")
    demo.add_argument("--duration", type=Range(float, high=300, above=0),
                      default=DEFAULT_DURATION,
                      help="seconds per trajectory (default %(default)g)")
    demo.add_argument("--rate", type=Range(float, 1000, 10_000), default=1000.0,
                      help="control and logging rate [Hz] (default %(default)g)")
    demo.add_argument("--noise", type=Range(float, 0, 1e3), default=DEFAULT_NOISE_STD,
                      help="torque noise standard deviation [N m] (default %(default)g)")
    demo.add_argument("--iterations", type=Range(int, 1, 10_000), default=DEFAULT_ITERATIONS,
                      help="excitation search iterations (default %(default)s)")
    output_options(demo, quiet=True)
    demo.set_defaults(handler=_demo)


def _demo(args: argparse.Namespace) -> int:
    from dynid.workflow.demo import format_summary, run_demo

    check_samples(args.duration, args.rate, "`--duration` and `--rate`")
    result = run_demo(output=args.output, duration=args.duration, rate=args.rate,
                      noise_std=args.noise, iterations=args.iterations, seed=args.seed,
                      command=args.command_line, progress=stderr_progress(args))
    if args.json:
        print_json(result.to_json())
    else:
        print(format_summary(result))
    return 0
