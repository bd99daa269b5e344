"""The compare suite (``dynid bench --suite compare``): the Jaco2 Table 5 comparison of 5 twin
logs x the default methods, and the whole demo."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from dynid.bench._timing import twin_log
from dynid.robot import load_robot


def run(*, robot: str = "panda", n_logs: int = 5, n_samples: int = 20_001,
        seed: int = 0, progress: Callable[[str], None] | None = None) -> dict:
    """Wall time of (a) ``dynid compare``'s work for ``robot``: ``n_logs`` twin logs of
    ``n_samples`` at 1 kHz, the eight default methods (those the robot's bounds allow), each
    log identifying in turn (fits in parallel processes; the prior is the built-in
    ``<robot>-cad`` where there is one), and (b) for the Panda, the whole ``dynid demo``."""
    import tempfile

    from dynid.identification.compare import DEFAULT_METHODS, compare_methods
    from dynid.robot import builtin_robots
    from dynid.workflow.demo import run_demo

    say = progress or (lambda _line: None)
    model_robot = load_robot(robot)
    prior = f"{robot}-cad" if f"{robot}-cad" in builtin_robots() else None
    methods = [m for m in DEFAULT_METHODS if model_robot.bounds is not None
               or m not in ("cls1", "cls2", "cls3", "log-cholesky")]
    logs = [twin_log(model_robot, n_samples, seed + k) for k in range(n_logs)]
    start = time.perf_counter()
    comparison = compare_methods(model_robot, logs, methods=methods,
                                 prior=load_robot(prior) if prior else None)
    compare_seconds = time.perf_counter() - start
    say(f"compare, {n_logs} logs x {len(methods)} methods: {compare_seconds:.1f} s")
    result = {"robot": model_robot.name, "compare_n_logs": n_logs,
              "compare_n_samples": n_samples, "compare_methods": methods,
              "compare_prior": prior,
              "compare_seconds": compare_seconds,
              "compare_fit_seconds": dict(comparison.seconds), "cpus": os.cpu_count()}
    if robot == "panda":  # the demo's twin
        with tempfile.TemporaryDirectory() as folder:
            start = time.perf_counter()
            figures = run_demo(output=Path(folder) / "demo")
            result["demo_seconds"] = time.perf_counter() - start
        result["demo_stage_seconds"] = dict(figures.seconds)
        say(f"demo: {result['demo_seconds']:.1f} s")
    return result


def summary(result: dict) -> str:
    lines = [f"compare of {result['robot']}, {result['compare_n_logs']} logs of "
             f"{result['compare_n_samples']} samples x {len(result['compare_methods'])} "
             f"methods: {result['compare_seconds']:.1f} s wall on {result['cpus']} CPUs "
             "(fit time per method over all logs: "
             + ", ".join(f"{k} {v:.1f} s" for k, v in result["compare_fit_seconds"].items())
             + ")"]
    if "demo_seconds" in result:
        lines.append(f"demo: {result['demo_seconds']:.1f} s ("
                     + ", ".join(f"{k} {v:.1f}" for k, v in
                                 result["demo_stage_seconds"].items()) + ")")
    return "\n".join(lines)
