"""Residual diagnostics: what a model misses on a joint, named from its torque residual.

A model that leaves a term out leaves that term in its residual ``e = tau - tau^``: a missing
rotor (armature) inertia as ``Ia q̈``, a missing dry friction as ``fc sign(q̇)``, a viscous
one as ``fv q̇``, a sensor offset as a constant, a delay of the torque channel behind the
positions as ``tau^(t - delay) - tau^(t) ~ -delay dtau^/dt``. Per joint, the residual is
regressed on those five candidates,

    e_j ~ b0 + sum_k b1k q̈_k + b2 sign(q̇_j) + b3 q̇_j + b4 dtau^_j/dt,

the inertia candidate being the accelerations of every joint as one group: a rigid-body fit
without the rotor inertia absorbs part of ``Ia_j q̈_j`` into the link inertias, whose columns
hold the other joints' accelerations, so what it leaves spreads over them too (on a 3-joint
arm without ``Ia``, the share of ``q̈_j`` alone was 0.35, of the group 0.77). Candidates are
taken by forward selection: the candidate that explains most of ``sum e_j^2`` is taken first, then
the one that adds most to it, and so on; each candidate's **share** is what it adds to those
taken before it, over ``sum e_j^2`` (correlated candidates — q̇, sign q̇ and the delay's
dtau^/dt on a slow joint — are not counted twice: a missing Coulomb term is named as dry
friction ("coulomb"), not as viscous friction too). A term is **named** when its share reaches
``MIN_SHARE`` (20 %): removing it would lower the joint's RMSE by at least
``1 - sqrt(0.8)`` = 11 %, the least that is worth a model option; a candidate fits white noise
by chance with a share of about ``chi2_k / N_eff`` (k its columns; ``N_eff`` independent
samples: about twice the filter's cutoff times the log's duration, 200 for a 20 s log
filtered at 5 Hz), whose 99.9 % quantile is 0.05 for one column and 0.12 for the 7
accelerations of a 7-joint arm at ``N_eff`` = 200, so a correct model on a noisy log names
nothing (on 3-joint twins filtered at 5 and 20 Hz, the largest share was 0.13: the filter's
own bias of the friction).

The delay is scanned as a pure shift too: ``sum (tau(t) - tau^(t + d))^2`` about its mean for
every whole-sample ``d`` within ``MAX_DELAY`` (20 ms), refined between samples by a parabola;
``delay_ms`` is the best one, positive when the torque channel lags the positions.

**Unexplained joints**: a joint whose RMSE is above ``UNEXPLAINED_RATIO`` (0.5) times the
standard deviation of its torque about its mean explains less than 3/4 of the torque's
variation (R² < 0.75); twins at their noise floor are at 0.01-0.1. The RMS is taken about the
mean so that a constant load (gravity on a joint held still) does not pass for a model. Such a
joint is **unexcited** rather than unexplained when its torque varies by less than
``UNEXCITED_RATIO`` (2) times the noise: since the RMSE cannot fall below the noise, the ratio
then exceeds 0.5 whatever the model (the log does not test the model there).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_float_array

__all__ = [
    "MAX_DELAY",
    "MIN_SHARE",
    "TERMS",
    "UNEXCITED_RATIO",
    "UNEXPLAINED_RATIO",
    "JointDiagnosis",
    "ResidualDiagnostics",
    "UnexplainedJointWarning",
    "residual_diagnostics",
]

# the candidates, in the regression's column order after the constant (offset) column
TERMS = ("offset", "inertia", "coulomb", "viscous", "delay")
MIN_SHARE = 0.2  # of the residual's mean square: a term worth naming (module docstring)
MAX_DELAY = 0.020  # s: the delays scanned, +-
UNEXPLAINED_RATIO = 0.5  # RMSE over the torque's standard deviation (R^2 < 0.75)
UNEXCITED_RATIO = 2.0  # torque standard deviation over the noise: below, the joint is unexcited
# relative tolerance on the singular values of the scaled candidate columns (a joint that does
# not move has no q̈, sign q̇, q̇ columns; they explain nothing, not round-off)
_RCOND = 1e-10


class UnexplainedJointWarning(UserWarning):
    """A joint whose validation RMSE is not clearly below its torque's variation: the model
    explains little of it (or the log does not excite it)."""


@dataclass
class JointDiagnosis:
    """What the residual of one joint says (``joint`` 1-based)."""

    joint: int
    status: str  # "explained", "unexplained" (RMSE > 0.5 sigma_tau), "unexcited"
    rmse: float  # [N m]
    torque_std: float  # of the measured torque about its mean [N m]
    noise: float | None  # the noise it was told or estimated [N m]; None: unknown
    shares: dict[str, float]  # term -> unique share of the residual's mean square
    named: list[str]  # terms with share >= MIN_SHARE, largest first
    delay_ms: float  # best pure shift [ms]; > 0: the torque lags the positions
    remedies: dict[str, str] = field(default_factory=dict)  # named term -> what adds it

    @property
    def ratio(self) -> float:
        """RMSE over the torque's standard deviation (inf for a constant torque)."""
        return self.rmse / self.torque_std if self.torque_std > 0 else float("inf")

    @property
    def flagged(self) -> bool:
        return self.status != "explained"

    def describe_terms(self) -> str:
        """The named terms, one clause each: ``inertia (q̈, 93 % of the residual:
        --rotor-inertia ...)``; empty when none is named."""
        clauses = []
        for term in self.named:
            what = _SIGNAL[term] + (f", {self.delay_ms:+.3g} ms" if term == "delay" else "")
            clauses.append(f"{term} ({what}, {100 * self.shares[term]:.0f} % of the residual: "
                           f"{self.remedies.get(term, '')})")
        return "; ".join(clauses)

    def message(self, name: str) -> str:
        """The warning's text for a flagged joint, called ``name`` (``"joint 5"``)."""
        if self.status == "unexcited" and self.torque_std == 0:
            return (f"{name}: its torque is constant on this log: unexcited, nothing "
                    f"to explain (RMSE {self.rmse:.3g} N m)")
        if self.status == "unexcited":
            return (f"{name}: its torque varies by {self.torque_std:.3g} N m about its "
                    f"mean, within {UNEXCITED_RATIO:g}x the noise ({self.noise:.3g} N m): "
                    f"unexcited rather than unexplained (RMSE {self.rmse:.3g} N m); this log "
                    "does not test the model there — excite the joint more")
        text = (f"{name}: RMSE {self.rmse:.3g} N m is {100 * self.ratio:.0f} % of the "
                f"torque's variation ({self.torque_std:.3g} N m about its mean, above "
                f"{100 * UNEXPLAINED_RATIO:.0f} %): the model explains little of this joint")
        terms = self.describe_terms()
        return text + (f"; its residual points to {terms}" if terms else
                       "; no single missing term explains the residual")

    def to_json(self) -> dict:
        return {"joint": self.joint, "status": self.status, "rmse": self.rmse,
                "torque_std": self.torque_std, "rmse_over_torque_std": (
                    self.ratio if np.isfinite(self.ratio) else None),
                "noise": self.noise, "shares": self.shares, "delay_ms": self.delay_ms,
                "named": [{"term": term, "share": self.shares[term],
                           "remedy": self.remedies.get(term, "")} for term in self.named]}


# what each term is in the residual
_SIGNAL = {"offset": "a constant", "inertia": "q̈", "coulomb": "sign q̇",
           "viscous": "q̇", "delay": "a shift of the torque channel"}


def remedies(*, friction: str = "none", rotor_inertia: bool = False,
             offsets_reestimated: bool = False) -> dict[str, str]:
    """What adds each term to a model whose linear friction is ``friction`` (a friction
    model's name), with or without identified rotor inertias: the option to name."""
    has_friction = friction != "none"
    dry = ("a dry friction the model's columns miss or misfit: `--friction arctan` on "
           "`dynid identify`, or a nonlinear one (`--method nls --friction stribeck`)"
           if has_friction else
           "Coulomb friction: `--friction viscous-coulomb` on `dynid identify`")
    viscous = ("a viscous friction the model misfits (its filter biases it: a higher "
               "`--cutoff`)" if has_friction else
               "viscous friction: `--friction viscous-coulomb` on `dynid identify`")
    inertia = ("an inertia the model misfits on this joint although it has rotor inertias "
               "(more excitation, or a transmission coupling the joints)" if rotor_inertia
               else "the drive's rotor inertia: `--rotor-inertia` on `dynid identify`")
    offset = ("an offset on this log although they were re-estimated" if offsets_reestimated
              else "a torque offset: `--reestimate-offsets` on `dynid validate` (a sensor "
                   "that drifted), or the offset column of `--friction viscous-coulomb`")
    delay = ("a delay between the torque and position channels: identify with `--delay auto` "
             "(the default: estimated and compensated) or `--delay MS`, and validate with the "
             "model's (its default)")
    return {"offset": offset, "inertia": inertia, "coulomb": dry, "viscous": viscous,
            "delay": delay}


class ResidualDiagnostics:
    """The regressions of the module docstring accumulated chunk by chunk over a log of any
    length (consecutive chunks; sums of the candidates' cross products, and per shift the
    sums of the shifted residual), for ``n`` joints sampled every ``step`` seconds (the
    log's median step: the delays scanned are whole samples of it)."""

    def __init__(self, n: int, step: float, *, max_delay: float = MAX_DELAY) -> None:
        if not (np.isfinite(step) and step > 0):
            raise ValueError(f"`step` must be a sampling step > 0 [s], got {step!r}")
        self.n, self.step = n, float(step)
        self.shifts = np.arange(-max(1, round(max_delay / step)), max(1, round(max_delay / step))
                                + 1)
        # columns: offset, the n joints' accelerations, sign q̇_j, q̇_j, dtau^_j/dt, residual
        self.columns = [[0], list(range(1, n + 1)), [n + 1], [n + 2], [n + 3]]
        k = n + 5
        self.gram = np.zeros((n, k, k))
        self.count = 0
        self.torque_sum, self.torque_squares = np.zeros(n), np.zeros(n)
        self.shift_count = 0
        self.shift_sum = np.zeros((self.shifts.size, n))
        self.shift_squares = np.zeros((self.shifts.size, n))

    def add(self, t: ArrayLike, dq: ArrayLike, ddq: ArrayLike, measured: ArrayLike,
            predicted: ArrayLike) -> None:
        """One chunk: times ``(m,)``, velocities, accelerations, measured and predicted
        torques ``(m, n)``."""
        t = as_float_array("t", t)
        arrays = [as_float_array(name, value) for name, value in (
            ("dq", dq), ("ddq", ddq), ("measured", measured), ("predicted", predicted))]
        if any(a.shape != (t.size, self.n) for a in arrays):
            raise ValueError(f"`dq`, `ddq`, `measured` and `predicted` must be ({t.size}, "
                             f"{self.n}), got {[a.shape for a in arrays]}")
        dq, ddq, measured, predicted = arrays
        m = t.size
        if m == 0:
            return
        slope = (np.gradient(predicted, t, axis=0) if m > 1 else np.zeros_like(predicted))
        residual = measured - predicted
        # the Gram in blocks: the accelerations are every joint's columns, never copied per
        # joint (a 100-joint chain's chunk would be GBs); the rest are each joint's own
        own = np.stack([np.ones_like(dq), np.sign(dq), dq, slope, residual], axis=-1)
        accelerations, rest = self._of([1]), [*self._of([0, 2, 3, 4]), self.n + 4]
        cross = np.einsum("mk,mja->jka", ddq, own)
        self.gram[:, accelerations[0]:accelerations[-1] + 1,
                  accelerations[0]:accelerations[-1] + 1] += ddq.T @ ddq
        self.gram[np.ix_(range(self.n), accelerations, rest)] += cross
        self.gram[np.ix_(range(self.n), rest, accelerations)] += cross.transpose(0, 2, 1)
        self.gram[np.ix_(range(self.n), rest, rest)] += np.einsum("mja,mjb->jab", own, own)
        self.count += m
        self.torque_sum += measured.sum(axis=0)
        self.torque_squares += (measured**2).sum(axis=0)
        reach = int(self.shifts[-1])
        if m > 2 * reach:  # each chunk scans its inner samples (the edges lose 2 x 20 ms)
            inner = measured[reach:m - reach]
            for k, d in enumerate(self.shifts):
                e = inner - predicted[reach + d:m - reach + d]
                self.shift_sum[k] += e.sum(axis=0)
                self.shift_squares[k] += (e**2).sum(axis=0)
            self.shift_count += m - 2 * reach

    def shares(self) -> tuple[NDArray, list[list[int]]]:
        """``(n, len(TERMS))`` shares of the residual's mean square, and per joint the
        candidates named (indices into ``TERMS``), by forward selection: the candidate that
        explains most is taken while what it adds reaches ``MIN_SHARE``; a named term's share
        is what it added when taken, another's what it would add to those named."""
        out = np.zeros((self.n, len(TERMS)))
        named: list[list[int]] = []
        for j in range(self.n):
            g, taken = self.gram[j], []
            total = g[-1, -1]
            if not total > 0:
                named.append(taken)
                continue
            explained = 0.0
            while True:
                rest = [a for a in range(len(TERMS)) if a not in taken]
                gains = {a: max(_explained(g, self._of([*taken, a])) - explained, 0.0) / total
                         for a in rest}
                for a in rest:
                    out[j, a] = gains[a]
                best = max(rest, key=gains.get) if rest else None
                if best is None or gains[best] < MIN_SHARE:
                    break
                taken.append(best)
                explained += gains[best] * total
            named.append(taken)
        return out, named

    def _of(self, terms: list[int]) -> list[int]:
        """The Gram's columns of candidates ``terms``."""
        return [c for a in terms for c in self.columns[a]]

    def delays(self) -> NDArray:
        """``(n,)`` best pure shifts [s], positive when the torque lags (0 where the chunks
        were too short to scan)."""
        if self.shift_count == 0:
            return np.zeros(self.n)
        spread = self.shift_squares - self.shift_sum**2 / self.shift_count  # about the mean
        out = np.zeros(self.n)
        for j in range(self.n):
            k = int(np.argmin(spread[:, j]))
            offset = 0.0
            if 0 < k < self.shifts.size - 1:  # a parabola through the three around the best
                low, mid, high = spread[k - 1, j], spread[k, j], spread[k + 1, j]
                curvature = low - 2 * mid + high
                if curvature > 0:
                    offset = 0.5 * (low - high) / curvature
            out[j] = -(self.shifts[k] + offset) * self.step
        return out

    def result(self, rmse: ArrayLike, *, noise: ArrayLike | None = None,
               joints: list[int] | None = None,
               remedy: dict[str, str] | None = None) -> list[JointDiagnosis]:
        """One ``JointDiagnosis`` per joint, from the joints' ``rmse`` ``(n,)`` [N m] (the
        validation's, over the same samples) and the ``noise`` ``(n,)`` [N m] the torque
        channel carries (None: unknown, no joint is called unexcited); ``joints``: their
        1-based numbers; ``remedy``: what adds each term (``remedies``)."""
        rmse = np.asarray(rmse, dtype=float)
        mean = self.torque_sum / max(self.count, 1)
        std = np.sqrt(np.maximum(self.torque_squares / max(self.count, 1) - mean**2, 0.0))
        noise = None if noise is None else np.asarray(noise, dtype=float)
        (shares, taken), delays = self.shares(), self.delays()
        joints = joints or list(range(1, self.n + 1))
        remedy = remedy or remedies()
        out = []
        for j in range(self.n):
            explained = rmse[j] <= UNEXPLAINED_RATIO * std[j]
            level = None if noise is None or not np.isfinite(noise[j]) else float(noise[j])
            if explained:
                status = "explained"
            elif level is not None and std[j] <= UNEXCITED_RATIO * level:
                status = "unexcited"
            else:
                status = "unexplained"
            by_term = {term: float(shares[j, a]) for a, term in enumerate(TERMS)}
            named = [TERMS[a] for a in taken[j]]
            if status == "unexcited":
                named = []  # a residual of noise names nothing
            out.append(JointDiagnosis(
                joint=joints[j], status=status, rmse=float(rmse[j]), torque_std=float(std[j]),
                noise=level, shares=by_term, named=named, delay_ms=1e3 * float(delays[j]),
                remedies={term: remedy[term] for term in named}))
        return out


def _explained(gram: NDArray, columns) -> float:
    """The sum of squares of the residual (the Gram's last column) that the least-squares
    fit on ``columns`` explains, by the normal equations on unit-scaled columns (a column of
    zeros, a joint that does not move, explains nothing)."""
    columns = list(columns)
    a = gram[np.ix_(columns, columns)]
    b = gram[columns, -1]
    scale = np.sqrt(np.diag(a))
    keep = scale > 0
    if not keep.any():
        return 0.0
    a, b, scale = a[np.ix_(keep, keep)], b[keep], scale[keep]
    a, b = a / np.outer(scale, scale), b / scale
    return float(b @ np.linalg.lstsq(a, b, rcond=_RCOND)[0])


def residual_diagnostics(t: ArrayLike, dq: ArrayLike, ddq: ArrayLike, measured: ArrayLike,
                         predicted: ArrayLike, *, noise: ArrayLike | None = None,
                         remedy: dict[str, str] | None = None) -> list[JointDiagnosis]:
    """The diagnoses of a model's ``predicted`` torques against ``measured`` ones ``(N, n)``
    along times ``t`` ``(N,)`` with the log's ``dq`` and ``ddq`` (a validation log, or the
    identification log itself); ``noise`` ``(n,)`` [N m]: the torque channel's noise, to tell
    an unexcited joint from an unexplained one (None: unknown). See the module docstring."""
    t = as_float_array("t", t)
    if t.ndim != 1 or t.size < 3 or not (np.diff(t) > 0).all():
        raise ValueError(f"`t` must be (N,) strictly increasing times with N >= 3, got shape "
                         f"{t.shape}")
    measured = as_float_array("measured", measured)
    predicted = as_float_array("predicted", predicted)
    if measured.ndim != 2:
        raise ValueError(f"`measured` must be (N, n), got {measured.shape}")
    sums = ResidualDiagnostics(measured.shape[1], float(np.median(np.diff(t))))
    sums.add(t, dq, ddq, measured, predicted)
    rmse = np.sqrt(np.mean((measured - predicted) ** 2, axis=0))
    return sums.result(rmse, noise=noise, remedy=remedy)
