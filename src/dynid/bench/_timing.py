"""What the suites share: best-of-n wall time, peak memory, and the twin's log they time."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable

import numpy as np


def best_time(function: Callable[[], object], repeat: int, *,
              clock: Callable[[], float] = time.perf_counter) -> float:
    """The least time of ``repeat`` calls of ``function`` by ``clock`` [s] (wall by default;
    ``time.process_time``: this process's CPU, steadier on a shared machine)."""
    best = np.inf
    for _ in range(repeat):
        start = clock()
        function()
        best = min(best, clock() - start)
    return best


def timed(function: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Best wall time over ``repeat`` runs, and the peak traced memory of one more run [MB]."""
    seconds = best_time(function, repeat)
    tracemalloc.start()
    function()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return seconds, peak / 2**20


def twin_log(model_robot, n_samples: int, seed: int):
    """``n_samples`` of the twin at 1 kHz on a random Fourier trajectory, 0.1 N m noise."""
    from dynid.excitation.optimize import random_fourier
    from dynid.simulate.twin import SensorModel, simulate_open_loop

    return simulate_open_loop(model_robot, random_fourier(model_robot, seed=seed),
                              duration=(n_samples - 1) / 1000.0, rate=1000.0,
                              sensor=SensorModel(torque_noise_std=0.1), seed=seed)
