"""The low-pass cutoff chosen from the log itself.

Accelerations come from differentiating the filtered positions (or velocities), and the cutoff
decides what they are worth: too low and the filter eats the motion (every inertial column
shrinks with it), too high and the differentiated noise, amplified by ``(2 pi f)^2`` per
derivative, swamps it (errors in the regressor bias the inertial parameters towards zero). A
fixed 5 Hz is far below what a fast or a 5 kHz log needs and above what a slow one needs.

``choose_cutoff`` reads both sides from the log's spectrum. Per joint, the Welch power spectrum
``P(f)`` of the signal that will be differentiated (positions, or velocities when the log has
them; read from its first differences, so that the window's leakage from the strong slow motion
does not stand above the noise for several Hz) is a motion band over a flat noise floor. The
floor is the median of ``P`` over 0.5-0.9 of Nyquist, where no arm moves; the motion is
``P - floor`` where ``P`` stands 10x above the floor (0 elsewhere). For a candidate cutoff
``fc``, the zero-phase Butterworth (forward-backward, amplitude
``G(f) = 1 / (1 + (f / fc)^(2 order))``) leaves in the k-th derivative (k = 2 from positions,
1 from velocities), relative to the derivative's power,

    error(fc) = [ sum w (1 - G)^2 motion  +  sum w G^2 floor ] / sum w motion,   w = (2 pi f)^(2k)

the motion it removes plus the noise it lets through. The cutoff minimises the sum over the
moving joints (a joint whose motion does not rise above its floor is left out), searched on a
log-spaced grid from ``MIN_CUTOFF`` to ``MAX_FRACTION`` of Nyquist, and capped at
``CAP_FACTOR`` times the frequency below which ``MOTION_SHARE`` of the velocity's power lies: a
velocity filtered before it was logged (a drive's own estimate, as the Panda's) has no flat
floor, and its structural vibrations (real, but nothing a rigid-body model explains) would
carry the cutoff to 159 Hz on the Panda log and the differentiated noise with it (held-out
error 1.6 N m; capped, 2.9 Hz and 0.3 N m). What it chose and why (the
band edge of each joint: the highest frequency whose motion is 100x its floor) goes to the
preprocessing steps, so every report says it. The spectrum is read from the first
``SPECTRUM_SAMPLES`` samples (sixteen 4 s segments at 1 kHz), so that a log longer than memory,
prepared piece by piece, gets the cutoff of the same log prepared whole.

The torques are not filtered at all by ``prepare`` (see its docstring): the cutoff only decides
the states the regressor is built from.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["MAX_FRACTION", "MIN_CUTOFF", "SPECTRUM_SAMPLES", "Cutoff", "choose_cutoff"]

MIN_CUTOFF = 0.5  # Hz: below it an excitation's harmonics are cut (fundamentals ~0.1 Hz)
MAX_FRACTION = 0.4  # of Nyquist: above it a Butterworth is no longer a low-pass worth the name
_GRID = 80  # candidate cutoffs, log-spaced
_SEGMENT_SECONDS = 4.0  # Welch segment: 0.25 Hz resolution
CAP_FACTOR = 4.0  # the cutoff's cap over where the motion ends
MOTION_SHARE = 0.999  # of the motion's power below where it ends
_MOTION_SNR = 10.0  # motion: what stands 10x above the floor
_BAND_SNR = 100.0  # a joint's band edge: the last frequency whose motion is 100x its floor
SPECTRUM_SAMPLES = 1 << 16  # a longer log's spectrum is read from its first 65 s at 1 kHz


class Cutoff(float):
    """A chosen cutoff [Hz] (a float) with ``band`` (each joint's band edge [Hz], NaN for a
    joint that does not move above its noise) and ``note`` (one line for the report)."""

    band: tuple[float, ...]
    note: str

    def __new__(cls, value: float, band: tuple[float, ...], note: str) -> Cutoff:
        out = super().__new__(cls, value)
        out.band, out.note = band, note
        return out


def choose_cutoff(values: NDArray, step: float, *, derivatives: int = 2,
                  order: int = 4) -> Cutoff:
    """The Butterworth cutoff [Hz] for ``values`` ``(N, n)`` sampled ``step`` s apart that
    will be differentiated ``derivatives`` times (2: positions, 1: velocities), by the rule of
    the module docstring. A log too short for a spectrum (fewer than 64 samples) is an
    error; a log where no joint moves above its noise gets the highest cutoff (nothing to
    lose, and a still arm's accelerations are noise whatever the filter)."""
    values = np.asarray(values, dtype=float)
    if values.ndim != 2 or values.shape[0] < 64:
        raise ValueError(f"`values` must be (N, n) with N >= 64 samples to read a spectrum, "
                         f"got shape {values.shape}")
    if not (np.isfinite(step) and step > 0):
        raise ValueError(f"`step` must be > 0 s, got {step}")
    if derivatives not in (1, 2):
        raise ValueError(f"`derivatives` must be 1 or 2, got {derivatives}")
    import scipy.signal  # here: it loads scipy.stats (see dynid.data.preprocess)
    rate = 1.0 / step
    nyquist = 0.5 * rate
    values = values[:SPECTRUM_SAMPLES]
    segment = min(values.shape[0], 1 << int(np.ceil(np.log2(_SEGMENT_SECONDS * rate))))
    # the spectrum of the differences, divided by the difference's gain: a window's leakage
    # from the strong slow motion would otherwise stand above the noise for several Hz
    f, power = scipy.signal.welch(np.diff(values, axis=0), fs=rate, nperseg=segment - 1,
                                  detrend="linear", axis=0)
    f, power = f[1:], power[1:] / (2 * np.sin(np.pi * f[1:, None] * step)) ** 2
    upper = (f >= 0.5 * nyquist) & (f <= 0.9 * nyquist)
    floor = np.median(power[upper], axis=0) if upper.any() else power[-1]
    # what stands clearly above the floor (an averaged spectrum of noise alone stays within a
    # few times its median; central differences of noisy positions are not flat either)
    motion = np.where(power > _MOTION_SNR * floor, power - floor, 0.0)
    weight = (2 * np.pi * f[:, None]) ** (2 * derivatives)
    signal = (weight * motion).sum(axis=0)
    moving = signal > 0
    band = np.full(values.shape[1], np.nan)
    for j in np.flatnonzero(moving):
        strong = np.flatnonzero(motion[:, j] > _BAND_SNR * max(floor[j], 0.0))
        band[j] = f[strong[-1]] if strong.size else np.nan
    moving &= np.isfinite(band)
    highest = MAX_FRACTION * nyquist
    low = min(MIN_CUTOFF, highest)
    grid = np.geomspace(low, highest, _GRID)
    if not moving.any():
        return Cutoff(float(f"{highest:.3g}"), tuple(band.tolist()),
                      "chosen from the log's spectrum: no joint moves above its noise")
    gain = 1.0 / (1.0 + (f[:, None] / grid[None, :]) ** (2 * order))  # (F, grid)
    w, m, fl = weight[:, 0:1], motion[:, moving], floor[moving]
    lost = np.einsum("fg,fj->gj", (1.0 - gain) ** 2, w * m)
    noise = np.einsum("fg,fj->gj", gain ** 2, w) * fl
    error = ((lost + noise) / signal[moving]).sum(axis=1)
    best = float(grid[int(np.argmin(error))])
    # no further than CAP_FACTOR times where the motion itself ends (the frequency below which
    # MOTION_SHARE of its power lies, the slowest-ending joint): a signal filtered before it
    # was logged (a drive's own velocity estimate) has no flat noise floor, and its
    # structural vibrations, real motion the rigid-body model does not explain, would
    # otherwise carry the cutoff to tens of Hz and the differentiated noise with it
    # (in the velocity's power whichever signal is differentiated: a position's power ends
    # where its slowest harmonic does)
    velocity = motion[:, moving] * (2 * np.pi * f[:, None]) ** (2 * (derivatives - 1))
    share = np.cumsum(velocity, axis=0) / velocity.sum(axis=0)
    ends = f[np.argmax(share >= MOTION_SHARE, axis=0)]
    cap = max(CAP_FACTOR * float(ends.max()), low)
    capped = cap < best
    best = float(f"{min(best, cap):.3g}")  # as the steps print it
    edges = ", ".join("-" if np.isnan(b) else f"{b:.3g}" for b in band)
    note = (f"chosen from the log's spectrum: band edges {edges} Hz, the motion's power "
            f"within {float(ends.max()):.3g} Hz"
            + (f", capped at {CAP_FACTOR:g}x that" if capped else "")
            + f", {'positions' if derivatives == 2 else 'velocities'} differentiated")
    return Cutoff(best, tuple(band.tolist()), note)
