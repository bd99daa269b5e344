"""The pipeline suite (``make bench``): the excitation design and preprocessing of 10^6 samples."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from dynid.robot import load_robot


def run(*, robot: str = "panda", n_samples: int = 1_000_000, seed: int = 0,
        progress: Callable[[str], None] | None = None) -> dict:
    """Wall time of (a) the excitation design of the issue's target (10 harmonics, 20 s,
    100 Hz grid, criterion cond) and (b) preprocessing ``n_samples`` of an irregular 7-joint
    log (resample, 4th-order Butterworth, differentiate, trim)."""
    from dynid.data.dataset import Dataset
    from dynid.data.preprocess import prepare
    from dynid.excitation.optimize import optimize_excitation

    say = progress or (lambda _line: None)
    model_robot = load_robot(robot)
    start = time.perf_counter()
    result = optimize_excitation(model_robot, harmonics=10, period=20.0, rate=100.0, seed=seed)
    excite_seconds = time.perf_counter() - start
    say(f"excitation design: cond {result.start_value:.4g} -> {result.condition_number:.4g} "
        f"in {excite_seconds:.1f} s")
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.uniform(0.0007, 0.0013, n_samples))
    signal = np.sin(np.outer(t, np.arange(1, 8))) + 1e-3 * rng.standard_normal((n_samples, 7))
    log = Dataset(t=t, q=signal, dq=signal, tau=signal)
    start = time.perf_counter()
    prepare(log)
    preprocess_seconds = time.perf_counter() - start
    say(f"preprocessing {n_samples} samples: {preprocess_seconds:.2f} s")
    return {"excitation_seconds": excite_seconds,
            "excitation_condition_number": result.condition_number,
            "excitation_start_condition_number": result.start_value,
            "preprocess_n_samples": n_samples, "preprocess_seconds": preprocess_seconds}


def summary(result: dict) -> str:
    return (
        f"excitation design (Panda, 10 harmonics, 20 s at 100 Hz): cond "
        f"{result['excitation_start_condition_number']:.4g} -> "
        f"{result['excitation_condition_number']:.4g} in {result['excitation_seconds']:.1f} s\n"
        f"preprocessing of {result['preprocess_n_samples']} samples: "
        f"{result['preprocess_seconds']:.2f} s"
    )
