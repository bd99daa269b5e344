"""`dynid bench`: the regressor and RNEA timed against pinocchio, and the workflow's suites
(``dynid.bench``)."""

from __future__ import annotations

import argparse

from dynid.cli._common import Range, output_options, print_json, stderr_progress

# dynid.bench's defaults (literal: `--help` does not import dynid.bench, which loads pinocchio)
DEFAULT_SIZES = (1_000, 10_000, 100_000)
DEFAULT_REPEAT = 5


# the suites that take --robot, and those that take --sizes and --repeat
ROBOT_SUITES = ("dynamics", "identification", "consistency", "compare", "all", "nls",
                "benchmark", "benchmark-quick", "calibration")
TIMING_SUITES = ("dynamics", "all")


def register(commands: argparse._SubParsersAction) -> None:
    bench = commands.add_parser("bench", help="time the regressor and RNEA against pinocchio")
    bench.add_argument("--robot",
                       help="robot of the dynamics, identification, consistency, compare, all "
                            "and nls suites (default panda) and of the benchmark suites "
                            "(default tx40)")
    bench.add_argument("--sizes", type=Range(int, 1, 10_000_000), nargs="+",
                       help=f"dynamics, all: sample counts (default "
                            f"{' '.join(map(str, DEFAULT_SIZES))})")
    bench.add_argument("--repeat", type=Range(int, 1, 1000),
                       help=f"dynamics, all: best of this many runs (default {DEFAULT_REPEAT})")
    bench.add_argument("--suite", choices=["dynamics", "identification", "consistency",
                                           "compare", "all", "scale", "codegen", "nls",
                                           "benchmark", "benchmark-quick", "estimators",
                                           "calibration"],
                       default="dynamics",
                       help="dynamics: regressor and RNEA vs pinocchio (default); "
                            "identification: OLS from 1e5 samples and reverse engineering "
                            "from 1010 poses; consistency: CLS-3, NLS, SDP and penalty "
                            "retrieval; compare: 5 logs x 8 methods, and the demo; all: these "
                            "four (make bench adds the excitation and preprocessing pipeline); "
                            "scale: the closed-loop twin idle and busy, 10^7 samples streamed "
                            "from a memory-mapped log (and on a Dask LocalCluster), excitation, "
                            "the demo (minutes; a few GB of disk in --folder); codegen: the "
                            "generated C's inverse dynamics and M(q) in ns per call (the "
                            "system's C compiler) beside pinocchio's rnea and crba from Python; "
                            "nls: NLS with sigmoid, Stribeck and LuGre friction on 10^4 samples "
                            "of the Panda twin (seconds, stopped on tolerances, RMSE against "
                            "the cls3 start) and the drive gains cls3 identifies from the "
                            "twin's motor currents; benchmark: the wall time of `dynid "
                            "benchmark` (BIRDy's full protocol, 25 draws x 6 profiles x every "
                            "method, 2 workers, on the TX40: minutes to hours, as the "
                            "simulation-based methods cost); benchmark-quick: 2 draws, and the "
                            "full protocol's time extrapolated from it; estimators: DIDIM, "
                            "PC-DIDIM and CLOE against OLS at high torque noise, the online "
                            "payload, and the full protocol's time extrapolated from one draw "
                            "on two profiles; calibration: geometric calibration on the Panda "
                            "twin (kinematic errors 5 mrad / 1 mm, 0.1 mm noise): offsets and "
                            "lengths recovered, held-out error over the noise, 20 optimised "
                            "poses against 50 random, and the dynamics identified on the "
                            "nominal and the corrected kinematics")
    bench.add_argument("--samples", type=Range(int, 10_000, 1_000_000_000),
                       help="scale: the streamed log's samples (default 10000000)")
    bench.add_argument("--folder", metavar="DIR",
                       help="scale: where the streamed log is written (default: the system's "
                            "temporary folder)")
    output_options(bench, quiet=True)
    bench.set_defaults(handler=_bench)


def _bench(args: argparse.Namespace) -> int:
    from dynid.bench import (
        format_bench,
        format_compare,
        format_consistency,
        format_identification,
        run_bench,
        run_compare_bench,
        run_consistency_bench,
        run_identification_bench,
    )

    result: dict = {}
    if args.suite != "scale" and (args.samples is not None or args.folder is not None):
        raise ValueError("`--samples` and `--folder` are for --suite scale")
    for flag, value, suites in (("--robot", args.robot, ROBOT_SUITES),
                                ("--sizes", args.sizes, TIMING_SUITES),
                                ("--repeat", args.repeat, TIMING_SUITES)):
        if value is not None and args.suite not in suites:
            raise ValueError(f"`{flag}` is for --suite {', '.join(suites)}; the {args.suite} "
                             "suite runs on its own fixed setting")
    benchmark_suite = args.suite in ("benchmark", "benchmark-quick")
    robot = args.robot or ("tx40" if benchmark_suite else "panda")
    if args.suite == "codegen":
        from dynid.bench_codegen import codegen_bench, format_codegen_bench

        result = codegen_bench()
        if args.json:
            print_json(result)
        else:
            print(format_codegen_bench(result))
        return 0
    if args.suite == "nls":
        from dynid.bench import consistent_gains_bench
        from dynid.bench_nls import format_nls, run_nls_suite

        result = run_nls_suite(progress=stderr_progress(args))
        result.update(consistent_gains_bench(robot))
        if args.json:
            print_json(result)
        else:
            print(format_nls(result))
            print(f"drive gains from motor currents by {result['gains_method']} "
                  f"({result['gains_n_samples']} samples of the twin, a payload log among "
                  f"them): within {100 * result['gains_max_relative_error']:.2f} %, "
                  f"{result['gains_seconds']:.2f} s, consistent: "
                  f"{'yes' if result['gains_consistent'] else 'no'}")
        return 0
    if benchmark_suite:
        from dynid.bench_benchmark import QUICK, benchmark_seconds

        options = QUICK if args.suite == "benchmark-quick" else {}
        result = benchmark_seconds(robot, **options, progress=stderr_progress(args))
        if args.json:
            print_json(result)
        else:
            estimate = result["full_protocol_estimate"]
            print(f"dynid benchmark {result['robot']}: {result['draws']} draws x "
                  f"{result['profiles']} profiles x {len(result['methods'])} methods, "
                  f"{result['jobs']} workers: {result['seconds']:.1f} s; the full protocol "
                  f"(extrapolated): {estimate['seconds']:.0f} s")
        return 0
    if args.suite == "estimators":
        from dynid.bench_estimators import estimators_bench

        result = estimators_bench(progress=stderr_progress(args))
        if args.json:
            print_json(result)
        else:
            print(f"DIDIM: {result['didim_fit_seconds']:.2f} s, parameter error "
                  f"{result['didim_parameter_error_ratio']:.2f} x OLS's (PC-DIDIM "
                  f"{result['pc_didim_parameter_error_ratio']:.2f} x, CLOE "
                  f"{result['cloe_parameter_error_ratio']:.2f} x in "
                  f"{result['cloe_fit_seconds']:.2f} s)")
            print(f"online payload: settled in {result['online_payload_settle_seconds']:.2f} s, "
                  f"mass error {100 * result['online_payload_mass_error']:.2f} %, "
                  f"{result['online_samples_per_second']:.0f} samples/s one at a time")
            print(f"BIRDy's full protocol on the TX40 (extrapolated from "
                  f"{result['benchmark_measured']}): {result['benchmark_seconds']:.0f} s")
        return 0
    if args.suite == "calibration":
        from dynid.calibration.study import calibrate_then_identify, twin_study
        from dynid.robot import load_robot

        arm = load_robot(robot)
        result = twin_study(arm)
        result.update(calibrate_then_identify(arm))
        if args.json:
            print_json(result)
        else:
            print(f"{robot}: {result['n_identifiable']} of {result['n_parameters']} kinematic "
                  f"parameters identifiable from {result['poses']} optimised poses at "
                  f"{1e3 * result['sigma_m']:g} mm")
            print(f"  joint offsets within {result['offset_error_mrad']:.3f} mrad (largest "
                  f"std {result['offset_std_mrad']:.3f}), lengths within "
                  f"{result['length_error_mm']:.3f} mm (largest std "
                  f"{result['length_std_mm']:.3f})")
            print(f"  held-out error {result['heldout_before_over_noise']:.1f} x the noise "
                  f"-> {result['heldout_error_over_noise']:.2f} x")
            print(f"  20 optimised poses / 50 random: parameter error "
                  f"{result['optimised20_over_random50']:.2f} x (Cramer-Rao: "
                  f"{result['optimised20_over_random50_expected']:.2f} x)")
            print(f"  dynamics on held-out torques: nominal kinematics "
                  f"{result['heldout_torque_error_nominal_percent']:.3f} %, corrected "
                  f"{result['heldout_torque_error_corrected_percent']:.3f} %, true "
                  f"{result['heldout_torque_error_true_percent']:.3f} %")
        return 0
    if args.suite == "scale":
        from pathlib import Path

        from dynid.bench_scale import format_scale, run_scale_suite

        if args.folder is not None and not Path(args.folder).is_dir():
            raise ValueError(f"`--folder`: {args.folder} is not a folder")

        result = run_scale_suite(n_samples=args.samples or 10_000_000, folder=args.folder,
                                 progress=stderr_progress(args))
        if args.json:
            print_json(result)
        else:
            print(format_scale(result))
        return 0
    if args.suite in ("dynamics", "all"):
        result = run_bench(robot=robot, sizes=args.sizes or list(DEFAULT_SIZES),
                           repeat=args.repeat or DEFAULT_REPEAT,
                           progress=stderr_progress(args))
    if args.suite in ("identification", "all"):
        result["identification"] = run_identification_bench(robot=robot,
                                                            progress=stderr_progress(args))
    if args.suite in ("consistency", "all"):
        result["consistency"] = run_consistency_bench(robot=robot,
                                                      progress=stderr_progress(args))
    if args.suite in ("compare", "all"):
        result["compare"] = run_compare_bench(robot=robot, progress=stderr_progress(args))
    if args.json:
        print_json(result)
        return 0
    if "by_size" in result:
        print(format_bench(result))
    if "identification" in result:
        print(format_identification(result["identification"]))
    if "consistency" in result:
        print(format_consistency(result["consistency"]))
    if "compare" in result:
        print(format_compare(result["compare"]))
    return 0
