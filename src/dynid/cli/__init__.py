"""The ``dynid`` command.

One module per command (group), each with its options and its handler side by side, in the
order of the workflow; ``_common`` holds what more than one of them uses. The command modules
import library code inside their handlers, so that ``dynid --help`` and ``dynid robots`` start
fast.
"""

from __future__ import annotations

import argparse
import shlex
import signal
import sys
from collections.abc import Sequence

from dynid.cli import (
    base,
    bench,
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
from dynid.cli._common import Parser, check_outputs

__all__ = ["main", "run"]

# the commands in the order `dynid --help` lists them: the workflow's
_COMMANDS = (robots, base, excite, simulate, data, identify, friction, payload, retrieve,
             validate, compare, detect, report, export, codegen, demo, bench)


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
    ValueError, TypeError or OSError of the command is one line on stderr and status 2; Ctrl-C
    is one line and status 130.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    args.command_line = "dynid " + shlex.join(argv)  # provenance, kept in models and reports
    import warnings

    import numpy as np

    np.set_printoptions(precision=4, suppress=True)
    warnings.showwarning = _one_line_warning
    previous = signal.getsignal(signal.SIGINT)
    interrupted = _watch_interrupts()
    try:
        check_outputs(args)  # before any work: outputs that would destroy something refused
        return args.handler(args)
    except (ValueError, TypeError, OSError) as error:
        if interrupted():
            return _interrupted()
        print(f"dynid: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: every output is written atomically, none is half there
        return _interrupted()
    except Exception:
        # a Ctrl-C that a library swallowed (numba compiling, inside a C callback) can surface
        # as its own error; after a Ctrl-C every failure is the interrupt's
        if interrupted():
            return _interrupted()
        raise
    finally:
        if previous is signal.default_int_handler:
            signal.signal(signal.SIGINT, previous)


def _interrupted() -> int:
    print("dynid: interrupted", file=sys.stderr)
    return 130


def _watch_interrupts():
    """Record every Ctrl-C (then raise KeyboardInterrupt as Python does); returns whether one
    came. Only in the main thread, where signal handlers live."""
    import threading

    seen = []
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return lambda: bool(seen)

    def handler(signum, frame):
        seen.append(signum)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, handler)
    return lambda: bool(seen)


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning of a command as one line on stderr, ``dynid: warning: ...`` (not the
    interpreter's file:line form, which points into dynid's sources)."""
    text = " ".join(str(message).split())
    print(f"dynid: warning: {text} [{category.__name__}]", file=file or sys.stderr)


def run() -> int:
    """The ``dynid`` executable: ``main``, then Ctrl-C ignored while the process exits. The
    command's outputs are complete by then; an interrupt during the interpreter's exit
    handlers (joining worker-pool threads) would only turn a finished run into a traceback and
    a death by signal."""
    status = main()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    return status


if __name__ == "__main__":
    sys.exit(run())
