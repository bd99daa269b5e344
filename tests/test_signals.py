"""How a `dynid` process ends when the world around it ends it: SIGTERM (what `timeout`,
systemd and launch files send) and SIGHUP end a command as Ctrl-C does (one line, status 128 +
the signal, no temporary file left); a closed stdout ends it quietly (status 141); a warning
that PYTHONWARNINGS turned into an error and a bad NUMBA_NUM_THREADS are one-line errors, not
tracebacks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import default_signals

from dynid.excitation import FourierTrajectory

DYNID = str(Path(sys.executable).parent / "dynid")


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1] / "src")
    return env


@pytest.fixture
def trajectory(tmp_path) -> Path:
    path = tmp_path / "trajectory.yaml"
    path.write_text(yaml.safe_dump(FourierTrajectory(
        a=0.2 * np.ones((3, 2)), b=0.1 * np.ones((3, 2)), q0=np.zeros(3),
        omega_f=2 * np.pi / 4).to_dict()))
    return path


@pytest.mark.parametrize("signum, status, line", [
    (signal.SIGTERM, 143, "dynid: terminated (SIGTERM)"),
    (signal.SIGHUP, 129, "dynid: hung up (SIGHUP)"),
])
def test_a_signal_while_writing_leaves_nothing_behind(trajectory, tmp_path, signum, status,
                                                      line):
    """The signal comes while the CSV is being written (its temporary file is there): the
    command ends with one line and its status, and the temporary file is gone."""
    out = tmp_path / "out"
    out.mkdir()
    process = subprocess.Popen(
        [DYNID, "simulate", "arm3", str(trajectory), "-o", "big.csv", "--duration", "3000",
         "--rate", "1000"], cwd=out, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True, start_new_session=True, env=_environment(),
        preexec_fn=default_signals)  # under nohup, SIGHUP too
    try:
        while not any(p.name.startswith(".big.") for p in out.iterdir()):
            assert process.poll() is None, f"ended before writing: {process.stderr.read()}"
            time.sleep(0.05)
        process.send_signal(signum)
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == status, err
    assert err.strip().splitlines()[-1] == line and "Traceback" not in err, err
    assert list(out.iterdir()) == [], "temporary or partial output left"


def test_a_closed_stdout_ends_quietly(tmp_path):
    """`dynid base ur5 | head`: the reader has gone; no message, status 141."""
    read, write = os.pipe()
    os.close(read)
    try:
        result = subprocess.run([DYNID, "base", "ur5"], stdout=write, stderr=subprocess.PIPE,
                                text=True, timeout=300, env=_environment())
    finally:
        os.close(write)
    assert result.returncode == 141, result.stderr
    assert result.stderr == ""


def _closed(redirections: str, *argv: str) -> subprocess.CompletedProcess:
    """`dynid argv` started with the shell's ``redirections`` (``>&-``: closed)."""
    import shlex

    return subprocess.run(["bash", "-c", f"exec {shlex.join([DYNID, *argv])} {redirections}"],
                          capture_output=True, text=True, timeout=300, env=_environment())


def test_a_stdout_closed_from_the_start_is_one_line_on_stderr():
    """`dynid robots >&-`: one line and status 2 before any work (an AttributeError on
    `None.flush()` before); with stderr closed too, the same status and nothing anywhere."""
    result = _closed(">&-", "robots")
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith("dynid: error: stdout is closed")
    assert result.stderr.count("\n") == 1
    result = _closed(">&- 2>&-", "robots")
    assert (result.returncode, result.stdout, result.stderr) == (2, "", "")


def test_a_stderr_closed_from_the_start_keeps_errors_out_of_stdout():
    result = _closed("2>&-", "robot", "show", "no-such-robot")
    assert result.returncode == 2 and result.stdout == "" and result.stderr == ""
    result = _closed("2>&-", "robots")
    assert result.returncode == 0 and "panda" in result.stdout


def test_a_closed_stdout_in_process_is_status_141(monkeypatch, capsys):
    import dynid.cli as cli

    def broken(args):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(cli, "check_outputs", broken)
    assert cli.main(["robots"]) == 141
    assert capsys.readouterr().err == ""


def test_a_warning_turned_into_an_error_is_one_line(monkeypatch, capsys):
    """PYTHONWARNINGS=error makes dynid's gap warning an exception: one line naming it."""
    import dynid.cli as cli
    from dynid.data.preprocess import GapWarning

    def gap(args):
        warnings.warn("the log has a gap of 0.5 s\nat t = 3 s", GapWarning, stacklevel=1)

    monkeypatch.setattr(cli, "check_outputs", gap)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cli.main(["robots"]) == 2
    err = capsys.readouterr().err
    assert err == ("dynid: error: the log has a gap of 0.5 s at t = 3 s [GapWarning, a warning "
                   "turned into an error by PYTHONWARNINGS or -W]\n")


@pytest.mark.parametrize("value", ["abc", "0", "-2"])
def test_a_bad_numba_num_threads_is_one_line(value):
    env = {**_environment(), "NUMBA_NUM_THREADS": value}
    result = subprocess.run([DYNID, "base", "arm3"], capture_output=True, text=True,
                            timeout=300, env=env)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (f"dynid: error: environment variable NUMBA_NUM_THREADS must be a "
                             f"positive integer (the compiled kernels' threads), got "
                             f"{value!r}; set a number or unset it\n")
