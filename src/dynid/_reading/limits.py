"""What every reader guards first: a regular file within its size and the available memory;
the bytes, text and JSON of one; ``FileError``, the one error every reader raises."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

MAX_TEXT_BYTES = 64 * 2**20  # YAML, URDF and pose files: a 7-joint model file is ~40 kB
MAX_TABLE_BYTES = 4 * 2**30  # CSV and NPZ logs: 4 GiB (a 7-joint log at 1 kHz for ~7 h)


class FileError(ValueError):
    """A file that cannot be read as what it should be; the message names the file."""


def available_memory() -> int:
    """Bytes of memory available to allocate (``MemAvailable``; physical memory elsewhere)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 2**40


def check_allocation(nbytes: int, what: str, limit: int, *, share: int = 2) -> None:
    """Refuse to allocate ``nbytes`` above ``limit`` or ``1/share`` of the available memory."""
    if nbytes > limit:
        raise FileError(f"{what} needs {byte_size(nbytes)}, above the limit of {byte_size(limit)}")
    available = available_memory()
    if nbytes > available // share:
        part = {2: "half", 3: "a third", 4: "a quarter"}.get(share, f"1/{share}")
        raise FileError(f"{what} needs {byte_size(nbytes)}, more than {part} of the memory "
                        f"available ({byte_size(available)})")


def byte_size(nbytes: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if nbytes < 1024 or unit == "PiB":
            return f"{nbytes:.0f} {unit}" if unit == "B" else f"{nbytes:.1f} {unit}"
        nbytes /= 1024
    raise AssertionError("unreachable")


def regular_file(path: str | Path, what: str = "file") -> Path:
    """``path`` as a Path after checking it is an existing regular file (symlinks to one are
    followed); its size is ``path.stat().st_size``."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise FileError(f"{what} {str(path)!r} does not exist") from None
    except OSError as error:
        raise FileError(f"cannot read {what} {str(path)!r}: {error.strerror or error}") from None
    if stat.S_ISDIR(mode):
        raise FileError(f"{what} {str(path)!r} is a folder, not a file")
    if not stat.S_ISREG(mode):
        raise FileError(f"{what} {str(path)!r} is not a regular file (a device, FIFO or socket)")
    return path


def read_bytes(path: str | Path, *, what: str = "file", limit: int = MAX_TEXT_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes."""
    path = regular_file(path, what)
    check_allocation(path.stat().st_size, f"{what} {str(path)!r}", limit)
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)  # a file that grows while read is still bounded
    except OSError as error:
        raise FileError(f"cannot read {what} {str(path)!r}: {error.strerror or error}") from None
    if len(data) > limit:
        raise FileError(f"{what} {str(path)!r} is larger than {byte_size(limit)}")
    return data


def read_text(path: str | Path, *, what: str = "file", limit: int = MAX_TEXT_BYTES) -> str:
    """The UTF-8 text of a regular file of at most ``limit`` bytes."""
    data = read_bytes(path, what=what, limit=limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise FileError(f"{what} {str(path)!r} is not UTF-8 text (byte {error.start}: "
                        f"{data[error.start:error.start + 1]!r})") from None


def read_json(path: str | Path, *, what: str = "JSON file", limit: int = MAX_TEXT_BYTES) -> Any:
    """The value of a JSON file of at most ``limit`` bytes of UTF-8 (a FileError naming the
    file and where its JSON breaks otherwise)."""
    text = read_text(path, what=what, limit=limit)
    if not text.strip():
        raise FileError(f"{what} {str(path)!r} is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise FileError(f"{what} {str(path)!r} is not JSON: {error.msg} (line "
                        f"{error.lineno}, column {error.colno})") from None
    except RecursionError:  # [[[[...: deeper than the parser's recursion
        raise FileError(f"{what} {str(path)!r} nests its JSON too deeply") from None


def one_line(text: str) -> str:
    return " ".join(text.split())
