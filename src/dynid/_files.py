"""Writing files: whole or not at all (a reader never sees a half-written output), and values
converted to what YAML and JSON can hold."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def atomic_write(path: str | Path, write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it to ``path``.

    The temporary file keeps ``path``'s suffix (writers that pick a format from it, such as
    matplotlib, see the right one) and is removed if ``write`` fails.
    """
    path = Path(path)
    if not path.parent.is_dir():
        raise ValueError(f"cannot write {str(path)!r}: folder {str(path.parent)!r} does not exist")
    handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=path.suffix)
    os.close(handle)
    tmp = Path(name)
    try:
        write(tmp)
        tmp.chmod(0o666 & ~_umask())  # as an ordinary new file (mkstemp makes it private)
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


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
