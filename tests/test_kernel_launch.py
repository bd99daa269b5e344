"""Which twin of a compiled kernel runs (``dynid.dynamics._launch``), and that both twins give
the same numbers."""

from __future__ import annotations

import os
import subprocess
import sys

import numba
import numpy as np
import pytest
from conftest import random_states, random_table_robot

from dynid.dynamics import _kernels, _launch, mass_matrix, regressor, rnea
from dynid.dynamics._chain import chain_arrays
from dynid.robot import load_robot


@pytest.mark.parametrize("n_samples", [1, 255, 257, 1000])
@pytest.mark.parametrize("convention", ["mdh", "dh"])
def test_serial_and_parallel_kernels_agree_bit_for_bit(convention, n_samples):
    """One per-sample implementation behind both: the same floating-point operations."""
    rng = np.random.default_rng(n_samples)
    robot = random_table_robot(rng, convention, 6)
    chain = chain_arrays(robot)
    q, dq, ddq = random_states(rng, n_samples, 6)
    pi, gravity = np.array(robot.parameters), np.array(robot.gravity)
    for name, arguments, shape in [
        ("rnea", (*chain, pi, q, dq, ddq, gravity), (n_samples, 6)),
        ("regressor", (*chain, q, dq, ddq, gravity), (n_samples, 6, 60)),
        ("mass_matrix", (*chain, pi, q), (n_samples, 6, 6)),
    ]:
        serial, parallel = np.full(shape, np.nan), np.full(shape, np.nan)
        getattr(_kernels, f"{name}_serial")(*arguments, serial)
        getattr(_kernels, name)(*arguments, parallel)
        assert np.isfinite(serial).all(), name
        assert np.array_equal(serial, parallel), name


class _Spy:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, *arguments) -> None:
        self.calls += 1


def _launched(n_samples: int) -> str:
    serial, parallel = _Spy(), _Spy()
    _launch.launch(serial, parallel, n_samples)
    assert serial.calls + parallel.calls == 1
    return "serial" if serial.calls else "parallel"


def test_small_batches_run_serially(monkeypatch):
    monkeypatch.setattr(_launch, "usable_cpus", lambda: 64)
    threshold = _launch.PARALLEL_MIN_SAMPLES
    assert _launched(1) == _launched(threshold - 1) == "serial"
    if numba.get_num_threads() > 1:
        assert _launched(threshold) == "parallel"


def test_one_usable_cpu_runs_serially(monkeypatch):
    monkeypatch.setattr(_launch, "usable_cpus", lambda: 1)
    assert _launched(10 * _launch.PARALLEL_MIN_SAMPLES) == "serial"


def test_one_numba_thread_runs_serially(monkeypatch):
    monkeypatch.setattr(_launch, "usable_cpus", lambda: 64)
    before = numba.get_num_threads()
    numba.set_num_threads(1)  # as a process-pool worker does (dynid._parallel)
    try:
        assert _launched(10 * _launch.PARALLEL_MIN_SAMPLES) == "serial"
    finally:
        numba.set_num_threads(before)


def test_parallel_kernels_use_at_most_the_usable_cpus():
    """numba allowed 3 threads, the process 2 CPUs: the kernel runs on 2, and the caller's
    setting is put back (in a child process: numba's thread count is fixed at its start)."""
    script = (
        "import numba\n"
        "from dynid.dynamics import _launch\n"
        "_launch.usable_cpus = lambda: 2\n"
        "seen = []\n"
        "_launch.launch(None, lambda: seen.append(numba.get_num_threads()),\n"
        "               _launch.PARALLEL_MIN_SAMPLES)\n"
        "print(numba.config.NUMBA_NUM_THREADS, seen, numba.get_num_threads())\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True, env={**os.environ, "NUMBA_NUM_THREADS": "3"})
    assert result.stdout.split() == ["3", "[2]", "3"]


def test_capped_parallel_kernels_give_the_same_numbers(monkeypatch):
    robot = load_robot("panda")
    rng = np.random.default_rng(1)
    q, dq, ddq = random_states(rng, _launch.PARALLEL_MIN_SAMPLES + 3, 7)
    expected = [rnea(robot, q, dq, ddq), regressor(robot, q, dq, ddq), mass_matrix(robot, q)]
    monkeypatch.setattr(_launch, "usable_cpus", lambda: 1)
    got = [rnea(robot, q, dq, ddq), regressor(robot, q, dq, ddq), mass_matrix(robot, q)]
    for a, b in zip(got, expected, strict=True):
        assert np.array_equal(a, b)


def test_small_batches_never_start_numba_threads():
    """A one-sample call (the open loop's tail, a controller evaluating one state) leaves the
    thread pool unstarted: nothing to wait for on a busy machine."""
    script = (
        "import numpy as np\n"
        "import numba.np.ufunc.parallel as pool\n"
        "from dynid.dynamics import forward_dynamics, mass_matrix, regressor, rnea\n"
        "from dynid.robot import load_robot\n"
        "robot = load_robot('panda')\n"
        "q = np.full((10, 7), 0.3)\n"
        "rnea(robot, q, q, q); regressor(robot, q, q, q); mass_matrix(robot, q)\n"
        "forward_dynamics(robot, q[0], q[0], q[0])\n"
        "print(pool._is_initialized)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "False"
