"""Datasets: time series of joint positions, velocities, accelerations and torques, and static
samples of a controller's M(q) and g(q) (their files: ``dynid.data.io``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_float_array, frozen_copy, strictly_increasing

__all__ = [
    "DERIVED_VELOCITY",
    "EFFORTS",
    "MAX_MAGNITUDE",
    "MAX_SAMPLES",
    "Dataset",
    "StaticData",
    "check_unchanged",
    "concatenate",
    "is_mapped",
    "lower_triangle",
    "release_pages",
    "sample_count",
    "sample_times",
    "static_rows",
    "with_accelerations",
]

# ``metadata["velocity"]`` of a log read without velocities: its dq are central differences of
# its positions, which ``prepare`` derives again from the filtered positions
DERIVED_VELOCITY = "derived from positions"


# |q|, |dq|, |ddq|, |tau| above this are no arm's (rad, rad/s, rad/s^2, N m) and overflow the
# squares and products of a fit: refused as a unit or format mistake
MAX_MAGNITUDE = 1e9

# What a log's ``tau`` column holds: joint torques [N m] (forces [N] on prismatic joints), or
# motor currents [A] (torque = drive gain x current; the gains are identified with the
# dynamics, ``dynid.identification.identify_drive_gains``)
EFFORTS = ("torque", "current")


def _in_range(name: str, array: NDArray) -> None:
    large = np.abs(array) > MAX_MAGNITUDE
    if large.any():
        index = tuple(int(i) for i in np.argwhere(large)[0])
        raise ValueError(f"`{name}` has {array[index]:.3g} at index {index}: beyond "
                         f"{MAX_MAGNITUDE:.0e}, no arm's value (wrong units or a corrupt file?)")


# Rows checked at a time in a memory-mapped array (a few MB)
_MAPPED_ROWS = 1 << 16


def is_mapped(array) -> bool:
    """Whether ``array`` is memory-mapped from a file (or a view of one)."""
    return isinstance(array, np.memmap)


def _mapped(name: str, array: np.memmap) -> np.memmap:
    """A memory-mapped field checked chunk by chunk (float64, finite, in range; ``t``
    strictly increasing), not copied."""
    if array.dtype != np.float64:
        raise ValueError(f"`{name}` is memory-mapped as {array.dtype}; a mapped log must hold "
                         "float64 (write it with dynid, or read it without mmap)")
    if array.flags.writeable:
        array = array.view()
        array.setflags(write=False)
    previous = None
    for start in range(0, max(array.shape[0], 1), _MAPPED_ROWS):
        first = start  # the row the checked part's index 0 stands for
        try:
            part = as_float_array(name, np.asarray(array[start:start + _MAPPED_ROWS]))
            _in_range(name, part)
            if name == "t" and part.size:
                if previous is not None:
                    part, first = np.append(previous, part), start - 1
                strictly_increasing("t", part)
                previous = part[-1]
        except ValueError as error:  # the index is the chunk's: say where the chunk starts
            raise ValueError(f"{error}, counting from row {first} of the memory-mapped "
                             "array") from None
        _release(array, slice(start, start + _MAPPED_ROWS))  # checked: out of memory again
    return array


@dataclass(frozen=True)
class Dataset:
    """``t`` (N,) [s], strictly increasing; ``q``, ``dq``, ``tau`` (N, n); ``ddq`` (N, n) or None;
    optionally the controller's model along the log, ``M`` (N, n, n) and ``g`` (N, n).

    SI units (rad, rad/s, rad/s^2, N m). ``effort`` says what ``tau`` holds (``EFFORTS``):
    ``"torque"`` [N m], or ``"current"`` — motor currents [A] in the joints' order.
    ``metadata`` says where the data come from (robot name, rate, noise, preprocessing, ...).
    At least one sample and one joint; magnitudes up to ``MAX_MAGNITUDE``.

    Arrays are copied (read-only) — except memory-mapped ones (``read_dataset(path,
    mmap=True)``): those stay on disk, checked chunk by chunk, so a log of any length never
    enters memory whole; the controller's ``M``, ``g`` are always read in.
    """

    t: NDArray
    q: NDArray
    dq: NDArray
    tau: NDArray
    ddq: NDArray | None = None
    metadata: dict = field(default_factory=dict)
    M: NDArray | None = None
    g: NDArray | None = None
    effort: str = "torque"

    def __post_init__(self) -> None:
        if self.effort not in EFFORTS:
            raise ValueError(f"`effort` must be one of {EFFORTS} (what the tau column holds), "
                             f"got {self.effort!r:.60}")
        t = _mapped("t", self.t) if is_mapped(self.t) else as_float_array("t", self.t)
        if t.ndim == 1 and t.size == 0:
            raise ValueError("`t` is empty: a log needs at least one sample")
        if not is_mapped(t):
            strictly_increasing("t", t)
        arrays = {"t": t}
        for name in ("q", "dq", "tau", "ddq"):
            value = getattr(self, name)
            if value is None:
                if name == "ddq":
                    continue
                raise ValueError(f"`{name}` is required")
            array = _mapped(name, value) if is_mapped(value) else as_float_array(name, value)
            if array.ndim != 2 or array.shape[0] != t.size:
                raise ValueError(f"`{name}` must have shape ({t.size}, n), got {array.shape}")
            if not is_mapped(array):
                _in_range(name, array)
            arrays[name] = array
        n = arrays["q"].shape[1]
        if n == 0:
            raise ValueError("`q` has no joints (shape (N, 0))")
        for name, array in arrays.items():
            if name != "t" and array.shape[1] != n:
                raise ValueError(f"`{name}` must have {n} joints like `q`, got {array.shape[1]}")
        if (self.M is None) != (self.g is None):
            raise ValueError("`M` and `g` come together (the controller's model), or not at all")
        if self.M is not None:
            samples = StaticData(q=arrays["q"], M=self.M, g=self.g)  # checks shapes, symmetry
            arrays["M"], arrays["g"] = samples.M, samples.g
        for name, array in arrays.items():
            object.__setattr__(self, name, array if is_mapped(array) else frozen_copy(array))

    def static(self) -> StaticData:
        """The controller's M(q), g(q) samples of this log, for reverse engineering."""
        if self.M is None:
            raise ValueError("`data` has no M(q), g(q) samples")
        return StaticData(q=self.q, M=self.M, g=self.g, metadata=dict(self.metadata))

    @property
    def n_samples(self) -> int:
        return self.t.size

    @property
    def n_joints(self) -> int:
        return self.q.shape[1]

    @property
    def duration(self) -> float:
        return float(self.t[-1] - self.t[0])

    def select(self, index: ArrayLike) -> Dataset:
        """The samples at ``index`` (a slice, boolean mask or increasing integer indices)."""
        pick = {name: getattr(self, name) for name in ("t", "q", "dq", "tau", "ddq", "M", "g")}
        return Dataset(**{k: (v[index] if v is not None else None) for k, v in pick.items()},
                       metadata=dict(self.metadata), effort=self.effort)


def release_pages(data: Dataset, rows: slice) -> None:
    """Drop the pages of a memory-mapped log's ``rows`` from this process's memory once they
    have been used (they stay in the OS file cache): reading a mapped log from end to end then
    keeps a chunk resident, not the whole file. Nothing for arrays in memory."""
    for name in ("t", "q", "dq", "tau", "ddq"):
        _release(getattr(data, name), rows)


def _release(array, rows: slice) -> None:
    """``release_pages`` for one array (nothing unless it is memory-mapped)."""
    import mmap

    handle = getattr(array, "_mmap", None)  # np.memmap's own map (views share it)
    if handle is None or not hasattr(handle, "madvise") or not array.flags.c_contiguous:
        return
    part = array[rows]
    if part.size == 0:
        return
    base = np.frombuffer(handle, dtype=np.uint8).ctypes.data
    start = part.ctypes.data - base
    page = mmap.PAGESIZE
    first = -(-start // page) * page  # whole pages inside the rows only
    end = (start + part.nbytes) // page * page
    if end > first:
        handle.madvise(mmap.MADV_DONTNEED, first, end - first)


def check_unchanged(data: Dataset) -> None:
    """A ValueError when the file a memory-mapped log was read from has changed size since
    (rewritten or truncated under the run: its samples would no longer be the ones checked)."""
    mapped = data.metadata.get("memory_mapped")
    if not mapped:
        return
    try:
        size = os.stat(mapped["path"]).st_size
    except OSError as error:
        raise ValueError(f"the memory-mapped log {mapped['path']} is gone: {error}") from None
    if size != mapped["bytes"]:
        raise ValueError(f"the memory-mapped log {mapped['path']} changed under the run: "
                         f"{mapped['bytes']} bytes when read, {size} now; rerun on a file "
                         "that is not being written")


@dataclass(frozen=True)
class StaticData:
    """A controller's model sampled at poses: ``q`` (N, n), ``M`` (N, n, n) symmetric, ``g`` (N, n).

    ``M`` must be symmetric to ``1e-9`` of its largest entry (a larger asymmetry means the
    entries were misread, not rounded).
    """

    q: NDArray
    M: NDArray
    g: NDArray
    metadata: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        q = as_float_array("q", self.q)
        mass = as_float_array("M", self.M)
        g = as_float_array("g", self.g)
        if q.ndim != 2:
            raise ValueError(f"`q` must have shape (N, n), got {q.shape}")
        n_samples, n = q.shape
        if mass.shape != (n_samples, n, n):
            raise ValueError(f"`M` must have shape ({n_samples}, {n}, {n}), got {mass.shape}")
        if g.shape != (n_samples, n):
            raise ValueError(f"`g` must have shape ({n_samples}, {n}), got {g.shape}")
        asymmetry = np.abs(mass - np.swapaxes(mass, 1, 2)).max(initial=0.0)
        if asymmetry > 1e-9 * max(np.abs(mass).max(initial=0.0), np.finfo(float).tiny):
            k = int(np.argmax(np.abs(mass - np.swapaxes(mass, 1, 2)).max(axis=(1, 2))))
            raise ValueError(
                f"`M` must be symmetric: sample {k} differs from its transpose by {asymmetry:.3g}"
            )
        for name, value in (("q", q), ("M", mass), ("g", g)):
            object.__setattr__(self, name, frozen_copy(value))

    @property
    def n_samples(self) -> int:
        return self.q.shape[0]

    @property
    def n_joints(self) -> int:
        return self.q.shape[1]


def concatenate(parts: list[Dataset]) -> Dataset:
    """Logs one after the other (time stamps increasing across them) as one; the metadata of
    the first."""
    if not parts:
        raise ValueError("`parts` is empty")
    if len({part.effort for part in parts}) > 1:
        raise ValueError("`parts` mix torque and current logs")
    joined = {}
    for name in ("t", "q", "dq", "tau", "ddq", "M", "g"):
        values = [getattr(part, name) for part in parts]
        if any(v is None for v in values) and not all(v is None for v in values):
            raise ValueError(f"`parts`: `{name}` is in some parts only")
        joined[name] = None if values[0] is None else np.concatenate(values)
    return Dataset(**joined, metadata=dict(parts[0].metadata), effort=parts[0].effort)


def with_accelerations(data: Dataset) -> Dataset:
    """``data`` with ``ddq`` by central differences of ``dq`` over ``t`` (no filtering)."""
    if data.n_samples < 3:
        raise ValueError(f"`data` needs at least 3 samples to differentiate, got {data.n_samples}")
    ddq = np.gradient(data.dq, data.t, axis=0)
    return Dataset(t=data.t, q=data.q, dq=data.dq, tau=data.tau, ddq=ddq,
                   metadata={**data.metadata, "ddq": "central differences of dq"},
                   effort=data.effort)


MAX_SAMPLES = 50_000_000  # a time series longer than this is a mistaken rate or duration


def sample_count(duration: float, rate: float) -> int:
    """The number of k with ``k / rate <= duration`` (``sample_times``' length)."""
    if not (np.isfinite(duration) and duration > 0):
        raise ValueError(f"`duration` must be > 0 s, got {duration}")
    if not (np.isfinite(rate) and rate > 0):
        raise ValueError(f"`rate` must be > 0 Hz, got {rate}")
    count = int(np.floor(duration * rate * (1 + 1e-12))) + 1
    if count > MAX_SAMPLES:
        raise ValueError(f"{duration} s at {rate} Hz is {count} samples (at most {MAX_SAMPLES})")
    return count


def sample_times(duration: float, rate: float, start: float = 0.0, *,
                 rows: slice | None = None) -> NDArray:
    """``start + k / rate`` for every k with ``k / rate <= duration`` (never beyond it); only
    the samples ``rows`` (the same values, a piece of a long series at a time, or every
    m-th)."""
    count = sample_count(duration, rate)
    return start + np.arange(*(rows or slice(None)).indices(count)) / rate


def lower_triangle(n: int) -> tuple[NDArray, NDArray]:
    """Row and column indices of the lower triangle of an n x n matrix, row by row."""
    rows, cols = np.tril_indices(n)
    return rows, cols


def static_rows(n: int, *, drop_joint1_gravity: bool = False) -> list[str]:
    """Names of the rows of ``static_regressor``: ``M11, M21, M22, ..., g1, ..., gn``."""
    rows, cols = lower_triangle(n)
    # M21 while indices are single digits, else M12_3 would be ambiguous: M12_3 -> M{12}_{3}
    names = [f"M{i + 1}{j + 1}" if n < 10 else f"M{i + 1}_{j + 1}"
             for i, j in zip(rows, cols, strict=True)]
    gravity = [f"g{i + 1}" for i in range(n)]
    return names + (gravity[1:] if drop_joint1_gravity else gravity)
