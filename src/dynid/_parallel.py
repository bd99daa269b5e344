"""Independent tasks through a ``concurrent.futures.Executor``: local processes by default, any
cluster's executor (Dask, Ray) from Python. Each task runs with one BLAS thread and one
compiled-kernel thread (the workers share the cores); the first failure (or Ctrl-C) cancels
what has not started and stops the local workers that are running; workers ignore Ctrl-C and
leave it to the parent."""

from __future__ import annotations

import functools
import multiprocessing
import os
import signal
from collections.abc import Callable, Iterable
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed


def usable_cpus() -> int:
    """The CPUs this process may run on (affinity and container limits), at least one."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _one_blas_thread(function: Callable, task):
    import numba
    from threadpoolctl import threadpool_limits

    numba.set_num_threads(1)  # the compiled kernels too: the workers share the cores
    with threadpool_limits(limits=1):
        return function(task)


def _ignore_interrupts() -> None:
    """Workers leave Ctrl-C to the parent (which stops them): no worker tracebacks."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def run_parallel(function: Callable, tasks: Iterable, *, executor: Executor | None = None,
                 on_result: Callable | None = None, max_workers: int | None = None) -> list:
    """``function(task)`` for every task (``function`` a module-level function, picklable);
    the results in completion order, each also passed to ``on_result`` as it arrives.
    ``max_workers``: at most this many local processes (default: the usable CPUs)."""
    tasks = list(tasks)
    own = executor is None
    before = set(multiprocessing.active_children())
    # spawned, not forked: a fork after the compiled kernels have run their OpenMP threads is
    # unsafe (GNU OpenMP aborts the child)
    pool = ProcessPoolExecutor(max_workers=max(1, min(len(tasks), max_workers or usable_cpus())),
                               mp_context=multiprocessing.get_context("spawn"),
                               initializer=_ignore_interrupts) if own else executor
    results, futures = [], []
    finished = False
    try:
        futures = [pool.submit(functools.partial(_one_blas_thread, function), task)
                   for task in tasks]
        for future in as_completed(futures):
            result = future.result()
            results.append(result)
            if on_result is not None:
                on_result(result)
        finished = True
    finally:
        if own and not finished:
            # a failure or Ctrl-C: stop the running tasks too, not wait. The futures are not
            # cancelled first: Python 3.11's pool then marks the cancelled ones failed when its
            # workers die and prints InvalidStateError (CPython gh-107219)
            for worker in set(multiprocessing.active_children()) - before:
                worker.terminate()
            pool.shutdown(wait=False)
        else:
            for future in futures:
                future.cancel()
            if own:
                pool.shutdown(wait=True, cancel_futures=True)
    return results
