"""Writing files: whole or not at all (a reader never sees a half-written output), and values
converted to what YAML and JSON can hold."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np


def check_writable(path: str | Path, what: str = "output") -> Path:
    """``path`` may be written: a new path, or an existing regular file (not a symbolic link,
    a folder, a device node or a FIFO: writing replaces the file by renaming, which would
    replace the link or the device itself), in an existing folder dynid may write to."""
    path = Path(path)
    if path.is_symlink():
        raise ValueError(f"{what} {str(path)!r} is a symbolic link (to "
                         f"{os.readlink(path)!r}); give the file it points to, to replace that")
    if path.exists():
        if path.is_dir():
            raise ValueError(f"{what} {str(path)!r} is a folder; give a file name in it")
        if not stat.S_ISREG(path.stat().st_mode):
            raise ValueError(f"{what} {str(path)!r} is not a regular file (a device, FIFO or "
                             "socket); dynid writes only regular files")
    folder = path.parent
    if not folder.is_dir():
        raise ValueError(f"{what} {str(path)!r}: folder {str(folder)!r} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"{what} {str(path)!r}: folder {str(folder)!r} is not writable")
    return path


def atomic_write(path: str | Path, write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it to ``path``.

    The temporary file keeps ``path``'s suffix (writers that pick a format from it, such as
    matplotlib, see the right one) and is removed if ``write`` fails. ``path`` must pass
    ``check_writable``.
    """
    return atomic_write_all([(path, write)])[0]


def atomic_write_all(writes: Sequence[tuple[str | Path, Callable[[Path], None]]]) -> list[Path]:
    """Files written together appear together or not at all (a CSV and its YAML, a model and
    its parameters): every ``write(tmp)`` runs first; only when all succeeded are the files
    renamed into place, with Ctrl-C (SIGTERM, SIGHUP) held back during the renames, and a
    failed rename puts the files already replaced back as they were."""
    paths = [check_writable(path) for path, _ in writes]
    if len({path.resolve() for path in paths}) != len(paths):
        raise ValueError(f"outputs must be different files, got {[str(p) for p in paths]}")
    temporary: list[Path] = []
    try:
        for path, (_, write) in zip(paths, writes, strict=True):
            with naming(path):
                temporary.append(_temporary(path))
                write(temporary[-1])
                temporary[-1].chmod(0o666 & ~_umask())  # as a new file (mkstemp: private)
        with _interrupts_held():
            _rename_all(temporary, paths)
    finally:
        for tmp in temporary:
            tmp.unlink(missing_ok=True)
    return paths


@contextlib.contextmanager
def naming(path: str | Path) -> Iterator[None]:
    """An OSError inside names the output ``path``: a full disk or a lost mount says which
    file it stopped (a write reports no file name, "[Errno 28] No space left on device"; a
    temporary file's name would point at a file that is gone)."""
    try:
        yield
    except OSError as error:
        raise renamed(error, path) from error


def renamed(error: OSError, path: str | Path) -> OSError:
    """``error`` (its errno, its subclass) naming ``path`` as its file."""
    if error.errno is None:  # no system error behind it: its text, with the file
        return OSError(f"{str(path)!r}: {error}")
    return OSError(error.errno, error.strerror or str(error), str(path))


def move_all(sources: Sequence[Path], targets: Sequence[Path]) -> None:
    """Rename every file of ``sources`` onto its target (same file system), all or none: a
    failed rename puts back the targets already replaced and removes the ones that are new;
    Ctrl-C (SIGTERM, SIGHUP) is held back while the files move."""
    paths = [check_writable(target) for target in targets]
    with _interrupts_held():
        _rename_all([Path(source) for source in sources], paths)


def _temporary(path: Path) -> Path:
    handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=path.suffix)
    os.close(handle)
    return Path(name)


def _backup(target: Path) -> Path:
    """A copy of ``target`` beside it (a hard link where the file system has them)."""
    backup = _temporary(target)
    backup.unlink()
    try:
        os.link(target, backup)
    except OSError:  # a file system without hard links
        try:
            shutil.copy2(target, backup)
        except BaseException:  # a full disk: no half copy left behind
            backup.unlink(missing_ok=True)
            raise
    return backup


def _rename_all(sources: list[Path], targets: list[Path]) -> None:
    """Rename every source onto its target, or none (the replaced targets restored)."""
    backups: list[tuple[Path, Path | None]] = []
    try:
        for source, target in zip(sources, targets, strict=True):
            with naming(target):
                backups.append((target, _backup(target) if target.exists() else None))
                source.replace(target)
    except BaseException:
        for target, backup in reversed(backups):
            if backup is not None:
                backup.replace(target)
            else:
                target.unlink(missing_ok=True)
        raise
    finally:
        for _, backup in backups:
            if backup is not None:
                backup.unlink(missing_ok=True)


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP are delivered after the block, not inside it (main thread,
    POSIX only)."""
    if threading.current_thread() is not threading.main_thread() or \
            not hasattr(signal, "pthread_sigmask"):
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM,
            *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _umask() -> int:
    """The process's umask, read without changing it (os.umask would, for every thread)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    return 0o022


def to_builtin(value: Any, *, nonfinite_as_none: bool = False) -> Any:
    """numpy scalars and arrays (nested in dicts, lists) -> Python numbers and lists.

    ``nonfinite_as_none``: inf and NaN become None (JSON has no value for them).
    """
    if isinstance(value, dict):
        return {k: to_builtin(v, nonfinite_as_none=nonfinite_as_none) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_builtin(v, nonfinite_as_none=nonfinite_as_none) for v in value]
    if isinstance(value, np.ndarray):
        return to_builtin(value.tolist(), nonfinite_as_none=nonfinite_as_none)
    if isinstance(value, np.generic):
        value = value.item()
    if nonfinite_as_none and isinstance(value, float) and not np.isfinite(value):
        return None
    return value
