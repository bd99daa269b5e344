"""Which twin of a compiled kernel runs a batch: serial, or parallel on at most the usable CPUs.

Every batched kernel in ``_kernels`` has a parallel form (``prange`` over chunks of samples) and
a serial twin (the same per-sample function on the calling thread). ``launch`` picks:

- the serial twin below ``PARALLEL_MIN_SAMPLES`` samples (see there);
- the serial twin when only one thread may run: a process-pool worker sets one
  (``dynid._parallel``), as do ``NUMBA_NUM_THREADS=1`` and an affinity of one CPU;
- otherwise the parallel form on ``min(numba.get_num_threads(), usable_cpus())`` threads, so a
  process restricted by ``taskset`` or a container's CPU set never oversubscribes its CPUs
  (numba's setting is per calling thread, and put back afterwards).

Small batches never start numba's thread pool at all.
"""

from __future__ import annotations

from collections.abc import Callable

from dynid._parallel import usable_cpus

# Samples below which the serial twin runs. Measured on the 2-core workplace machine (AMD EPYC,
# Panda, numba 0.68, OpenMP layer): idle, two threads beat one from about 500 samples (1.1-2x at
# 500, 1.75-2x from 1000 on). But a parallel launch waits until every worker thread is
# scheduled: with one busy process per core beside it, each launch waited 8-12 ms (one sample:
# 8-12 ms in parallel, 0.002 ms serially; 1000 samples: 12 ms against 0.8 ms), and parallel
# broke even only near 4096 samples (rnea 0.7x, regressor 1.5x) and paid at 10^5 (1.3x). At
# 4096 an idle machine gives up at most about 1 ms per call, a busy one saves about 10 ms.
PARALLEL_MIN_SAMPLES = 4096


def launch(serial: Callable, parallel: Callable, n_samples: int, *args):
    """``serial(*args)`` or ``parallel(*args)`` for a batch of ``n_samples`` (see module): what
    the kernel returns."""
    if n_samples < PARALLEL_MIN_SAMPLES:
        return serial(*args)
    import numba

    allowed = numba.get_num_threads()
    wanted = min(allowed, usable_cpus())
    if wanted <= 1:
        return serial(*args)
    if wanted < allowed:
        numba.set_num_threads(wanted)  # numba's setting is per calling thread: put it back
    try:
        return parallel(*args)
    finally:
        if wanted < allowed:
            numba.set_num_threads(allowed)
