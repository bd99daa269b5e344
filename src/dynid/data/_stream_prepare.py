"""``prepare`` for a log longer than memory: piece by piece (``prepare_pieces``), or into a
file (``prepare_to_file``), holding a piece and its overlap at a time.

Every step of ``prepare`` is local or decays exponentially. Linear interpolation reads the two
samples around each output time; central differences one sample on each side; a Butterworth
filter's response to what lies beyond a window decays like r^k, r the largest radius of its
poles. So each piece is prepared from a window padded on both sides by an overlap of
``ceil(log(DECAY) / log(r))`` samples (at least ``sosfiltfilt``'s edge padding) plus one for
the differences and one spare, with the same code as ``prepare`` (``np.interp``,
``sosfiltfilt``, ``np.gradient``), and only its middle is kept. ``DECAY`` is 1e-14: the
transient measured at the kept samples is about ``DECAY`` times the signal (4th order at 1 and
5 Hz, 10th order at 20 Hz, 1 kHz), and 1e-14 lies below the rounding that a filter at 1 Hz
already shows between any two windowings (1e-12 of the signal, 1e-12 for the differences). At
the log's true ends a window holds the edge itself, so ``sosfiltfilt``'s edge padding and
initial state are the whole log's.

What ``prepare`` computes from the whole log — the median step (which sets the resampling
rate, the filter and the differences' step), gaps, jitter — is computed here in passes over the
time stamps, a chunk at a time: the median exactly, by selecting the middle steps digit by
digit on their bit patterns (16 bits a pass), so the grid, the filter and every step are
``prepare``'s to the last bit.
"""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import itertools
import math
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from dynid._progress import Progress
from dynid.data.cutoff import SPECTRUM_SAMPLES, Cutoff
from dynid.data.dataset import Dataset, release_pages
from dynid.data.io import write_log_pieces
from dynid.data.preprocess import (
    _JITTER_RTOL,
    DEFAULT_TRIM,
    FIELDS,
    MAX_GAP_STEPS,
    MIN_SAMPLES,
    VELOCITIES,
    GapWarning,
    _butterworth,
    _check_trim,
    _dropped_note,
    _filter_padding,
    _gap_note,
    _grid_samples,
    _no_segment,
    _not_uniform,
    _too_few,
    _trimmed_away,
    check_step,
    data_cutoff,
    dead_band,
    dead_band_note,
    derived_velocity,
)

# scipy.signal is imported where a filter runs: it loads scipy.stats, seconds of
# start-up that `dynid robot show` and `dynid base` (which only reach this module
# through the Dataset type) would pay for nothing

__all__ = ["DECAY", "MIN_PIECE_SAMPLES", "PIECE_SAMPLES", "prepare_pieces", "prepare_to_file"]

DECAY = 1e-14  # the filter's transient left at the kept samples, relative (see the docstring)
PIECE_SAMPLES = 1 << 16  # default piece: a few MB per field (raised to 2 overlaps if needed)
MIN_PIECE_SAMPLES = 64
_CHUNK = 1 << 16  # time stamps read at a time in a pass over them
_SIGN = np.uint64(1 << 63)
_DIGIT = 16  # bits selected per pass of the exact median


# Time stamps of one segment, ``n`` of them, increasing, read a chunk at a time: ``chunk(start,
# stop)``, ``at(k)``, ``search(value, side)`` (``np.searchsorted``)


class _LogTimes:
    """Rows ``start:stop`` of a log's ``t`` (memory-mapped or not)."""

    def __init__(self, data: Dataset, start: int, stop: int) -> None:
        self._data, self._start, self.n = data, start, stop - start
        self._t = data.t[start:stop]  # a view: a mapped log stays on disk

    def chunk(self, start: int, stop: int) -> NDArray:
        values = np.array(self._t[start:stop])
        release_pages(self._data, slice(self._start + start, self._start + stop))
        return values

    def at(self, k: int) -> float:
        return self._t[k]

    def search(self, value: float, side: str) -> int:
        return int(np.searchsorted(self._t, value, side=side))  # a binary search: log N pages


class _GridTimes:
    """``resample``'s grid ``first + k / rate``, k < n, computed as it does."""

    def __init__(self, first: float, rate: float, n: int) -> None:
        self._first, self._rate, self.n = first, rate, n

    def chunk(self, start: int, stop: int) -> NDArray:
        return self._first + np.arange(start, stop) / self._rate

    def at(self, k: int) -> float:
        return self._first + np.float64(k) / self._rate

    def search(self, value: float, side: str) -> int:
        find = bisect.bisect_left if side == "left" else bisect.bisect_right
        return find(range(self.n), value, key=self.at)


_Times = _LogTimes | _GridTimes


def _steps(times: _Times) -> Iterator[NDArray]:
    """``np.diff`` of the time stamps, a chunk at a time."""
    for start in range(0, times.n - 1, _CHUNK):
        yield np.diff(times.chunk(start, min(start + _CHUNK + 1, times.n)))


def _keys(values: NDArray) -> NDArray:
    """Unsigned integers that sort like the float64 ``values``."""
    bits = values.view(np.uint64)
    return np.where(bits & _SIGN, ~bits, bits | _SIGN)


def _from_key(key: int) -> float:
    bits = np.array([key], dtype=np.uint64)
    return float((bits ^ _SIGN if bits[0] & _SIGN else ~bits).view(np.float64)[0])


def _select(times: _Times, ranks: list[int]) -> list[float]:
    """The steps at ``ranks`` in sorted order: their keys found ``_DIGIT`` bits a pass, each
    pass counting the digits of the steps that share the bits found so far."""
    prefixes, remaining = [0] * len(ranks), list(ranks)
    size = 1 << _DIGIT
    for shift in range(64 - _DIGIT, -1, -_DIGIT):
        counts = [np.zeros(size, np.int64) for _ in ranks]
        for steps in _steps(times):
            keys = _keys(steps)
            for i, prefix in enumerate(prefixes):
                chosen = keys if shift == 64 - _DIGIT else \
                    keys[keys >> np.uint64(shift + _DIGIT) == np.uint64(prefix)]
                digits = (chosen >> np.uint64(shift)) & np.uint64(size - 1)
                counts[i] += np.bincount(digits.astype(np.intp), minlength=size)
        for i, count in enumerate(counts):
            cumulative = np.cumsum(count)
            digit = int(np.searchsorted(cumulative, remaining[i], side="right"))
            remaining[i] -= int(cumulative[digit - 1]) if digit else 0
            prefixes[i] = (prefixes[i] << _DIGIT) | digit
    return [_from_key(prefix) for prefix in prefixes]


def _median_step(times: _Times) -> float:
    """``float(np.median(np.diff(t)))``, exactly, in passes over the time stamps."""
    count = times.n - 1
    middle = sorted({(count - 1) // 2, count // 2})  # np.median: the mean of the middle two
    return float(np.mean(np.array(_select(times, middle))))


def _irregularity(times: _Times, median: float) -> tuple[bool, float, float]:
    """(whether the steps vary, as ``preprocess._irregularity`` decides, shortest, longest)."""
    deviation, shortest, longest = 0.0, math.inf, -math.inf
    for steps in _steps(times):
        deviation = max(deviation, float(np.abs(steps - median).max()))
        shortest, longest = min(shortest, float(steps.min())), max(longest, float(steps.max()))
    largest = max(abs(float(times.at(0))), abs(float(times.at(times.n - 1))))  # t increases
    precision = 8 * np.finfo(float).eps * largest
    return deviation > max(_JITTER_RTOL * median, precision), shortest, longest


def _gaps(times: _Times, median: float) -> tuple[list[int], int, float]:
    """(rows after which a gap opens, as ``segments`` finds them, the row of the longest step
    (the first one), that step)."""
    gaps, longest, where, offset = [], -math.inf, 0, 0
    for steps in _steps(times):
        gaps.extend((offset + np.flatnonzero(steps > MAX_GAP_STEPS * median)).tolist())
        k = int(np.argmax(steps))
        if steps[k] > longest:
            longest, where = float(steps[k]), offset + k
        offset += steps.size
    return gaps, where, longest


@dataclasses.dataclass
class _Segment:
    """How one segment (rows ``start:stop`` of the log) is prepared: ``_prepare``'s decisions."""

    start: int
    stop: int
    log: _LogTimes
    grid: _Times  # the times of the prepared samples before trimming
    resampled: bool
    sos: NDArray | None
    step: float
    differentiate: bool
    keep: tuple[int, int]  # the grid's rows that trimming keeps
    steps: list[str]
    overlap: int
    from_positions: bool = False


def _plan(data: Dataset, start: int, stop: int, *, rate: float | None, cutoff: float | None,
          order: int, trim_seconds: float | None, from_positions: bool = False,
          median: float | None = None) -> _Segment:
    """``_prepare``'s steps for rows ``start:stop``, its checks and errors in its order."""
    if stop - start < MIN_SAMPLES:
        raise _too_few(data.metadata, stop - start)
    log = grid = _LogTimes(data, start, stop)
    median = _median_step(log) if median is None else median
    check_step(median if rate is None else 1.0 / rate, str(data.metadata.get("source", "the log")))
    irregular, shortest, longest = _irregularity(log, median)
    steps: list[str] = []
    resampled = rate is not None or irregular
    if resampled:
        rate = 1.0 / median if rate is None else rate
        grid = _GridTimes(log.at(0), rate, _grid_samples(log.at(0), log.at(log.n - 1), rate))
        steps.append(f"resample {rate:g} Hz")
        median = _median_step(grid)
        irregular, shortest, longest = _irregularity(grid, median)
    differentiate = data.ddq is None or from_positions
    sos, overlap = None, 0
    if differentiate or cutoff is not None:
        if irregular:
            raise _not_uniform(shortest, longest)
        chosen = cutoff if isinstance(cutoff, Cutoff) else None
        if cutoff is None:
            chosen = data_cutoff(_head(data, start, stop), rate=rate, order=order,
                                 from_positions=from_positions)
        cutoff = float(cutoff if chosen is None else chosen)
        sos = _butterworth(median, cutoff, order, str(data.metadata.get("source", "the log")))
        padding = _filter_padding(sos)
        if grid.n <= padding:
            raise ValueError(f"`data` needs more than {padding} samples for this filter")
        steps.append(f"butterworth order {order} cutoff {cutoff:g} Hz"
                     + (f" ({chosen.note})" if chosen is not None else ""))
        import scipy.signal  # here, not above: see the imports
        radius = float(np.abs(scipy.signal.sos2zpk(sos)[1]).max(initial=0.0))
        decay = math.ceil(math.log(DECAY) / math.log(radius)) if radius > 0 else 0
        overlap = max(decay, padding)
    if differentiate:
        steps.append("dq and ddq from q" if from_positions else "ddq from dq")
        # central differences reach one sample on each side (twice from q); one spare
        overlap += 3 if from_positions else 2
    keep = (0, grid.n)
    if differentiate or trim_seconds is not None:
        seconds = DEFAULT_TRIM if trim_seconds is None else trim_seconds
        _check_trim(seconds, seconds)
        first, last = grid.at(0), grid.at(grid.n - 1)
        keep = (grid.search(first + seconds, "left"), grid.search(last - seconds, "right"))
        if keep[1] - keep[0] < 2:
            raise _trimmed_away(seconds, seconds, float(last - first))
        steps.append(f"trimmed {seconds:g} s / {seconds:g} s")
    return _Segment(start, stop, log, grid, resampled, sos, median, differentiate, keep,
                    steps, overlap, from_positions)


def _head(data: Dataset, start: int, stop: int) -> Dataset:
    """The first rows of ``start:stop``, in memory: twice what the cutoff's spectrum reads, so
    that resampled they still cover the ``SPECTRUM_SAMPLES`` grid samples it reads."""
    rows = slice(start, min(stop, start + 2 * SPECTRUM_SAMPLES))
    fields = {name: np.array(getattr(data, name)[rows]) for name in ("t", "q", "dq", "tau")}
    release_pages(data, rows)
    return Dataset(**fields, metadata={"source": data.metadata.get("source", "the log")})


def prepare_pieces(data: Dataset, *, rate: float | None = None, cutoff: float | None = None,
                   order: int = 4, trim_seconds: float | None = None,
                   piece_samples: int | None = None, velocity: str = "log",
                   progress: Callable[[str], None] | None = None) -> Iterator[Dataset]:
    """``prepare(data, ...)`` as consecutive pieces of ``piece_samples`` samples (a segment's
    last piece shorter), holding one piece and its overlap at a time: ``data`` may be
    memory-mapped (``read_dataset(path, mmap=True)``) and longer than memory. The pieces
    joined equal ``prepare``'s log to rounding (the module docstring says why), with its
    metadata (less ``memory_mapped``: the pieces are in memory), its ``GapWarning`` and its
    errors, raised here before any piece.

    ``piece_samples``: at least ``MIN_PIECE_SAMPLES`` and twice the filter's overlap (a piece
    is then at least half of the window it is prepared from); default ``PIECE_SAMPLES``, or
    twice the overlap where that is more. ``progress``: a callback for progress lines.
    ``write_log_pieces(path, prepare_pieces(data))`` writes the prepared log to a file
    (``prepare_to_file``)."""
    if not isinstance(data, Dataset):
        raise TypeError(f"`data` must be a Dataset, got {type(data).__name__}")
    if piece_samples is not None and (isinstance(piece_samples, bool) or
                                      not isinstance(piece_samples, (int, np.integer))):
        raise TypeError(f"`piece_samples` must be an integer, got "
                        f"{type(piece_samples).__name__}")
    if piece_samples is not None and piece_samples < MIN_PIECE_SAMPLES:
        raise ValueError(f"`piece_samples` must be at least {MIN_PIECE_SAMPLES}, got "
                         f"{piece_samples}")
    if velocity not in VELOCITIES:
        raise ValueError(f"`velocity` must be one of {VELOCITIES}, got {velocity!r:.40}")
    options = {"rate": rate, "cutoff": cutoff, "order": order, "trim_seconds": trim_seconds,
               "from_positions": velocity == "positions" or derived_velocity(data)}
    band = (dead_band(_head(data, 0, data.n_samples), from_positions=options["from_positions"])
            if (data.ddq is None or options["from_positions"])
            and data.n_samples >= MIN_SAMPLES else None)
    whole = _LogTimes(data, 0, data.n_samples)
    median = _median_step(whole) if data.n_samples >= 3 else None
    gaps, where, longest = _gaps(whole, median) if median is not None else ([], 0, 0.0)
    metadata = {key: value for key, value in data.metadata.items() if key != "memory_mapped"}
    if not gaps:  # one segment: its errors are the caller's
        plans = [_plan(data, 0, data.n_samples, median=median, **options)]
        if plans[0].steps:  # none: `prepare` returns the log as it is
            metadata["preprocessing"] = [*metadata.get("preprocessing", []), *plans[0].steps]
    else:
        note = _gap_note(len(gaps), longest, whole.at(where))
        bounds = [0, *(k + 1 for k in gaps), data.n_samples]
        if cutoff is None and (data.ddq is None or options["from_positions"]):
            start, stop = max(itertools.pairwise(bounds), key=lambda pair: pair[1] - pair[0])
            with contextlib.suppress(ValueError):  # too short: each segment fails on its own
                options["cutoff"] = data_cutoff(
                    _head(data, start, stop), rate=rate, order=order,
                    from_positions=options["from_positions"])
        plans, dropped = [], 0
        for start, stop in itertools.pairwise(bounds):
            try:
                plans.append(_plan(data, start, stop, **options))
            except ValueError:  # too short to filter, differentiate or trim, as in `prepare`
                dropped += stop - start
        if not plans:
            raise _no_segment(note)
        if dropped:
            note += _dropped_note(dropped)
        warnings.warn(f"{data.metadata.get('source', 'the log')}: {note}", GapWarning,
                      stacklevel=2)
        metadata["preprocessing"] = [note, *metadata.get("preprocessing", []),
                                     *plans[0].steps]
    if band is not None:  # as `prepare` records it, after its steps
        metadata["dead_band"] = [float(b) for b in band]
        metadata["preprocessing"] = [*metadata.get("preprocessing", []), dead_band_note(band)]
    overlap = max(plan.overlap for plan in plans)
    if piece_samples is None:
        piece_samples = max(PIECE_SAMPLES, 2 * overlap)
    elif piece_samples < 2 * overlap:
        raise ValueError(f"`piece_samples` must be at least twice the filter's overlap of "
                         f"{overlap} samples ({2 * overlap}) for this cutoff and rate, got "
                         f"{piece_samples}")
    return _pieces(data, plans, int(piece_samples), metadata, progress)


def _pieces(data: Dataset, plans: list[_Segment], piece_samples: int, metadata: dict,
            progress: Callable[[str], None] | None) -> Iterator[Dataset]:
    meter = Progress(progress, "preparing the log (samples)",
                     sum(plan.keep[1] - plan.keep[0] for plan in plans))
    done = 0
    for plan in plans:
        # what `prepare` keeps of the controller's M, g: only a log it neither resampled,
        # filtered nor differentiated (its trimming selects rows)
        static = data.M is not None and not (plan.resampled or plan.sos is not None)
        for start in range(plan.keep[0], plan.keep[1], piece_samples):
            stop = min(start + piece_samples, plan.keep[1])
            t, fields = _window(data, plan, start, stop)
            if static:
                fields["M"] = np.array(data.M[plan.start + start:plan.start + stop])
                fields["g"] = np.array(data.g[plan.start + start:plan.start + stop])
            own = {**metadata, **({"preprocessing": list(metadata["preprocessing"])}
                                  if "preprocessing" in metadata else {})}
            yield Dataset(t=t, **fields, metadata=own, effort=data.effort)
            done += stop - start
            meter.update(done)


def _window(data: Dataset, plan: _Segment, start: int, stop: int) -> tuple[NDArray, dict]:
    """The prepared samples ``start:stop`` of the segment's grid, from a window ``overlap``
    wider on both sides (clipped at the segment's ends, which it then holds as ``prepare``
    does)."""
    first, last = max(start - plan.overlap, 0), min(stop + plan.overlap, plan.grid.n)
    names = [name for name in FIELDS if getattr(data, name) is not None]
    if plan.resampled:  # the log's samples around the window's times, interpolated
        t = plan.grid.chunk(first, last)
        below = max(plan.log.search(t[0], "right") - 2, 0)
        above = min(plan.log.search(t[-1], "left") + 2, plan.log.n)
        rows = slice(plan.start + below, plan.start + above)
        t_log = np.array(data.t[rows])
        fields = {}
        for name in names:
            values = np.array(getattr(data, name)[rows])
            fields[name] = np.column_stack([np.interp(t, t_log, values[:, j])
                                            for j in range(values.shape[1])])
    else:
        rows = slice(plan.start + first, plan.start + last)
        t = np.array(data.t[rows])
        fields = {name: np.array(getattr(data, name)[rows]) for name in names}
    release_pages(data, rows)
    if plan.sos is not None:  # the states only, as in `prepare`
        import scipy.signal  # here, not above: see the imports
        states = ("q",) if plan.from_positions else ("q", "dq", "ddq")
        fields.update({name: scipy.signal.sosfiltfilt(plan.sos, values, axis=0)
                       for name, values in fields.items() if name in states})
    if plan.from_positions:
        fields["dq"] = np.gradient(fields["q"], plan.step, axis=0)
    if plan.differentiate:
        fields["ddq"] = np.gradient(fields["dq"], plan.step, axis=0)
    kept = slice(start - first, stop - first)
    return t[kept], {name: values[kept] for name, values in fields.items()}


def prepare_to_file(data: Dataset, path: str | Path, *, rate: float | None = None,
                    cutoff: float | None = None, order: int = 4,
                    trim_seconds: float | None = None, piece_samples: int | None = None,
                    velocity: str = "log",
                    progress: Callable[[str], None] | None = None) -> Path:
    """``prepare(data, ...)`` written to ``path`` (an uncompressed ``.npz``) piece by piece:
    ``write_log_pieces(path, prepare_pieces(data, ...))``, a log of any length in the memory
    of one piece, that ``read_dataset(path, mmap=True)`` maps back. Atomic: an error or Ctrl-C
    leaves no file. The controller's M(q), g(q) along the log, if any, are not written (a
    ``UserWarning`` says so; ``prepare`` drops them too once it resamples or filters)."""
    return write_log_pieces(path, prepare_pieces(
        time_series(data), rate=rate, cutoff=cutoff, order=order, trim_seconds=trim_seconds,
        piece_samples=piece_samples, velocity=velocity, progress=progress))


def time_series(data: Dataset) -> Dataset:
    """``data`` without the controller's M(q), g(q) samples (with a ``UserWarning`` when it
    had them): what a log file written piece by piece holds."""
    if not isinstance(data, Dataset) or data.M is None:
        return data
    warnings.warn(f"{data.metadata.get('source', 'the log')}: the controller's M(q), g(q) "
                  "samples along the log are not written to a prepared log file (time series "
                  "only)", UserWarning, stacklevel=3)
    return dataclasses.replace(data, M=None, g=None)
