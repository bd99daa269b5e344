"""NPZ archives: every array's inflated size known from its header before it is inflated;
corrupt, pickled, object and truncated members named."""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from dynid._reading.limits import (
    MAX_TABLE_BYTES,
    FileError,
    byte_size,
    check_allocation,
    one_line,
    regular_file,
)

# NPZ arrays read into memory, inflated: at most a third of the available memory (a reader
# holds them twice, the archive's arrays and the Dataset's own copy, and works beside them)
NPZ_MEMORY_SHARE = 3
# compressed NPZ members: their inflated bytes at most this many times the archive's size on
# disk (deflate reaches ~1000x on zeros: a bomb; logged floats deflate 1.1x to 3x, a log of
# constants ~10x) once they inflate beyond ``INFLATION_FLOOR`` (smaller ones are harmless)
MAX_INFLATION_RATIO = 50
INFLATION_FLOOR = 64 * 2**20

# what zipfile raises on a corrupt archive (a CRC mismatch, a bad header, an unknown version
# or compression, a truncated member, a password-protected one)
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, OSError,
               ValueError, NotImplementedError, RuntimeError, struct.error)


def read_npz(path: str | Path, *, required: tuple[str, ...], optional: tuple[str, ...] = (),
             what: str = "NPZ file", limit: int = MAX_TABLE_BYTES,
             mmap: tuple[str, ...] = (),
             max_ratio: float = MAX_INFLATION_RATIO) -> dict[str, NDArray]:
    """The arrays ``required`` (all present) and ``optional`` (when present) of an NPZ archive,
    read defensively (see the module docstring); other arrays are not read. The arrays named
    in ``mmap`` are memory-mapped (read-only ``np.memmap``, stored uncompressed as ``np.savez``
    writes them; their bytes are not read, so the CRC is not checked) and count against no
    memory limit. ``limit``: the bytes the arrays read may inflate to; ``max_ratio``: how many
    times its size on disk the compressed arrays may inflate to (beyond
    ``INFLATION_FLOOR``)."""
    path = regular_file(path, what)
    name = path.name
    if not mmap:
        check_allocation(path.stat().st_size, f"{what} {str(path)!r}", limit)
    try:
        archive = zipfile.ZipFile(path)
    except (FileNotFoundError, PermissionError) as error:
        raise FileError(f"cannot read {what} {str(path)!r}: {error.strerror or error}") from None
    except _ZIP_ERRORS as error:  # NotImplementedError: an unknown zip version, say
        raise FileError(f"{name} is not a readable NPZ (zip) archive: "
                        f"{one_line(str(error))}") from None
    with archive:
        members = {info.filename.removesuffix(".npy"): info for info in archive.infolist()}
        missing = [key for key in required if key not in members]
        if missing:
            raise FileError(f"{name} lacks arrays {missing} (has {sorted(members)})")
        wanted = [key for key in (*required, *optional) if key in members]
        total = inflated = 0
        headers = {}
        for key in wanted:  # every header first: the total size is known before any array
            headers[key] = _npy_header(archive, members[key], name, key)
            total += headers[key][3] if key not in mmap else 0
            if members[key].compress_type != zipfile.ZIP_STORED:
                inflated += headers[key][3]
        check_inflation(inflated, path, f"{name}: its compressed arrays would inflate",
                        "save it uncompressed (np.savez) and read it memory-mapped (--mmap)",
                        max_ratio=max_ratio)
        try:
            check_allocation(total, f"the arrays of {name} (inflated)", limit,
                             share=NPZ_MEMORY_SHARE)
        except FileError as error:
            raise FileError(f"{error}; a log this long is read memory-mapped (--mmap, from "
                            "an uncompressed NPZ)") from None
        return {key: _npy_mapped(path, members[key], headers[key], key) if key in mmap
                else _npy_array(archive, members[key], headers[key], name, key)
                for key in wanted}


def check_inflation(inflated: int, path: Path, what: str, remedy: str, *,
                    max_ratio: float | None = None) -> None:
    """FileError unless ``inflated`` bytes (what a file's compressed parts declare) stay within
    ``max_ratio`` times the file's size on disk, or ``INFLATION_FLOOR``: a compression bomb is
    refused before anything is inflated. ``what`` starts the message (``"x.npz: its arrays
    would inflate"``), ``remedy`` says what to do with a real file that compresses so well;
    ``max_ratio`` defaults to ``MAX_INFLATION_RATIO``."""
    max_ratio = MAX_INFLATION_RATIO if max_ratio is None else max_ratio
    on_disk = max(path.stat().st_size, 1)
    if inflated > max(INFLATION_FLOOR, max_ratio * on_disk):
        raise FileError(
            f"{what} to {byte_size(inflated)} from {byte_size(on_disk)} on disk "
            f"({inflated / on_disk:.0f}x), beyond the limit of {max_ratio:g}x above "
            f"{byte_size(INFLATION_FLOOR)}: a compression bomb, or a log of constants; if it is "
            f"a real log, {remedy}")


def _npy_mapped(path: Path, info: zipfile.ZipInfo, header: tuple, key: str) -> np.memmap:
    """One stored (uncompressed) ``.npy`` member, memory-mapped read-only in place."""
    shape, fortran, dtype, nbytes, offset = header
    if info.compress_type != zipfile.ZIP_STORED:
        raise FileError(f"{path.name}: array {key!r} is compressed and cannot be memory-mapped; "
                        "write the archive uncompressed (np.savez, or dynid's write_dataset)")
    with open(path, "rb") as handle:  # the local header: its name and extra field lengths
        handle.seek(info.header_offset)
        local = handle.read(30)
    if len(local) != 30 or local[:4] != b"PK\x03\x04":
        raise FileError(f"{path.name}: array {key!r} has a corrupt zip header")
    name_length, extra_length = struct.unpack("<HH", local[26:30])
    start = info.header_offset + 30 + name_length + extra_length + offset
    if start + nbytes > path.stat().st_size:
        raise FileError(f"{path.name}: array {key!r} is truncated")
    if nbytes == 0:  # nothing to map (the reader of the array says what is missing)
        return np.zeros(shape, dtype)
    return np.memmap(path, dtype=dtype, mode="r", shape=shape, offset=start,
                     order="F" if fortran else "C")



def _npy_header(archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str,
                key: str) -> tuple[tuple[int, ...], bool, np.dtype, int, int]:
    """(shape, fortran order, dtype, data bytes, header bytes) of one ``.npy`` member."""
    from numpy.lib import format as npy

    where = f"{name}: array {key!r}"
    try:
        with archive.open(info) as handle:
            version = npy.read_magic(handle)
            if version == (1, 0):
                shape, fortran, dtype = npy.read_array_header_1_0(handle)
            elif version == (2, 0):
                shape, fortran, dtype = npy.read_array_header_2_0(handle)
            else:
                raise FileError(f"{where} has .npy format version {version}, expected 1.0 or 2.0")
            offset = handle.tell()
    except FileError:
        raise
    except _ZIP_ERRORS as error:
        raise FileError(f"{where} is corrupt: {one_line(str(error))}") from None
    if dtype.hasobject:
        raise FileError(f"{where} holds Python objects (pickled); dynid reads numbers only")
    if dtype.kind not in "biuf" or dtype.fields is not None:
        raise FileError(f"{where} must hold real numbers, got dtype {dtype}")
    if any(not isinstance(s, int) or s < 0 for s in shape):
        raise FileError(f"{where} has an invalid shape {shape}")
    nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
    held = info.file_size - offset
    if nbytes != held:
        raise FileError(f"{where}: its header declares {shape} {dtype} ({byte_size(nbytes)}), the "
                        f"archive member holds {byte_size(max(held, 0))}")
    return shape, fortran, dtype, nbytes, offset


def _npy_array(archive: zipfile.ZipFile, info: zipfile.ZipInfo, header: tuple, name: str,
               key: str) -> NDArray:

    shape, fortran, dtype, nbytes, offset = header
    try:
        with archive.open(info) as handle:
            handle.read(offset)
            data = bytearray(nbytes)
            view = memoryview(data)
            done = 0
            while done < nbytes:
                chunk = handle.read(min(nbytes - done, 2**24))
                if not chunk:
                    break
                view[done:done + len(chunk)] = chunk
                done += len(chunk)
            if done != nbytes or handle.read(1):  # reading to the end checks the CRC
                raise FileError(f"{name}: array {key!r} is truncated")
    except FileError:
        raise
    except _ZIP_ERRORS as error:
        raise FileError(f"{name}: array {key!r} is corrupt: {one_line(str(error))}") from None
    array = np.frombuffer(data, dtype=dtype)
    return array.reshape(shape, order="F" if fortran else "C")
