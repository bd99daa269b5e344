"""Benchmark of the generated C: ns per call of the Panda's inverse dynamics and M(q), beside
pinocchio's ``rnea`` and ``crba`` called from Python.

The model is the Panda's (its link parameters as the identified coefficients, the sigmoid
friction of Gaz et al. fitted on top: the structure of their published controller model). The
generated code is compiled with the system C compiler (``cc -O2``) together with a small
driver that calls each function ``calls`` times on a ring of 1024 random states and times the
loop with ``clock_gettime`` (one core, one thread); the best of ``repeat`` loops counts.
Pinocchio is timed per call from a Python loop over the same states (best of ``repeat``):
what a Python controller would pay. Not part of the API (``dynid bench`` reports it).
"""

from __future__ import annotations

import ctypes
import platform
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

__all__ = ["run", "summary"]

_FUNCTIONS = ("inverse_dynamics", "mass_matrix", "gravity", "coriolis", "coriolis_matrix")

_DRIVER = r"""
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "panda.h"

#define RING 1024
#define N PANDA_NQ
static double q[RING][N], dq[RING][N], ddq[RING][N];

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    long calls = argc > 1 ? atol(argv[1]) : 100000;
    int repeat = argc > 2 ? atoi(argv[2]) : 5;
    unsigned long state = 12345u;
    double out[N * N], sink = 0.0, elapsed;
    int k, r;
    for (k = 0; k < RING * N; k++) {  /* uniform in [-pi, pi): a linear congruential draw */
        state = state * 6364136223846793005ul + 1442695040888963407ul;
        (&q[0][0])[k] = ((double)(state >> 11) / 9007199254740992.0 - 0.5) * 6.283185307179586;
        state = state * 6364136223846793005ul + 1442695040888963407ul;
        (&dq[0][0])[k] = ((double)(state >> 11) / 9007199254740992.0 - 0.5) * 4.0;
        state = state * 6364136223846793005ul + 1442695040888963407ul;
        (&ddq[0][0])[k] = ((double)(state >> 11) / 9007199254740992.0 - 0.5) * 20.0;
    }
#define TIME(NAME, CALL)                                                   \
    do {                                                                   \
        double best = 1e300;                                               \
        for (r = 0; r < repeat; r++) {                                     \
            long c;                                                        \
            double start = now();                                          \
            for (c = 0; c < calls; c++) {                                  \
                const int s = (int)(c & (RING - 1));                       \
                CALL;                                                      \
                sink += out[c % N];                                        \
            }                                                              \
            elapsed = (now() - start) / (double)calls;                     \
            if (elapsed < best)                                            \
                best = elapsed;                                            \
        }                                                                  \
        printf("%s %.6f\n", NAME, best);                                   \
    } while (0)
    TIME("inverse_dynamics", panda_inverse_dynamics(q[s], dq[s], ddq[s], NULL, out));
    TIME("mass_matrix", panda_mass_matrix(q[s], out));
    TIME("gravity", panda_gravity(q[s], out));
    TIME("coriolis", panda_coriolis(q[s], dq[s], out));
    TIME("coriolis_matrix", panda_coriolis_matrix(q[s], dq[s], out));
    printf("sink %g\n", sink);
    return 0;
}
"""


def panda_model():
    """The Panda as an identified model: its link parameters as the coefficients, Gaz et
    al.'s sigmoid friction fitted on top."""
    import dataclasses

    from dynid.identification.linear.idim import robot_model
    from dynid.robot import load_robot

    return dataclasses.replace(robot_model(load_robot("panda")),
                               report={"method": "panda parameters (bench)"})


def _run(command: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(command, check=True, capture_output=True, text=True)


def _best_ns(loop, calls: int, repeat: int) -> float:
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        loop()
        best = min(best, time.perf_counter() - start)
    return 1e9 * best / calls


def _ctypes_loops(library, q, dq, ddq, calls: int, repeat: int) -> dict:
    """The generated functions called from Python through ctypes, per call: the price of the
    Python-to-C call included, as pinocchio's from Python."""
    pointer = ctypes.c_void_p
    inverse, mass = library.panda_inverse_dynamics, library.panda_mass_matrix
    inverse.argtypes = [pointer] * 5
    mass.argtypes = [pointer] * 2
    inverse.restype = mass.restype = None
    rows = [tuple(a[k].ctypes.data for a in (q, dq, ddq)) for k in range(len(q))]
    tau, matrix = np.empty(7), np.empty(49)
    tau_p, matrix_p = tau.ctypes.data, matrix.ctypes.data

    def inverse_loop():
        for k in range(calls):
            a, b, c = rows[k & 1023]
            inverse(a, b, c, None, tau_p)

    def mass_loop():
        for k in range(calls):
            mass(rows[k & 1023][0], matrix_p)

    return {"codegen_inverse_dynamics_ctypes_ns": _best_ns(inverse_loop, calls, repeat),
            "codegen_mass_matrix_ctypes_ns": _best_ns(mass_loop, calls, repeat)}


def run(*, calls: int = 200_000, repeat: int = 5, pinocchio_calls: int = 20_000,
        compiler: str = "cc", progress: Callable[[str], None] | None = None) -> dict:
    """ns per call of the generated Panda functions (a C loop) and of pinocchio's ``rnea`` and
    ``crba`` from a Python loop; ValueError when there is no C compiler."""
    import pinocchio as pin

    from dynid.codegen import generate
    from dynid.robot import to_pinocchio

    if not isinstance(calls, int) or not isinstance(pinocchio_calls, int) or calls < 1 \
            or pinocchio_calls < 1 or not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"`calls`, `pinocchio_calls` and `repeat` must be integers >= 1, got "
                         f"{calls!r}, {pinocchio_calls!r}, {repeat!r}")
    cc = shutil.which(compiler)
    if cc is None:
        raise ValueError(f"`compiler`: no C compiler {compiler!r} on PATH (the generated code "
                         "is timed compiled)")
    say = progress or (lambda _line: None)
    model = panda_model()
    with tempfile.TemporaryDirectory(prefix="dynid-codegen-bench-") as folder:
        root = Path(folder)
        generate(model, root / "panda.h", prefix="panda")
        (root / "driver.c").write_text(_DRIVER)
        start = time.perf_counter()  # one compilation: the driver and ctypes share it
        _run([cc, "-O2", "-std=c99", "-fPIC", "-c", str(root / "panda.c"), "-o",
              str(root / "panda.o")])
        compile_seconds = time.perf_counter() - start
        say(f"generated and compiled the Panda's C in {compile_seconds:.1f} s")
        _run([cc, "-O2", "-std=c99", "-o", str(root / "bench"), str(root / "driver.c"),
              str(root / "panda.o"), "-lm"])
        _run([cc, "-shared", "-o", str(root / "libpanda.so"), str(root / "panda.o"), "-lm"])
        done = _run([str(root / "bench"), str(calls), str(repeat)])
        version = subprocess.run([cc, "--version"], capture_output=True, text=True
                                 ).stdout.splitlines()[:1]
        timed = dict(line.split() for line in done.stdout.splitlines())
        result = {f"codegen_{name}_ns": float(timed[name]) for name in _FUNCTIONS}

        rng = np.random.default_rng(0)
        q = rng.uniform(-np.pi, np.pi, (1024, 7))
        dq, ddq = rng.uniform(-2, 2, (1024, 7)), rng.uniform(-10, 10, (1024, 7))
        library = ctypes.CDLL(str(root / "libpanda.so"))
        result.update(_ctypes_loops(library, q, dq, ddq, pinocchio_calls, repeat))
        del library

    pin_model = to_pinocchio(model.robot)
    data = pin_model.createData()

    def rnea_loop():
        for k in range(pinocchio_calls):
            s = k & 1023
            pin.rnea(pin_model, data, q[s], dq[s], ddq[s])

    def crba_loop():
        for k in range(pinocchio_calls):
            pin.crba(pin_model, data, q[k & 1023])

    say("timing pinocchio from Python")
    for name, loop in (("rnea", rnea_loop), ("crba", crba_loop)):
        result[f"pinocchio_{name}_python_ns"] = _best_ns(loop, pinocchio_calls, repeat)
    result.update({
        "calls": calls, "pinocchio_calls": pinocchio_calls, "repeat": repeat,
        "compile_seconds": compile_seconds, "compiler": (version or [cc])[0],
        "machine": {"cpu": platform.processor() or platform.machine(),
                    "python": platform.python_version(), "pinocchio": pin.__version__},
        "target_ns": 2000.0,
    })
    return result


def summary(result: dict) -> str:
    """Lines for ``dynid bench``."""
    return "\n".join([
        f"generated C (Panda, {result['compiler']}, -O2, one core), ns per call:",
        f"  inverse dynamics {result['codegen_inverse_dynamics_ns']:8.1f}   "
        f"(pinocchio rnea from Python {result['pinocchio_rnea_python_ns']:8.1f})",
        f"  M(q)             {result['codegen_mass_matrix_ns']:8.1f}   "
        f"(pinocchio crba from Python {result['pinocchio_crba_python_ns']:8.1f})",
        f"  through ctypes from Python: inverse dynamics "
        f"{result['codegen_inverse_dynamics_ctypes_ns']:.1f}, M(q) "
        f"{result['codegen_mass_matrix_ctypes_ns']:.1f}",
        f"  g(q) {result['codegen_gravity_ns']:.1f}, c(q, dq) "
        f"{result['codegen_coriolis_ns']:.1f}, C(q, dq) "
        f"{result['codegen_coriolis_matrix_ns']:.1f}; target <= {result['target_ns']:.0f}",
    ])
