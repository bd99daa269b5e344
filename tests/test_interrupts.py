"""Ctrl-C and determinism, on real `dynid` processes.

SIGINT sent to a running command (the optimiser of `excite`, the workers of `retrieve --method
penalty` and `compare`, the fit of `identify --method nls`) ends it with status 130 and one
line, no partial output, no temporary file and no process left behind. The same command with
the same seed writes byte-identical files.

The interrupt does not come after a guessed number of seconds: it comes as soon as the command
has printed its first progress line of the work (so it is past start-up, inside the work), and
the work left after that line is many times the work done before it, whatever the machine
(999 of 1000 optimiser starts, 199 of 200 penalty runs, a whole NLS fit of 10,000 samples with
no evaluation budget, a compare with an NLS fit of 10,000 samples still to run).
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import default_signals

from dynid.data import write_dataset
from dynid.excitation import FourierTrajectory
from dynid.identification import identify
from dynid.model import save_model
from dynid.robot import load_robot
from dynid.simulate import simulate_open_loop

DYNID = str(Path(sys.executable).parent / "dynid")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("inputs")
    rng = np.random.default_rng(1)
    paths = {}
    for name, robot_name in (("arm3", "arm3"), ("panda", "panda")):
        robot = load_robot(robot_name)
        n = robot.n_joints
        trajectory = FourierTrajectory(a=0.3 * rng.standard_normal((n, 3)),
                                       b=0.3 * rng.standard_normal((n, 3)), q0=np.zeros(n),
                                       omega_f=2 * np.pi / 10.0)
        data = simulate_open_loop(robot, trajectory, duration=10.0, rate=100.0)
        for k in (1, 2):  # two logs, for compare (each identifies, the other validates)
            write_dataset(folder / f"{name}-{k}.csv", data)
        save_model(identify(robot, data), folder / f"{name}-model.yaml")
        paths[name] = folder / f"{name}-1.csv"
        paths[f"{name}-2"] = folder / f"{name}-2.csv"
        paths[f"{name}-model"] = folder / f"{name}-model.yaml"
        if name == "panda":  # 10,000 samples: an NLS fit long by its input, on any machine
            long = simulate_open_loop(robot, trajectory, duration=10.0 - 1e-3, rate=1000.0)
            assert len(long.t) == 10_000
            for k in (1, 2):
                write_dataset(folder / f"panda-long-{k}.csv", long)
                paths[f"panda-long-{k}"] = folder / f"panda-long-{k}.csv"
    return paths


def _session_processes(session: int) -> list[int]:
    """The processes still in the session the command started."""
    left = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == session and fields[0] != "Z":
                left.append(int(entry.name))
    return left


# waits with these limits only catch a hang (a command that never starts its work, or never
# stops after Ctrl-C); no outcome depends on how fast this machine is
STARTED_WITHIN_S = 600
STOPPED_WITHIN_S = 120


def _pump(stream, lines: queue.Queue) -> None:
    """Every line of ``stream`` into ``lines``, then None at its end."""
    for line in stream:
        lines.put(line)
    lines.put(None)


def interrupt(argv: list[str], folder: Path, *, started: str) -> tuple[int, str]:
    """Run ``dynid argv`` in its own session in ``folder``, SIGINT it as soon as a stderr line
    matches ``started`` (a progress line: the work has begun), and return (status, stderr)."""
    process = subprocess.Popen([DYNID, *argv], cwd=folder, stderr=subprocess.PIPE,
                               stdout=subprocess.DEVNULL, text=True, start_new_session=True,
                               preexec_fn=default_signals)  # a background run's SIGINT too
    lines: queue.Queue = queue.Queue()
    reader = threading.Thread(target=_pump, args=(process.stderr, lines), daemon=True)
    reader.start()
    err: list[str] = []
    try:
        while not (err and re.search(started, err[-1])):
            line = lines.get(timeout=STARTED_WITHIN_S)
            assert line is not None, f"finished before its work began: {''.join(err)}"
            err.append(line)
    except queue.Empty:
        os.killpg(process.pid, signal.SIGKILL)
        pytest.fail(f"`dynid {' '.join(argv)}` printed no {started!r} line within "
                    f"{STARTED_WITHIN_S} s (a hang)")
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=STOPPED_WITHIN_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        pytest.fail(f"`dynid {' '.join(argv)}` did not stop within {STOPPED_WITHIN_S} s of "
                    "Ctrl-C")
    reader.join()
    err.extend(line for line in iter(lines.get, None))
    deadline = time.monotonic() + STOPPED_WITHIN_S  # workers end after their parent
    while _session_processes(process.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = _session_processes(process.pid)
    if left:
        os.killpg(process.pid, signal.SIGKILL)
    assert not left, f"processes left behind: {left}"
    return process.returncode, "".join(err)


# each command's first progress line of the work, and work many times larger still to come
@pytest.mark.parametrize(("argv", "started"), [
    pytest.param(["excite", "panda", "-o", "out.csv", "--starts", "1000", "--iterations", "500"],
                 r"^start 1/1000:", id="excite"),
    pytest.param(["retrieve", "panda", "{panda-model}", "--method", "penalty", "--restarts",
                  "200", "-o", "out.yaml"], r"^penalty retrieval: run 1/200 ", id="retrieve"),
    pytest.param(["identify", "panda", "{panda-long-1}", "--method", "nls", "--friction",
                  "lugre", "--max-samples", "10000", "--max-iterations", "1000000",
                  "-o", "out.yaml"], r"^nls: \d+ of \d+ samples", id="identify-nls"),
    pytest.param(["compare", "panda", "{panda-long-1}", "{panda-long-2}", "--methods", "ols",
                  "nls", "--friction", "lugre", "-o", "out.md"], r"^compare: 1/4 fits done",
                 id="compare"),
])
def test_ctrl_c_stops_cleanly(inputs, tmp_path, argv, started):
    argv = [a.format(**{k: str(v) for k, v in inputs.items()}) if "{" in a else a
            for a in argv]
    status, err = interrupt(argv, tmp_path, started=started)
    assert status == 130, err
    assert err.strip().splitlines()[-1] == "dynid: interrupted", err
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == [], "partial output or temporary files left"


def _run(argv: list[str], folder: Path) -> None:
    result = subprocess.run([DYNID, *argv], cwd=folder, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("argv", [
    ["excite", "arm3", "-o", "out.csv", "--harmonics", "2", "--period", "4", "--rate", "50",
     "--grid-rate", "25", "--starts", "2", "--iterations", "5", "--seed", "7", "--quiet"],
    ["simulate", "arm3", "{trajectory}", "-o", "out.csv", "--duration", "2", "--rate", "200",
     "--noise", "0.1", "--jitter", "1e-4", "--drop", "0.05", "--seed", "7"],
    ["retrieve", "panda", "{panda-model}", "--method", "penalty", "--restarts", "2",
     "--stages", "2", "--seed", "7", "-o", "out.yaml", "--quiet"],
])
def test_same_seed_same_bytes(inputs, tmp_path, argv):
    first, second = tmp_path / "first", tmp_path / "second"
    trajectory = tmp_path / "trajectory.yaml"
    import yaml

    trajectory.write_text(yaml.safe_dump(FourierTrajectory(
        a=0.2 * np.ones((3, 2)), b=0.1 * np.ones((3, 2)), q0=np.zeros(3),
        omega_f=2 * np.pi / 4).to_dict()))
    paths = {**{k: str(v) for k, v in inputs.items()}, "trajectory": str(trajectory)}
    argv = [a.format(**paths) if "{" in a else a for a in argv]
    for folder in (first, second):
        folder.mkdir()
        _run(argv, folder)
    names = sorted(p.name for p in first.iterdir())
    assert names and names == sorted(p.name for p in second.iterdir())
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_an_interrupt_a_library_swallowed_still_ends_as_an_interrupt(monkeypatch, capsys,
                                                                    interrupts_delivered):
    """Ctrl-C while numba compiles lands in a C callback, which swallows the KeyboardInterrupt;
    numba then fails with its own error. After a Ctrl-C, that error is the interrupt's: one
    line and status 130, not a traceback."""
    import dynid.cli as cli

    def swallowing_library(args):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1.0)
        except KeyboardInterrupt:
            pass  # what the C callback does with it
        raise RuntimeError("no compiled object yet")

    monkeypatch.setattr(cli, "check_outputs", swallowing_library)
    assert cli.main(["robots"]) == 130
    assert capsys.readouterr().err == "dynid: interrupted\n"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored
