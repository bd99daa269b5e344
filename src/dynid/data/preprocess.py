"""Preprocessing of logs: resampling, zero-phase filters, differentiation, trimming, splitting,
and an inspection report.

Real logs are irregular (the Panda log: median 1 ms, 504 gaps over 1.5 ms, largest 8.8 ms) and
noisy (position resolution about 1e-4 rad). The usual path::

    uniform = resample(data, rate=1000.0)                      # linear interpolation
    cutoff = data_cutoff(uniform)                              # from the log's spectrum
    smooth = lowpass(uniform, cutoff, fields=("q", "dq"))      # zero-phase Butterworth, states
    ready = trim(differentiate(smooth, source="dq"), 0.5, 0.5) # ddq, then drop filter edges
    fit, check = split(ready, 0.7)

A gap in the time stamps longer than ``MAX_GAP_STEPS`` median steps (a pause in logging, a
dropped connection) is never interpolated across: ``prepare`` splits the log there, prepares
each segment on its own, drops segments too short to filter, and joins the rest, with a
``GapWarning`` and a preprocessing step that says where it split.

Filters run forwards and backwards (``scipy.signal.sosfiltfilt``): no phase lag, so positions,
velocities and torques stay aligned in time. They need uniform sampling: resample first.
Gaz et al. filter at 4th order 1 Hz, the Jaco2 paper at 2nd order 5 Hz; Gilbert et al. use a
moving mean.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from dynid.data.cutoff import SPECTRUM_SAMPLES, Cutoff
from dynid.data.dataset import DERIVED_VELOCITY, Dataset, concatenate
from dynid.robot import Robot

# scipy.signal is imported where a filter runs: it loads scipy.stats, seconds of
# start-up that `dynid robot show` and `dynid base` (which only reach this module
# through the Dataset type) would pay for nothing

__all__ = [
    "DEFAULT_TRIM",
    "DERIVED_VELOCITY",
    "FIELDS",
    "MAX_GAP_STEPS",
    "VELOCITIES",
    "GapWarning",
    "data_cutoff",
    "dead_band",
    "derived_velocity",
    "differentiate",
    "inspect",
    "lowpass",
    "moving_mean",
    "noise_level",
    "prepare",
    "resample",
    "savgol",
    "segments",
    "split",
    "trim",
    "uniform_step",
]

FIELDS = ("q", "dq", "ddq", "tau")
# ``prepare`` trims 0.5 s at both ends of a log it filters (the filter's edge transients); its
# cutoff is chosen from each log's spectrum (``dynid.data.cutoff``), never a fixed one
DEFAULT_TRIM = 0.5
MIN_SAMPLES = 10  # fewer cannot be filtered, differentiated and trimmed
MAX_GAP_STEPS = 10  # a longer gap splits the log (the Panda log's largest: 8.8 median steps)
_JITTER_RTOL = 1e-6  # a grid is uniform when every step is the median step to this precision


def _with_step(data: Dataset, step: str, **changes) -> Dataset:
    fields = {name: getattr(data, name) for name in ("t", *FIELDS)}
    fields.update(changes)
    metadata = {**data.metadata,
                "preprocessing": [*data.metadata.get("preprocessing", []), step]}
    return Dataset(**fields, metadata=metadata, effort=data.effort)


def _irregularity(t: NDArray) -> tuple[float, bool]:
    """(median step, whether the steps vary more than ``_JITTER_RTOL`` of it or than the time
    stamps' own float precision allows — epoch time stamps carry only ~1e-7 s)."""
    steps = np.diff(t)
    median = float(np.median(steps))
    precision = 8 * np.finfo(float).eps * float(np.abs(t).max())
    return median, bool(np.abs(steps - median).max() > max(_JITTER_RTOL * median, precision))


def uniform_step(data: Dataset) -> float:
    """The sampling period of a uniform dataset (ValueError if it is not uniform)."""
    median, irregular = _irregularity(data.t)
    steps = np.diff(data.t)
    if irregular:
        raise _not_uniform(steps.min(), steps.max())
    return median


def _not_uniform(shortest: float, longest: float) -> ValueError:
    return ValueError("`data` is not uniformly sampled (steps from "
                      f"{shortest * 1e3:.4g} to {longest * 1e3:.4g} ms): resample it first")


def _check_fields(fields: Sequence[str], data: Dataset) -> list[str]:
    unknown = [f for f in fields if f not in FIELDS]
    if unknown:
        raise ValueError(f"`fields` must be among {FIELDS}, got {unknown}")
    return [f for f in fields if getattr(data, f) is not None]


def resample(data: Dataset, rate: float | None = None) -> Dataset:
    """``data`` on a uniform grid from its first to its last time stamp, by linear
    interpolation; ``rate`` [Hz] defaults to the inverse of the median step."""
    rate = 1.0 / float(np.median(np.diff(data.t))) if rate is None else rate
    n_samples = _grid_samples(data.t[0], data.t[-1], rate)
    t = data.t[0] + np.arange(n_samples) / rate
    changes = {}
    for name in FIELDS:
        values = getattr(data, name)
        if values is not None:
            changes[name] = np.column_stack([np.interp(t, data.t, values[:, j])
                                             for j in range(values.shape[1])])
    return _with_step(data, f"resample {rate:g} Hz", t=t, **changes)


def _grid_samples(first, last, rate: float) -> int:
    """How many samples ``resample`` puts from ``first`` to ``last`` at ``rate`` (checked)."""
    if not np.isfinite(rate) or rate <= 0:
        raise ValueError(f"`rate` must be > 0 Hz, got {rate}")
    n_samples = int(np.floor((last - first) * rate + 1e-9)) + 1
    if n_samples < 2:
        raise ValueError(f"`data` spans {float(last - first)} s: too short for {rate} Hz")
    return n_samples


# a low-pass must pass a constant unchanged: its gain at 0 Hz within this of 1 (a cutoff below
# ~1e-5 of the Nyquist frequency loses it to rounding in the sections' coefficients, and far
# below that the edge-state solve of ``sosfiltfilt`` is singular)
_DC_GAIN_RTOL = 1e-6


# no arm is logged faster than this [s]: a log stepped finer has its time stamps in another unit
MIN_STEP = 1e-6


def check_step(step: float, source: str) -> None:
    """ValueError naming ``source`` when its samples are closer than ``MIN_STEP``: time
    stamps in ms, us or ns read as seconds."""
    if step < MIN_STEP:
        raise ValueError(
            f"{source}: samples {step:.3g} s apart ({1.0 / step:.3g} Hz), faster than any arm "
            "is logged: the time steps are too small to filter and differentiate; are the time "
            "stamps in another unit (give it: --units t=ms, us or ns)? else resample the log "
            "(--resample HZ)")


def _butterworth(step: float, cutoff: float, order: int, source: str = "the log") -> NDArray:
    """The second-order sections of ``lowpass``'s filter for samples ``step`` apart (checked:
    a filter that cannot be computed at this step is an error naming ``source``)."""
    nyquist = 0.5 / step
    if not 0 < cutoff < nyquist:
        raise ValueError(f"`cutoff` must be in (0, {nyquist:g}) Hz (Nyquist), got {cutoff}")
    if not (isinstance(order, int) and 1 <= order <= 10):
        raise ValueError(f"`order` must be an integer in [1, 10], got {order}")
    import scipy.signal  # here, not above: see the imports
    sos = scipy.signal.butter(order, cutoff, fs=1.0 / step, output="sos")
    with np.errstate(all="ignore"):
        gain = float(np.prod(sos[:, :3].sum(axis=1) / sos[:, 3:].sum(axis=1)))
    if not (np.isfinite(sos).all() and abs(gain - 1.0) <= _DC_GAIN_RTOL):
        raise ValueError(
            f"{source}: a {cutoff:g} Hz low-pass cannot be computed for samples {step:.3g} s "
            f"apart ({cutoff / nyquist:.2g} of the Nyquist frequency, {nyquist:.3g} Hz): the "
            "time steps are too small to filter and differentiate; are the time stamps in "
            "another unit (give it: --units t=ms, us or ns)? else resample the log "
            "(--resample HZ)")
    return sos


def _filter_padding(sos: NDArray) -> int:
    """``lowpass`` needs more samples than this (``sosfiltfilt``'s edge padding)."""
    return 3 * (2 * len(sos) + 1)


def lowpass(data: Dataset, cutoff: float, *, order: int = 4,
            fields: Sequence[str] = ("q", "dq", "ddq", "tau")) -> Dataset:
    """Zero-phase Butterworth low-pass of ``order`` at ``cutoff`` [Hz] (forward-backward, so
    the magnitude response is squared: -6 dB at the cutoff)."""
    sos = _butterworth(uniform_step(data), cutoff, order,
                       str(data.metadata.get("source", "the log")))
    present = _check_fields(fields, data)
    padding = _filter_padding(sos)
    if data.n_samples <= padding:
        raise ValueError(f"`data` needs more than {padding} samples for this filter")
    import scipy.signal  # here, not above: see the imports
    changes = {f: scipy.signal.sosfiltfilt(sos, getattr(data, f), axis=0) for f in present}
    return _with_step(data, f"butterworth order {order} cutoff {cutoff:g} Hz", **changes)


def moving_mean(data: Dataset, window: int, *,
                fields: Sequence[str] = ("q", "dq", "ddq", "tau")) -> Dataset:
    """Centred moving mean over ``window`` samples (odd; zero phase; edges averaged over the
    samples that exist)."""
    uniform_step(data)
    if not (isinstance(window, int) and 1 <= window <= data.n_samples and window % 2 == 1):
        raise ValueError(f"`window` must be an odd number of samples in [1, "
                         f"{data.n_samples}], got {window}")
    half = window // 2
    index = np.arange(data.n_samples)
    upper = np.minimum(index + half + 1, data.n_samples)
    lower = np.maximum(index - half, 0)
    changes = {}
    for f in _check_fields(fields, data):
        values = getattr(data, f)
        # running sums: O(N) whatever the window; edges average the samples that exist
        cumulative = np.vstack([np.zeros((1, values.shape[1])), np.cumsum(values, axis=0)])
        changes[f] = (cumulative[upper] - cumulative[lower]) / (upper - lower)[:, None]
    return _with_step(data, f"moving mean {window} samples", **changes)


def savgol(data: Dataset, window: int, polyorder: int = 3, *,
           fields: Sequence[str] = ("q", "dq", "ddq", "tau")) -> Dataset:
    """Savitzky–Golay smoothing: a local polynomial of ``polyorder`` over ``window`` samples."""
    uniform_step(data)
    if not (isinstance(window, int) and window % 2 == 1 and polyorder < window <= data.n_samples):
        raise ValueError(
            f"`window` must be odd, above `polyorder` ({polyorder}) and at most the sample "
            f"count ({data.n_samples}), got {window}"
        )
    import scipy.signal  # here, not above: see the imports
    changes = {f: scipy.signal.savgol_filter(getattr(data, f), window, polyorder, axis=0)
               for f in _check_fields(fields, data)}
    return _with_step(data, f"savitzky-golay {window} samples order {polyorder}", **changes)


def differentiate(data: Dataset, *, source: str = "dq", window: int | None = None) -> Dataset:
    """Accelerations by differentiation: of ``dq`` (``source="dq"``), or both ``dq`` and ``ddq``
    from ``q`` (``source="q"``). Central differences, or a Savitzky–Golay derivative over
    ``window`` samples (cubic), which smooths at the same time. Filter first."""
    step = uniform_step(data)

    def derivative(values: NDArray) -> NDArray:
        if window is None:
            return np.gradient(values, step, axis=0)
        if not (isinstance(window, int) and window % 2 == 1 and 3 < window <= data.n_samples):
            raise ValueError(f"`window` must be odd, > 3 and <= {data.n_samples}, got {window}")
        import scipy.signal  # here, not above: see the imports
        return scipy.signal.savgol_filter(values, window, 3, deriv=1, delta=step, axis=0)

    if source == "dq":
        return _with_step(data, "ddq from dq", ddq=derivative(data.dq))
    if source == "q":
        dq = derivative(data.q)
        return _with_step(data, "dq and ddq from q", dq=dq, ddq=derivative(dq))
    raise ValueError(f"`source` must be 'dq' or 'q', got {source!r}")


def trim(data: Dataset, start: float = 0.0, end: float = 0.0) -> Dataset:
    """Drop ``start`` seconds at the beginning and ``end`` at the end (filter transients,
    ramps)."""
    _check_trim(start, end)
    keep = (data.t >= data.t[0] + start) & (data.t <= data.t[-1] - end)
    if keep.sum() < 2:
        raise _trimmed_away(start, end, data.duration)
    kept = data.select(keep)  # its metadata is its own copy
    kept.metadata["preprocessing"] = [*data.metadata.get("preprocessing", []),
                                      f"trimmed {start:g} s / {end:g} s"]
    return kept


def _check_trim(start: float, end: float) -> None:
    if start < 0 or end < 0:
        raise ValueError(f"`start` and `end` must be >= 0 s, got {start}, {end}")


def _trimmed_away(start: float, end: float, duration: float) -> ValueError:
    return ValueError(f"trimming {start} s and {end} s leaves no data of {duration} s")


def split(data: Dataset, fraction: float = 0.7) -> tuple[Dataset, Dataset]:
    """The first ``fraction`` of the samples (to identify) and the rest (to validate)."""
    if not 0 < fraction < 1:
        raise ValueError(f"`fraction` must be in (0, 1), got {fraction}")
    cut = round(fraction * data.n_samples)
    if cut < 2 or data.n_samples - cut < 2:
        raise ValueError(f"`fraction` {fraction} leaves too few samples on one side")
    return data.select(slice(0, cut)), data.select(slice(cut, None))


def noise_level(values: NDArray) -> NDArray:
    """White-noise standard deviation per column of a smooth signal plus noise: the second
    difference removes the signal, ``Var(x[k+1] - 2 x[k] + x[k-1]) = 6 sigma^2``; estimated
    robustly from the median absolute deviation."""
    second = np.diff(values, n=2, axis=0)
    mad = np.median(np.abs(second - np.median(second, axis=0)), axis=0)
    return 1.4826 * mad / np.sqrt(6.0)


def inspect(data: Dataset, robot: Robot | None = None) -> dict:
    """Duration, rate and jitter, gaps, ranges (against ``robot``'s limits), noise per joint."""
    if data.n_samples < 4:
        raise ValueError(f"`data` needs at least 4 samples to inspect, got {data.n_samples}")
    steps = np.diff(data.t)
    median = float(np.median(steps))
    gaps = steps > 1.5 * median
    report: dict = {
        "n_samples": data.n_samples,
        "n_joints": data.n_joints,
        "duration_s": data.duration,
        "rate_hz": 1.0 / median,
        "step_ms": {"median": 1e3 * median, "std": 1e3 * float(steps.std()),
                    "min": 1e3 * float(steps.min()), "max": 1e3 * float(steps.max())},
        "gaps": {"count": int(gaps.sum()), "threshold_ms": 1.5e3 * median,
                 "largest_ms": 1e3 * float(steps.max())},
        "has_ddq": data.ddq is not None,
        "range": {
            "q_min": data.q.min(axis=0).tolist(), "q_max": data.q.max(axis=0).tolist(),
            "dq_abs_max": np.abs(data.dq).max(axis=0).tolist(),
            "tau_abs_max": np.abs(data.tau).max(axis=0).tolist(),
        },
        "noise_std": {name: noise_level(getattr(data, name)).tolist()
                      for name in ("q", "dq", "tau")},
    }
    if robot is not None:
        if robot.n_joints != data.n_joints:
            raise ValueError(f"`robot` has {robot.n_joints} joints, the data {data.n_joints}")
        limits = robot.limits
        report["limits"] = {
            "robot": robot.name,
            "q_outside": ((data.q < limits.lower) | (data.q > limits.upper)).sum(axis=0).tolist(),
            "dq_fraction_of_limit": (np.abs(data.dq).max(axis=0) / limits.velocity).tolist(),
            "tau_fraction_of_limit": (np.abs(data.tau).max(axis=0) / limits.torque).tolist(),
        }
    return report


class GapWarning(UserWarning):
    """A log was split at gaps in its time stamps (see ``prepare``)."""


def segments(data: Dataset, max_gap_steps: float = MAX_GAP_STEPS) -> list[Dataset]:
    """``data`` cut at every step longer than ``max_gap_steps`` median steps."""
    if data.n_samples < 3:
        return [data]
    steps = np.diff(data.t)
    gaps = np.flatnonzero(steps > max_gap_steps * float(np.median(steps)))
    bounds = [0, *(gaps + 1).tolist(), data.n_samples]
    return [data.select(slice(start, stop)) for start, stop in itertools.pairwise(bounds)]


VELOCITIES = ("log", "positions")


def prepare(data: Dataset, *, rate: float | None = None, cutoff: float | None = None,
            order: int = 4, trim_seconds: float | None = None, as_is: bool = False,
            velocity: str = "log") -> Dataset:
    """A log ready to identify: resampled when irregular (or when ``rate`` is given), and,
    when it has no accelerations, its states low-passed, differentiated and trimmed
    (``trim_seconds``, default ``DEFAULT_TRIM``). A log that already has ``ddq`` is only
    filtered when ``cutoff`` is given. The steps go to the metadata.

    ``cutoff`` [Hz]: None chooses it from the log's spectrum (``dynid.data.cutoff``: the
    cutoff that loses the least of the motion's accelerations and lets the least noise
    through), said in the steps. Only the states are filtered (q, dq and a logged ddq), never
    the torques: the regressor is built from the states, and a filter on the torques alone
    smears every Coulomb step that the regressor's sign(dq) columns keep sharp (Coulomb
    friction comes out low, viscous high) and colours the residuals (the formula standard
    deviations then claim several times the precision the data has). Torque noise left in is
    white, and least squares averages it out at no bias.

    ``velocity``: ``"log"`` differentiates the log's velocities for the accelerations;
    ``"positions"`` derives both from the positions (a log whose velocities are noisy or
    missing: a reader that found no velocities marks the log so, and ``"log"`` then derives
    them too).

    A log with gaps (see the module docstring) is prepared segment by segment, with one cutoff
    (chosen on its longest segment). A log longer than memory: ``prepare_pieces`` (the same
    log, piece by piece) or ``prepare_to_file``.

    ``as_is``: every step off — the log is used exactly as it is (no resampling, filtering,
    differentiation or trimming or splitting at gaps; an irregular rate is kept), so it must
    carry ``ddq``, and ``rate``, ``cutoff`` and ``trim_seconds`` must be None."""
    if velocity not in VELOCITIES:
        raise ValueError(f"`velocity` must be one of {VELOCITIES}, got {velocity!r:.40}")
    if as_is:
        if velocity == "positions":
            raise ValueError("`as_is` uses the log as it is: it excludes `velocity` "
                             "'positions'")
        return _as_is(data, rate=rate, cutoff=cutoff, trim_seconds=trim_seconds)
    from_positions = velocity == "positions" or derived_velocity(data)
    band = (dead_band(data, from_positions=from_positions)
            if (data.ddq is None or from_positions) and data.n_samples >= MIN_SAMPLES else None)
    parts = segments(data)
    if len(parts) == 1:
        return _prepare(data, rate=rate, cutoff=cutoff, order=order, trim_seconds=trim_seconds,
                        from_positions=from_positions, band=band)
    steps = np.diff(data.t)
    largest = int(np.argmax(steps))
    note = _gap_note(len(parts) - 1, steps[largest], data.t[largest])
    if cutoff is None and _filters(parts[0], cutoff, from_positions):
        longest = max(parts, key=lambda part: part.n_samples)
        try:
            cutoff = data_cutoff(longest, rate=rate, order=order,
                                 from_positions=from_positions)
        except ValueError:  # too short for a spectrum: each segment fails as it would
            pass
    ready, dropped = [], 0
    for part in parts:
        try:
            ready.append(_prepare(part, rate=rate, cutoff=cutoff, order=order,
                                  trim_seconds=trim_seconds, from_positions=from_positions,
                                  band=band))
        except ValueError:  # too short to filter, differentiate or trim
            dropped += part.n_samples
    if not ready:
        raise _no_segment(note)
    if dropped:
        note += _dropped_note(dropped)
    warnings.warn(f"{data.metadata.get('source', 'the log')}: {note}", GapWarning, stacklevel=2)
    joined = concatenate(ready)
    joined.metadata["preprocessing"] = [note, *ready[0].metadata.get("preprocessing", [])]
    return joined


def derived_velocity(data: Dataset) -> bool:
    """Whether ``data``'s velocities were derived from its positions by the reader (the log
    had none): ``prepare`` then derives them again, from the filtered positions."""
    return data.metadata.get("velocity") == DERIVED_VELOCITY


def data_cutoff(data: Dataset, *, rate: float | None = None, order: int = 4,
                from_positions: bool = False):
    """The cutoff ``prepare`` chooses for ``data`` (a ``dynid.data.cutoff.Cutoff``: a float
    with the band edges and a note), on its resampled grid."""
    from dynid.data.cutoff import choose_cutoff  # scipy.signal: only where a filter runs
    _, irregular = _irregularity(data.t)
    if rate is not None or irregular:
        data = resample(data, rate)
    values = data.q if from_positions else data.dq
    return choose_cutoff(values, uniform_step(data), derivatives=2 if from_positions else 1,
                         order=order)


def _filters(data: Dataset, cutoff: float | None, from_positions: bool) -> bool:
    return data.ddq is None or from_positions or cutoff is not None


def _gap_note(count: int, largest: float, after: float) -> str:
    return (f"split at {count} gap(s) longer than {MAX_GAP_STEPS} median steps "
            f"(largest {largest:.3g} s after t = {after:.6g} s)")


def _no_segment(note: str) -> ValueError:
    return ValueError(f"`data`: {note}; no segment is long enough to prepare")


def _dropped_note(dropped: int) -> str:
    return f"; {dropped} samples in segments too short to prepare dropped"


def _as_is(data: Dataset, *, rate: float | None, cutoff: float | None,
           trim_seconds: float | None) -> Dataset:
    steps = {"rate": rate, "cutoff": cutoff, "trim_seconds": trim_seconds}
    given = [name for name, value in steps.items() if value is not None]
    if given:
        raise ValueError(f"`as_is` uses the log as it is: it excludes `{'`, `'.join(given)}`")
    if data.ddq is None:
        raise ValueError(f"`as_is`: {data.metadata.get('source', 'the log')} has no "
                         "accelerations (ddq); a log used as it is must carry them (leave "
                         "`as_is` off to differentiate dq)")
    metadata = {**data.metadata, "preprocessing": [
        *data.metadata.get("preprocessing", []),
        "as is (no resampling, filtering, differentiation or trimming)"]}
    return Dataset(**{name: getattr(data, name) for name in ("t", *FIELDS, "M", "g")},
                   metadata=metadata, effort=data.effort)


def _too_few(metadata: dict, n_samples: int) -> ValueError:
    return ValueError(f"`data` ({metadata.get('source', 'the log')}) has {n_samples} "
                      f"sample(s); preparing a log needs at least {MIN_SAMPLES}")


def _prepare(data: Dataset, *, rate: float | None, cutoff: float | None, order: int,
             trim_seconds: float | None, from_positions: bool = False,
             band: NDArray | None = None) -> Dataset:
    if data.n_samples < MIN_SAMPLES:
        raise _too_few(data.metadata, data.n_samples)
    median, irregular = _irregularity(data.t)
    check_step(median if rate is None else 1.0 / rate, data.metadata.get("source", "the log"))
    if rate is not None or irregular:
        data = resample(data, rate)
    differentiates = data.ddq is None or from_positions
    if _filters(data, cutoff, from_positions):
        chosen = cutoff if isinstance(cutoff, Cutoff) else None
        if cutoff is None:
            chosen = data_cutoff(data, order=order, from_positions=from_positions)
        cutoff = float(cutoff if chosen is None else chosen)
        states = ("q",) if from_positions else ("q", "dq", "ddq")
        data = lowpass(data, cutoff, order=order, fields=states)
        if chosen is not None:
            data.metadata["preprocessing"][-1] += f" ({chosen.note})"
    if differentiates:
        data = differentiate(data, source="q" if from_positions else "dq")
    if differentiates or trim_seconds is not None:
        seconds = DEFAULT_TRIM if trim_seconds is None else trim_seconds
        data = trim(data, seconds, seconds)
    if band is not None:
        data = _with_dead_band(data, band)
    return data


# A joint slower than this fraction of its speed (99th percentile of |dq|) is taken as
# stuck, or as reversing: see ``dead_band``
DEAD_BAND_FRACTION = 0.02


def dead_band(data: Dataset, *, from_positions: bool = False) -> NDArray:
    """Per joint, the speed [rad/s] below which a prepared log's samples carry no friction
    information a fit can use (``(n,)``; the fits leave those samples of that joint out).

    Where a joint reverses or sticks, dry friction is whatever holds it (anywhere between the
    static limits, chattering in sign with the velocity's noise), and accelerations derived by
    differentiation cannot follow the jumps that each change of sign puts into them: a Coulomb
    column sign(dq) there is wrong in sign half the time, and a least-squares fit shrinks the
    Coulomb coefficient towards zero and inflates the viscous one to make up (on a Panda
    twin: Coulomb 10-28 % low on the wrist joints, viscous up to 2.6x high, from the 5-9 % of
    samples slower than 0.005 rad/s). The band is ``DEAD_BAND_FRACTION`` of the joint's speed
    (the 99th percentile of ``|dq|``), read from the log's first ``SPECTRUM_SAMPLES`` samples
    as logged (velocities, or central differences of the positions with ``from_positions``):
    the same band for a log prepared whole or piece by piece. (Not the raw velocity's noise:
    the fits read the filtered velocity, and the raw differences of a 1e-3 rad encoder at
    1 kHz are 1 rad/s steps, which would leave every sample out.)"""
    head = data.select(slice(0, min(data.n_samples, SPECTRUM_SAMPLES)))
    if head.n_samples < 3:
        raise ValueError(f"`data` needs at least 3 samples for a dead band, got "
                         f"{head.n_samples}")
    raw = np.gradient(head.q, head.t, axis=0) if from_positions else np.asarray(head.dq)
    return DEAD_BAND_FRACTION * np.percentile(np.abs(raw), 99, axis=0)


def dead_band_note(band: NDArray) -> str:
    """The preprocessing step that records ``band``."""
    return ("friction fits leave out each joint's samples slower than "
            + ", ".join(f"{b:.2g}" for b in band) + " rad/s (sticking and reversals)")


def _with_dead_band(data: Dataset, band: NDArray) -> Dataset:
    metadata = {**data.metadata, "dead_band": [float(b) for b in band],
                "preprocessing": [*data.metadata.get("preprocessing", []),
                                  dead_band_note(band)]}
    return Dataset(**{name: getattr(data, name) for name in ("t", *FIELDS, "M", "g")},
                   metadata=metadata, effort=data.effort)
