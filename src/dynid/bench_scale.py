"""The scale suite of ``dynid bench``: identification of a log longer than memory, streamed
from a memory-mapped NPZ the twin wrote piece by piece.

The identification runs in a fresh (spawned) process, so its peak resident memory (RSS, from
``getrusage``: everything the process held, the imported libraries and the mapped pages
included) is its own, not the writer's; the figure before the fit (the imports) is reported
beside it.
"""

from __future__ import annotations

import multiprocessing
import resource
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

__all__ = ["format_scale", "run_scale_bench", "write_twin_log"]

# samples per piece the twin writes (one piece in memory at a time)
_PIECE = 200_000


def write_twin_log(path: str | Path, robot, n_samples: int, *, rate: float = 1000.0,
                   noise: float = 0.1, seed: int = 0) -> Path:
    """``n_samples`` of the open-loop twin of ``robot`` on a random Fourier trajectory
    (``noise`` N m), written as an uncompressed NPZ one piece at a time (any length)."""
    from dynid.data import Dataset, write_log_pieces
    from dynid.dynamics import rnea
    from dynid.excitation.optimize import random_fourier

    trajectory = random_fourier(robot, seed=seed)
    n = robot.n_joints

    def pieces() -> Iterator[Dataset]:
        for k, start in enumerate(range(0, n_samples, _PIECE)):
            t = np.arange(start, min(start + _PIECE, n_samples)) / rate
            q, dq, ddq = trajectory.sample(t)
            tau = rnea(robot, q, dq, ddq) + robot.friction.torque(dq)
            tau += noise * np.random.default_rng([seed, k]).standard_normal((t.size, n))
            yield Dataset(t=t, q=q, dq=dq, ddq=ddq, tau=tau)

    return write_log_pieces(path, pieces())


def _identify_mapped(task: tuple[str, str]) -> dict:
    """In a fresh process: OLS (viscous + Coulomb + offset friction) on the mapped log."""
    path, robot_name = task
    from dynid.data import read_dataset
    from dynid.identification import identify
    from dynid.robot import load_robot

    robot = load_robot(robot_name)
    identify(robot, read_dataset(path, mmap=True).select(slice(0, 5000)))  # compile, warm
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    model = identify(robot, read_dataset(path, mmap=True))
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "coefficients": model.coefficients,
            "relative_error_percent": model.report["relative_error_percent"],
            "rss_before_mb": before,
            "rss_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def run_scale_bench(*, robot: str = "panda", n_samples: int = 10_000_000, seed: int = 0,
                    folder: str | Path | None = None,
                    progress: Callable[[str], None] | None = None) -> dict:
    """Streaming identification of ``n_samples`` twin samples (1 kHz) from a memory-mapped
    NPZ written in ``folder`` (default a temporary folder, removed after)."""
    from dynid.robot import load_robot

    say = progress or (lambda _line: None)
    model_robot = load_robot(robot)
    with tempfile.TemporaryDirectory(dir=folder, prefix="dynid-scale-") as work:
        path = Path(work) / "twin.npz"
        start = time.perf_counter()
        write_twin_log(path, model_robot, n_samples, seed=seed)
        say(f"twin log of {n_samples} samples written in {time.perf_counter() - start:.1f} s "
            f"({path.stat().st_size / 2**30:.2f} GiB)")
        context = multiprocessing.get_context("spawn")
        with context.Pool(1) as pool:
            local = pool.map(_identify_mapped, [(str(path), robot)])[0]
        say(f"streaming OLS of {n_samples} samples: {local['seconds']:.1f} s, peak RSS "
            f"{local['rss_peak_mb']:.0f} MB ({local['rss_before_mb']:.0f} MB before the fit)")
        return {"robot": model_robot.name, "streaming_samples": n_samples,
                "streaming_seconds": local["seconds"],
                "streaming_peak_memory_mb": local["rss_peak_mb"],
                "streaming_memory_before_fit_mb": local["rss_before_mb"],
                "streaming_memory_measure": "peak RSS of the identifying process (imports "
                                            "and resident mapped pages included)",
                "streaming_relative_error_percent": local["relative_error_percent"]}


def format_scale(result: dict) -> str:
    return (f"streaming OLS of {result['robot']}, {result['streaming_samples']} samples "
            f"memory-mapped: {result['streaming_seconds']:.1f} s, peak RSS "
            f"{result['streaming_peak_memory_mb']:.0f} MB "
            f"({result['streaming_memory_before_fit_mb']:.0f} MB before the fit)")
