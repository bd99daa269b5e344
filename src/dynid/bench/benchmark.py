"""The wall time of ``dynid benchmark`` (BIRDy's protocol, ``dynid.benchmark``) on the TX40 with
every registered method: ``run`` runs a protocol in a temporary folder and times
it; ``full_protocol_estimate`` extrapolates a measured run to the full protocol (25 draws x 6
profiles x every method) from its per-fit times. The target: the full protocol within 15
minutes on 2 cores.

``python -m dynid.bench.benchmark [--quick]`` prints the JSON.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["QUICK", "full_protocol_estimate", "run", "summary"]

#: the quick variant: every method and profile, 2 draws, 10 s logs
QUICK = {"draws": 2, "duration": 10.0}


def run(*, robot: str = "tx40", draws: int = 25, duration: float = 10.0,
        profiles: Sequence[str] | None = None, methods: Sequence[str] | None = None,
        jobs: int = 2, progress: Callable[[str], None] | None = None) -> dict:
    """Run the protocol (``draws`` x ``profiles`` (default all six) x ``methods`` (default
    every registered one), ``jobs`` workers) from scratch in a temporary folder; its wall time
    (``seconds``), the closed-loop simulation's part, each method's fits and their total time,
    and ``full_protocol_estimate`` of the same methods."""
    from dynid.benchmark import BenchmarkRun, run_benchmark, write_outputs
    from dynid.benchmark.protocol import PROFILES, profile
    from dynid.identification.methods import IDENTIFICATION_METHODS
    from dynid.robot import load_robot

    chosen = tuple(methods) if methods else tuple(IDENTIFICATION_METHODS)
    noise = tuple(profile(p) for p in profiles) if profiles else PROFILES
    with tempfile.TemporaryDirectory(prefix="dynid-benchmark-") as folder:
        protocol = BenchmarkRun(load_robot(robot), chosen, noise, draws=draws,
                                duration=duration, out=Path(folder))
        began = time.perf_counter()
        records = run_benchmark(protocol, jobs=jobs, progress=progress)
        fitted = time.perf_counter() - began
        write_outputs(protocol, records)
        seconds = time.perf_counter() - began
    per_method = {}
    for name in chosen:
        mine = [r for r in records if r["method"] == name and "seconds" in r]
        per_method[name] = {"fits": len(mine), "fit_seconds": sum(r["seconds"] for r in mine),
                            "failed": sum(not r.get("ok") for r in mine),
                            "skipped": next((r["skipped"] for r in records
                                             if r["method"] == name and "skipped" in r), None)}
    result = {"robot": robot, "draws": draws, "profiles": len(noise), "duration": duration,
              "jobs": jobs, "methods": list(chosen), "seconds": seconds,
              "run_seconds": fitted, "outputs_seconds": seconds - fitted,
              "per_method": per_method}
    result["full_protocol_estimate"] = full_protocol_estimate(result)
    return result


def full_protocol_estimate(measured: dict, *, draws: int = 25, profiles: int = 6) -> dict:
    """The full protocol's wall time extrapolated from ``measured`` (``run``):
    each method's mean time per fit times the fits the full protocol needs (one per profile for
    a start-free family, one per draw and profile otherwise), over the workers, plus the
    measured run's fixed part (simulation, outputs). An estimate, labelled as such."""
    from dynid.benchmark.runner import start_free
    from dynid.identification.methods import IDENTIFICATION_METHODS

    fit_total, fits_total = 0.0, 0
    for name, figures in measured["per_method"].items():
        if not figures["fits"]:
            continue
        free = start_free(IDENTIFICATION_METHODS[name])
        fits = profiles * (1 if free else draws)
        fit_total += figures["fit_seconds"] / figures["fits"] * fits
        fits_total += fits
    measured_fits = sum(f["fit_seconds"] for f in measured["per_method"].values())
    fixed = max(measured["seconds"] - measured_fits / measured["jobs"], 0.0)
    return {"draws": draws, "profiles": profiles, "fits": fits_total,
            "fit_core_seconds": fit_total,
            "seconds": fixed + fit_total / measured["jobs"], "jobs": measured["jobs"],
            "note": "extrapolated from the measured run's time per fit"}


if __name__ == "__main__":  # pragma: no cover
    import sys

    options = QUICK if "--quick" in sys.argv else {}
    print(json.dumps(run(**options, progress=lambda line: print(
        line, file=sys.stderr, flush=True)), indent=2))


def summary(result: dict) -> str:
    estimate = result["full_protocol_estimate"]
    return (f"dynid benchmark {result['robot']}: {result['draws']} draws x "
            f"{result['profiles']} profiles x {len(result['methods'])} methods, "
            f"{result['jobs']} workers: {result['seconds']:.1f} s; the full protocol "
            f"(extrapolated): {estimate['seconds']:.0f} s")
