"""Error metrics of predicted against measured joint torques, per joint: RMSE, MAE, relative
error %, the w and w_r of the Jaco2 paper (eq. 9), and residual statistics."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_float_array

__all__ = ["NOT_FINITE", "NOT_FINITE_NOTE", "any_not_finite", "cell", "mae",
           "relative_error_percent", "residual_statistics", "rmse", "w_errors"]

# what every table of dynid (terminal, markdown, CSV, HTML) shows for a figure that is not a
# finite number (NaN, an overflow to inf), with the footnote a table that shows it carries
NOT_FINITE = "—"
NOT_FINITE_NOTE = ("— : no figure: not a finite number (NaN or ±inf: undefined, or an "
                   "overflow), or a standard deviation below zero (an invalid input); check "
                   "the inputs' values")


def cell(value, spec: str = ".4g", *, nonnegative: bool = False) -> str:
    """``format(value, spec)``, or ``NOT_FINITE`` for NaN, ±inf, None (and, with
    ``nonnegative``, for a negative value: a standard deviation below zero is no figure)."""
    if value is None:
        return NOT_FINITE
    number = float(value)
    if not np.isfinite(number) or (nonnegative and number < 0):
        return NOT_FINITE
    return format(number, spec)


def any_not_finite(*texts: str) -> bool:
    """Whether a rendered table holds the ``NOT_FINITE`` marker (it then needs its note)."""
    return any(NOT_FINITE in text for text in texts)


def _pair(measured: ArrayLike, predicted: ArrayLike) -> tuple[NDArray, NDArray]:
    y = as_float_array("measured", measured)
    y_hat = as_float_array("predicted", predicted)
    if y.shape != y_hat.shape or y.ndim != 2:
        raise ValueError(
            f"`measured` and `predicted` must both be (N, n), got {y.shape} and {y_hat.shape}"
        )
    return y, y_hat


def rmse(measured: ArrayLike, predicted: ArrayLike) -> NDArray:
    """Root-mean-square error per joint ``(n,)`` (Gilbert et al. 2024, eq. 32)."""
    y, y_hat = _pair(measured, predicted)
    return np.sqrt(np.mean((y - y_hat) ** 2, axis=0))


def mae(measured: ArrayLike, predicted: ArrayLike) -> NDArray:
    """Mean absolute error per joint ``(n,)``."""
    y, y_hat = _pair(measured, predicted)
    return np.mean(np.abs(y - y_hat), axis=0)


def _norm_of_measured(y: NDArray) -> float:
    norm = float(np.linalg.norm(y))
    if norm == 0:
        raise ValueError("`measured` is zero on every sample and joint: a relative error "
                         "needs torque")
    return norm


def relative_error_percent(measured: ArrayLike, predicted: ArrayLike) -> float:
    """``100 |tau - tau_hat| / |tau|`` over all samples and joints (Frobenius norms); a
    ValueError for a zero ``measured``."""
    y, y_hat = _pair(measured, predicted)
    return float(100.0 * np.linalg.norm(y - y_hat) / _norm_of_measured(y))


def w_errors(measured: ArrayLike, predicted: ArrayLike) -> tuple[float, float]:
    """The Jaco2 paper's eq. 9 over all joints: ``w = |e|_2 / N`` [N m] (N samples) and
    ``w_r = |e|_2 / |tau|_2``, with ``e = tau - tau^`` stacked over samples and joints (a
    ValueError for a zero ``measured``)."""
    y, y_hat = _pair(measured, predicted)
    error = float(np.linalg.norm(y - y_hat))
    return error / y.shape[0], error / _norm_of_measured(y)


def residual_statistics(measured: ArrayLike, predicted: ArrayLike) -> dict:
    """Per joint: mean (bias), standard deviation, largest magnitude, 95th percentile of the
    magnitude, and the lag-one autocorrelation of ``tau - tau^`` (near 0 for white residuals,
    near 1 where the model misses a slow effect)."""
    y, y_hat = _pair(measured, predicted)
    e = y - y_hat
    centred = e - e.mean(axis=0)
    power = np.sum(centred**2, axis=0)
    lag = np.sum(centred[1:] * centred[:-1], axis=0)
    return {"mean": e.mean(axis=0), "std": e.std(axis=0), "max_abs": np.abs(e).max(axis=0),
            "p95_abs": np.percentile(np.abs(e), 95, axis=0),
            "lag1_autocorrelation": np.where(power > 0, lag / np.where(power > 0, power, 1),
                                             0.0)}


class ResidualSums:
    """The figures above accumulated chunk by chunk over a log of any length (consecutive
    chunks of ``tau`` and ``tau^`` ``(m, n)``), for ``rmse``, ``mae``, the relative error,
    ``w``/``w_r`` and ``residual_statistics`` without the whole residual in memory. The 95th
    percentile of ``|e|`` needs the residual twice more (``percentile``), exactly as
    ``np.percentile`` would give it."""

    def __init__(self, n: int) -> None:
        self.count = 0
        self.sum, self.squares, self.absolute = np.zeros(n), np.zeros(n), np.zeros(n)
        self.largest, self.torque_squares = np.zeros(n), np.zeros(n)
        self.lagged = np.zeros(n)  # sum of e_t e_(t-1)
        self.first = self.last = None

    def add(self, measured: NDArray, predicted: NDArray) -> None:
        e = measured - predicted
        if e.shape[0] == 0:
            return
        self.count += e.shape[0]
        self.sum += e.sum(axis=0)
        self.squares += (e**2).sum(axis=0)
        self.absolute += np.abs(e).sum(axis=0)
        self.largest = np.maximum(self.largest, np.abs(e).max(axis=0))
        self.torque_squares += (measured**2).sum(axis=0)
        self.lagged += (e[1:] * e[:-1]).sum(axis=0)
        if self.last is not None:
            self.lagged += e[0] * self.last
        if self.first is None:
            self.first = e[0].copy()
        self.last = e[-1].copy()

    def rmse(self) -> NDArray:
        return np.sqrt(self.squares / self.count)

    def mae(self) -> NDArray:
        return self.absolute / self.count

    def statistics(self, p95_abs: NDArray) -> dict:
        """``residual_statistics``' figures (the percentile from ``percentile``)."""
        mean = self.sum / self.count
        power = self.squares - self.count * mean**2  # sum of (e - mean)^2
        # sum over t >= 1 of (e_t - mean)(e_(t-1) - mean), from the raw sums
        lag = (self.lagged - mean * (2 * self.sum - self.first - self.last)
               + (self.count - 1) * mean**2)
        return {"mean": mean, "std": np.sqrt(np.maximum(power, 0) / self.count),
                "max_abs": self.largest, "p95_abs": p95_abs,
                "lag1_autocorrelation": np.where(power > 0, lag / np.where(power > 0, power, 1),
                                                 0.0)}

    def percentile(self, residuals, q: float = 95.0, bins: int = 4096) -> NDArray:
        """The ``q``-th percentile of ``|e|`` per joint, as ``np.percentile`` (linear), from
        ``residuals()``: a fresh iterator over the same residual chunks each call (two more
        passes: a histogram finds the bins of the two order statistics, then only the values
        in them are kept)."""
        n = self.sum.size
        position = (self.count - 1) * q / 100.0
        low = int(np.floor(position))
        ranks = (low, min(low + 1, self.count - 1))
        scale = np.where(self.largest > 0, bins / np.where(self.largest > 0, self.largest, 1),
                         0.0)

        def bin_of(values: NDArray) -> NDArray:
            return np.minimum((values * scale).astype(np.int64), bins - 1)

        counts = np.zeros((n, bins), dtype=np.int64)
        for e in residuals():
            index = bin_of(np.abs(e))
            for j in range(n):
                counts[j] += np.bincount(index[:, j], minlength=bins)
        before = np.cumsum(counts, axis=1) - counts  # values in the bins below each bin
        wanted = [[int(np.searchsorted(np.cumsum(counts[j]), rank, side="right"))
                   for rank in ranks] for j in range(n)]
        kept = [[] for _ in range(n)]
        for e in residuals():
            magnitude = np.abs(e)
            index = bin_of(magnitude)
            for j in range(n):
                inside = (index[:, j] >= wanted[j][0]) & (index[:, j] <= wanted[j][1])
                kept[j].append(magnitude[inside, j])
        out = np.zeros(n)
        for j in range(n):
            values = np.sort(np.concatenate(kept[j]))
            offset = before[j, wanted[j][0]]
            lo, hi = (values[rank - offset] for rank in ranks)
            out[j] = lo + (position - low) * (hi - lo)
        return out
