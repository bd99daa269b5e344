"""The scale suite of ``dynid bench`` (issue 13's targets), each figure measured in the same
run:

- the closed-loop twin (Panda, 1 kHz, joint impedance) on one compiled-kernel thread:
  simulated seconds per wall second, idle and beside one busy-looping process per CPU;
- identification of a log longer than memory, streamed from a memory-mapped NPZ the twin wrote
  piece by piece, locally and on a Dask LocalCluster of 2 workers. It runs in a fresh
  (spawned) process, so its peak resident memory (RSS, from ``getrusage``: everything the
  process held, the imported libraries and the mapped pages included) is its own, not the
  writer's; the figure before the fit (the imports) is reported beside it;
- the excitation design (10 harmonics, 20 s, seed 1), ``dynid demo`` end to end, and the
  regressor and RNEA against pinocchio at 10^5 samples.
"""

from __future__ import annotations

import multiprocessing
import resource
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

__all__ = [
    "closed_loop_bench",
    "run",
    "run_scale_bench",
    "summary",
    "write_twin_log",
]

# samples per piece the twin writes (one piece in memory at a time)
_PIECE = 200_000


def _closed_loop_run(task: tuple[float, int | None]) -> tuple[float, int]:
    """In a fresh process with one compiled-kernel thread: the wall time of ``seconds`` of the
    Panda's closed-loop twin at 1 kHz under joint impedance (the demo's loop) with ``substeps``
    RK4 steps per period (None: the twin's choice), and the substeps taken."""
    seconds, substeps = task
    import numba

    from dynid.excitation.optimize import random_fourier
    from dynid.robot import load_robot
    from dynid.simulate import SensorModel, simulate_closed_loop
    from dynid.workflow.demo import DAMPING, ENCODER_RESOLUTION, STIFFNESS

    numba.set_num_threads(1)
    robot = load_robot("panda")
    trajectory = random_fourier(robot, seed=0)
    # the demo's loop: Franka's joint-impedance gains on the CAD model, 20-bit encoders
    loop = {"stiffness": STIFFNESS, "damping": DAMPING, "controller": load_robot("panda-cad"),
            "sensor": SensorModel(torque_noise_std=0.1, position_resolution=ENCODER_RESOLUTION,
                                  velocity_from_positions=True)}
    loop["substeps"] = substeps
    simulate_closed_loop(robot, trajectory, duration=0.05, rate=1000.0, **loop)  # compile
    start = time.perf_counter()
    log = simulate_closed_loop(robot, trajectory, duration=seconds, rate=1000.0, **loop)
    return time.perf_counter() - start, log.metadata["rk4_substeps"]


def _busy() -> None:
    while True:
        pass


def closed_loop_bench(seconds: float = 10.0) -> dict:
    """Simulated seconds per wall second of the Panda's closed-loop twin on one thread, idle,
    and the slowdown with one busy-looping process per usable CPU beside it; at the twin's
    own RK4 substeps (``closed_loop_substeps``), and idle at two (the default before the twin
    chose them: ``closed_loop_realtime_factor_2_substeps``)."""
    from dynid._parallel import usable_cpus

    context = multiprocessing.get_context("spawn")
    with context.Pool(1) as pool:
        idle, substeps = pool.map(_closed_loop_run, [(seconds, None)])[0]
        two, _ = pool.map(_closed_loop_run, [(seconds, 2)])[0]
        busy = [context.Process(target=_busy, daemon=True) for _ in range(usable_cpus())]
        for process in busy:
            process.start()
        try:
            loaded, _ = pool.map(_closed_loop_run, [(seconds, None)])[0]
        finally:
            for process in busy:
                process.terminate()
                process.join()
    return {"closed_loop_realtime_factor": seconds / idle,
            "closed_loop_substeps": substeps,
            "closed_loop_realtime_factor_2_substeps": seconds / two,
            "closed_loop_busy_realtime_factor": seconds / loaded,
            "closed_loop_busy_slowdown": loaded / idle}


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


def _check_disk(n_samples: int, n_joints: int, folder: str | Path | None) -> None:
    """A ValueError before any work when the streamed log would not fit on the disk: t and
    q, dq, ddq, tau in float64, and as much again while its pieces are packed."""
    where = folder or tempfile.gettempdir()
    needed = 2 * 8 * n_samples * (1 + 4 * n_joints)
    free = shutil.disk_usage(where).free
    if needed > free:
        raise ValueError(f"`n_samples`: {n_samples} samples need about {needed / 2**30:.1f} GiB "
                         f"of disk in {where}, {free / 2**30:.1f} GiB are free (give another "
                         "folder or fewer samples)")


def run_scale_bench(*, robot: str = "panda", n_samples: int = 10_000_000, seed: int = 0,
                    folder: str | Path | None = None, dask: bool = True,
                    progress: Callable[[str], None] | None = None) -> dict:
    """Streaming identification of ``n_samples`` twin samples (1 kHz) from a memory-mapped
    NPZ written in ``folder`` (default a temporary folder, removed after); with ``dask``, the
    same on a Dask LocalCluster of 2 workers (``dask_max_abs_difference``: the largest
    coefficient difference over the largest coefficient)."""
    from dynid.robot import load_robot

    say = progress or (lambda _line: None)
    model_robot = load_robot(robot)
    _check_disk(n_samples, model_robot.n_joints, folder)
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
        result = {"robot": model_robot.name, "streaming_samples": n_samples,
                  "streaming_seconds": local["seconds"],
                  "streaming_peak_memory_mb": local["rss_peak_mb"],
                  "streaming_memory_before_fit_mb": local["rss_before_mb"],
                  "streaming_memory_measure": "peak RSS of the identifying process (imports "
                                              "and resident mapped pages included)",
                  "streaming_relative_error_percent": local["relative_error_percent"]}
        if dask:
            result.update(_on_dask(path, model_robot, local["coefficients"], say))
        return result


def _warm(path: str, robot_name: str) -> None:
    from dynid.data import read_dataset
    from dynid.identification import identify
    from dynid.robot import load_robot

    identify(load_robot(robot_name), read_dataset(path, mmap=True, rows=slice(0, 5000)))


def _on_dask(path: Path, robot, coefficients, say) -> dict:
    """The same identification on a LocalCluster of 2 workers (one thread each)."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        say("dask: not installed (pip install 'dynid[dask]'), skipped")
        return {}
    from dynid.data import read_dataset
    from dynid.identification import identify

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        data = read_dataset(path, mmap=True)
        client.run(_warm, str(path), robot.name)  # every worker imports and compiles first
        start = time.perf_counter()
        model = identify(robot, data, client=client)
        seconds = time.perf_counter() - start
    difference = float(np.abs(model.coefficients - coefficients).max()
                       / np.abs(coefficients).max())
    say(f"on a LocalCluster of 2 workers: {seconds:.1f} s, largest difference from the local "
        f"coefficients {difference:.2g} (relative)")
    return {"dask_seconds": seconds, "dask_max_abs_difference": difference}


def _closed_loop_line(result: dict) -> str:
    return (f"closed-loop twin (Panda, 1 kHz, joint impedance, one thread): "
            f"{result['closed_loop_realtime_factor']:.0f}x real time at its "
            f"{result['closed_loop_substeps']} RK4 step(s) per period "
            f"({result['closed_loop_realtime_factor_2_substeps']:.0f}x at 2); "
            f"{result['closed_loop_busy_slowdown']:.2f}x slower beside a busy process per CPU")


def summary(result: dict) -> str:
    lines = []
    if "closed_loop_realtime_factor" in result:
        lines.append(_closed_loop_line(result))
    lines.append(f"streaming OLS of {result['robot']}, {result['streaming_samples']} samples "
                 f"memory-mapped: {result['streaming_seconds']:.1f} s, peak RSS "
                 f"{result['streaming_peak_memory_mb']:.0f} MB "
                 f"({result['streaming_memory_before_fit_mb']:.0f} MB before the fit)")
    if "dask_seconds" in result:
        lines.append(f"on a Dask LocalCluster of 2 workers: {result['dask_seconds']:.1f} s, "
                     f"coefficients within {result['dask_max_abs_difference']:.2g} (relative)")
    if "excitation_seconds" in result:
        lines.append(f"excitation design (10 harmonics, 20 s, seed 1): cond "
                     f"{result['excitation_condition_number']:.4g} in "
                     f"{result['excitation_seconds']:.1f} s")
        lines.append(f"dynid demo: {result['demo_seconds']:.1f} s")
        lines.append(f"regressor {result['regressor_speedup']:.1f}x, RNEA "
                     f"{result['rnea_speedup']:.1f}x pinocchio at 10^5 samples")
    return "\n".join(lines)


def run(*, n_samples: int = 10_000_000, folder: str | Path | None = None,
        progress: Callable[[str], None] | None = None) -> dict:
    """Every figure of the module docstring, measured in this run."""
    from dynid.bench.dynamics import run as run_dynamics
    from dynid.excitation.optimize import optimize_excitation
    from dynid.robot import load_robot
    from dynid.workflow.demo import run_demo

    say = progress or (lambda _line: None)
    _check_disk(n_samples, load_robot("panda").n_joints, folder)
    result = closed_loop_bench()
    say(_closed_loop_line(result))
    result.update(run_scale_bench(n_samples=n_samples, folder=folder, progress=progress))
    start = time.perf_counter()
    excitation = optimize_excitation(load_robot("panda"), harmonics=10, period=20.0, seed=1)
    result["excitation_seconds"] = time.perf_counter() - start
    result["excitation_condition_number"] = float(excitation.condition_number)
    say(f"excitation design: cond {excitation.condition_number:.4g} in "
        f"{result['excitation_seconds']:.1f} s")
    with tempfile.TemporaryDirectory(dir=folder, prefix="dynid-demo-") as work:
        start = time.perf_counter()
        run_demo(output=Path(work) / "demo")
        result["demo_seconds"] = time.perf_counter() - start
    say(f"dynid demo: {result['demo_seconds']:.1f} s")
    dynamics = run_dynamics(sizes=(100_000,), repeat=3)
    result["regressor_speedup"] = dynamics["regressor_speedup"]
    result["rnea_speedup"] = dynamics["rnea_speedup"]
    say(f"regressor {dynamics['regressor_speedup']:.1f}x and RNEA "
        f"{dynamics['rnea_speedup']:.1f}x pinocchio at 10^5 samples")
    return result
