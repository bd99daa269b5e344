"""The ``dynid`` command.

One module per command (group), each with its options and its handler side by side, in the
order of the workflow. What more than one of them uses is a private module named after it:
``_parsing`` (bounded numbers, the parser, errors in the options' words), ``_outputs`` (what a
command may write), ``_robot_options``, ``_log_options``, ``_fit_options`` (the option groups
and what they load), ``_controller`` (the simulated controller's options). The command modules
import library code inside their handlers, so that ``dynid --help`` and ``dynid robots`` start
fast.
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import sys
from collections.abc import Sequence

from dynid.cli import (
    base,
    bench,
    benchmark,
    calibrate,
    codegen,
    compare,
    data,
    demo,
    detect,
    excite,
    export,
    friction,
    identify,
    payload,
    report,
    retrieve,
    robots,
    simulate,
    validate,
)
from dynid.cli._outputs import check_outputs
from dynid.cli._parsing import Parser

__all__ = ["main", "run"]

# the commands in the order `dynid --help` lists them: the workflow's
_COMMANDS = (robots, base, calibrate, excite, simulate, data, identify, friction, payload, retrieve,
             validate, compare, detect, report, export, codegen, demo, bench, benchmark)


def _parser() -> argparse.ArgumentParser:
    from dynid import __version__

    parser = Parser(prog="dynid", description="Dynamic identification of robot manipulators.")
    parser.add_argument("--version", action="version", version=f"dynid {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in _COMMANDS:
        command.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``dynid`` with ``argv`` (default: the process's arguments); the exit status.

    A mistake in the arguments exits through argparse (status 2, usage on stderr); a
    ValueError, TypeError or OSError of the command, and a warning that ``PYTHONWARNINGS`` or
    ``-W error`` turned into an error, is one line on stderr and status 2. Ctrl-C (SIGINT),
    SIGTERM (what ``timeout``, systemd and launch files send) and SIGHUP end the command alike:
    one line, no temporary file left, status 128 + the signal's number (130, 143, 129). A
    closed stdout (``dynid ... | head``) ends it quietly with status 141, as SIGPIPE ends other
    Unix tools. An iterative fit of ``dynid identify`` that did not converge is status 3
    (``identify.UNCONVERGED_STATUS``). A stdout closed from the start (``dynid robots >&-``)
    is refused before anything runs (status 2, one line on stderr where stderr is open); an
    OSError names its file (``'model.yaml': No space left on device``).
    """
    if sys.stderr is None:  # started with stderr closed: its lines go nowhere, not to stdout
        sys.stderr = open(os.devnull, "w", encoding="utf-8")
    if sys.stdout is None:  # started with stdout closed: nowhere to answer
        print("dynid: error: stdout is closed (started with `>&-`?): give it a file, or "
              "/dev/null to discard what dynid prints", file=sys.stderr)
        return 2
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    args.command_line = "dynid " + shlex.join(argv)  # provenance, kept in models and reports
    import warnings

    problem = _environment_problem()
    if problem:
        print(f"dynid: error: {problem}", file=sys.stderr)
        return 2
    import numpy as np

    np.set_printoptions(precision=4, suppress=True)
    warnings.showwarning = _one_line_warning
    previous = {signum: signal.getsignal(signum) for signum in _SIGNALS}
    received = _watch_signals()
    try:
        check_outputs(args)  # before any work: outputs that would destroy something refused
        status = args.handler(args)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return status
    except BrokenPipeError:
        return _closed_stdout()
    except (ValueError, TypeError, OSError) as error:
        if received():
            return _interrupted(received())
        print(f"dynid: error: {' '.join(_message(error).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: every output is written atomically, none is half there
        return _interrupted(received() or signal.SIGINT)
    except Warning as warning:  # PYTHONWARNINGS=error, python -W error: the warning, one line
        if received():
            return _interrupted(received())
        text = " ".join(str(warning).split())
        print(f"dynid: error: {text} [{type(warning).__name__}, a warning turned into an error "
              "by PYTHONWARNINGS or -W]", file=sys.stderr)
        return 2
    except Exception:
        # a Ctrl-C that a library swallowed (numba compiling, inside a C callback) can surface
        # as its own error; after a Ctrl-C every failure is the interrupt's
        if received():
            return _interrupted(received())
        raise
    finally:
        for signum, handler in previous.items():
            if handler in (signal.default_int_handler, signal.SIG_DFL):
                signal.signal(signum, handler)


# the signals that end a command as Ctrl-C does, and the line each leaves
_SIGNALS = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated (SIGTERM)",
            **({signal.SIGHUP: "hung up (SIGHUP)"} if hasattr(signal, "SIGHUP") else {})}


def _message(error: Exception) -> str:
    """An error's line: an OSError as its file and what went wrong (``'out.yaml': No space left
    on device``, ``'a' -> 'b': ...`` for a rename), else its text."""
    if isinstance(error, OSError) and error.strerror and error.filename is not None:
        where = repr(os.fsdecode(error.filename))
        if error.filename2 is not None:
            where += f" -> {os.fsdecode(error.filename2)!r}"
        return f"{where}: {error.strerror}"
    return str(error)


def _interrupted(signum: int) -> int:
    print(f"dynid: {_SIGNALS.get(signum, 'interrupted')}", file=sys.stderr)
    return 128 + int(signum)


def _closed_stdout() -> int:
    """The reader of stdout went away: nothing more to say to anyone (stdout pointed at
    /dev/null, so that the interpreter's last flush is quiet too), status 141 (128 +
    SIGPIPE)."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError):  # a stdout without a descriptor (a test's capture)
        pass
    return 141


def _environment_problem() -> str | None:
    """What in the environment would make the compiled kernels fail with a traceback:
    ``NUMBA_NUM_THREADS`` that is not a positive integer."""
    text = os.environ.get("NUMBA_NUM_THREADS")
    if text is None or text.strip() == "":
        return None
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        return (f"environment variable NUMBA_NUM_THREADS must be a positive integer (the "
                f"compiled kernels' threads), got {text!r:.40}; set a number or unset it")
    return None


def _watch_signals():
    """Record every SIGINT, SIGTERM and SIGHUP, then raise KeyboardInterrupt as Python does
    for Ctrl-C (so that every atomic write removes its temporary file); returns the last
    signal received (0: none). Only in the main thread, where signal handlers live, and only
    for the signals whose handling is still the default: a host program's own is kept, and an
    ignored one stays ignored (a background job of a script starts with SIGINT ignored, nohup
    with SIGHUP: whoever started dynid so asked that a terminal's Ctrl-C or hangup not end
    it; SIGTERM still does)."""
    import threading

    seen: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        return lambda: seen[-1] if seen else 0

    def handler(signum, frame):
        seen.append(signum)
        raise KeyboardInterrupt

    for signum in _SIGNALS:
        if signal.getsignal(signum) in (signal.default_int_handler, signal.SIG_DFL):
            signal.signal(signum, handler)
    return lambda: seen[-1] if seen else 0


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning of a command as one line on stderr, ``dynid: warning: ...`` (not the
    interpreter's file:line form, which points into dynid's sources)."""
    text = " ".join(str(message).split())
    print(f"dynid: warning: {text} [{category.__name__}]", file=file or sys.stderr)


def run() -> int:
    """The ``dynid`` executable: ``main``, then Ctrl-C (SIGTERM, SIGHUP) ignored while the
    process exits. The
    command's outputs are complete by then; an interrupt during the interpreter's exit
    handlers (joining worker-pool threads) would only turn a finished run into a traceback and
    a death by signal."""
    status = main()
    for signum in _SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    try:
        if sys.stdout is not None:  # None: closed from the start (main refused it)
            sys.stdout.flush()
    except BrokenPipeError:
        return _closed_stdout()
    return status


if __name__ == "__main__":
    sys.exit(run())
