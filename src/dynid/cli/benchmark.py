"""`dynid benchmark`: BIRDy's Monte-Carlo benchmark (``dynid.benchmark``): every registered
method on a simulated robot under a PD loop, over noise profiles and initial estimates drawn
around the truth; resumable (runs stored in the output folder are reused)."""

from __future__ import annotations

import argparse
from pathlib import Path

from dynid.cli._outputs import output_options
from dynid.cli._parsing import SEED, Range, options_named, print_json, stderr_progress
from dynid.cli._robot_options import description_options, loaded_robot

# dynid.benchmark.protocol's defaults (literal: `--help` imports nothing heavy)
DEFAULT_DRAWS = 25
DEFAULT_DURATION = 10.0


def register(commands: argparse._SubParsersAction) -> None:
    bench = commands.add_parser(
        "benchmark", help="BIRDy's Monte-Carlo benchmark of every identification method")
    bench.add_argument("robot", nargs="?", default="tx40",
                       help="built-in robot name (default %(default)s; tx40 and rv2sq carry "
                            "BIRDy's PD gains), a .yaml robot file, a .urdf or a .urdf.xacro")
    bench.add_argument("--methods", nargs="+", metavar="METHOD",
                       help="methods of the registry (default: every registered method)")
    bench.add_argument("--profiles", nargs="+", metavar="PROFILE",
                       help="noise profiles (default: all six: lowPositionNoise standardNoise "
                            "highTorqueNoise highPositionNoise highPositionTorqueNoise "
                            "lowPositionHighTorqueNoise)")
    bench.add_argument("--draws", type=Range(int, 1, 10_000), default=DEFAULT_DRAWS,
                       help="initial estimates per profile, drawn at 15 %% around the truth "
                            "(default %(default)s)")
    bench.add_argument("--duration", type=Range(float, 1.0, 3600.0), default=DEFAULT_DURATION,
                       help="seconds of excitation per log (default %(default)s)")
    bench.add_argument("--jobs", type=Range(int, 1, 1024), default=1,
                       help="worker processes (default %(default)s)")
    bench.add_argument("--out", metavar="DIR", default="benchmark",
                       help="output folder: runs, benchmark.json/.csv, box plots, "
                            "benchmark.html; runs already there are reused (default "
                            "%(default)s)")
    bench.add_argument("--seed", type=SEED, default=0,
                       help="seed of the trajectory, the noise and the draws (default 0)")
    description_options(bench)
    output_options(bench, quiet=True)
    bench.set_defaults(handler=_benchmark)


def _benchmark(args: argparse.Namespace) -> int:
    from dynid.benchmark import BenchmarkRun, run_benchmark, write_outputs
    from dynid.benchmark.protocol import PROFILES, profile
    from dynid.benchmark.runner import check_settings
    from dynid.identification.methods import IDENTIFICATION_METHODS

    methods = tuple(args.methods) if args.methods else tuple(IDENTIFICATION_METHODS)
    unknown = [m for m in methods if m not in IDENTIFICATION_METHODS]
    if unknown:
        raise ValueError(f"`--methods`: unknown {', '.join(map(repr, unknown))}; choose among "
                         f"{', '.join(IDENTIFICATION_METHODS)}")
    if len(set(methods)) != len(methods):
        raise ValueError("`--methods` names a method twice")
    try:
        profiles = tuple(profile(p) for p in args.profiles) if args.profiles else PROFILES
    except ValueError as error:
        raise ValueError(f"`--profiles`: {error}") from None
    if len(set(profiles)) != len(profiles):
        raise ValueError("`--profiles` names a profile twice")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"`--out`: {args.out!r} is a file; give a folder (new or one of an "
                         "earlier benchmark to resume)")
    robot = loaded_robot(args)
    run = BenchmarkRun(robot, methods, profiles, draws=args.draws, duration=args.duration,
                       seed=args.seed, out=out)
    # the protocol's loop takes the RK4 substeps the robot needs: no option gives them
    with options_named({"out": "--out", "jobs": "--jobs", "methods": "--methods",
                        "duration": "--duration", "substeps": None}):
        check_settings(run)  # before anything is made in --out
        records = run_benchmark(run, jobs=args.jobs, progress=stderr_progress(args))
        written = write_outputs(run, records)
    if args.json:
        print_json({"settings": run.settings(), "rows": written["rows"],
                    "files": written["files"]})
        return 0
    for row in written["rows"]:
        if row.get("skipped") and not row.get("runs"):
            print(f"{row['method']:<14} {row['profile']:<28} skipped: {row['skipped']}")
            continue
        error = row.get("median_parameter_error")
        torque = row.get("median_torque_error")
        rate = row.get("convergence_rate")
        print(f"{row['method']:<14} {row['profile']:<28} parameter error "
              f"{'–' if error is None else f'{100 * error:.3g} %':>9}  torque error "
              f"{'–' if torque is None else f'{100 * torque:.3g} %':>9}  converged "
              f"{'–' if rate is None else f'{100 * rate:.0f} %':>5}")
    print("written: " + ", ".join(written["files"]))
    return 0
