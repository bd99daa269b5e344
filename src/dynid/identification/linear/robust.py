"""Robust and errors-in-variables least squares of base parameters, with the scikit-learn
estimator contract (``fit(W, tau)``; from factors or logs of any length through ``identify``).

- ``IRLS(loss="huber" | "tukey")``: M-estimation by iteratively reweighted least squares
  (Holland & Welsch 1977; Huber 1964's loss, tuning 1.345; Tukey's bisquare, Beaton & Tukey
  1974, tuning 4.685: 95 % efficiency on Gaussian noise). Each row's weight is
  ``psi(u) / u`` at its standardised residual ``u = r / s_j``, with ``s_j`` the MAD of joint
  j's residuals over 0.6745 (a consistent estimate of a Gaussian sigma that outliers do not
  inflate). Huber down-weights large residuals (weight ``c / |u|``); the bisquare rejects
  those beyond ``c`` s (weight 0). Every pass re-folds the rows, weighted, into triangular
  factors (``dynid.identification._stream``): a log of any length, its regressor never held
  whole — only the residuals (one number per row, the size of the torque log) for the MAD.
  The pass that folds the weights at ``x_k`` computes the residuals at ``x_k`` on the way,
  so the scale it uses is the previous iterate's MAD (one pass per iteration; the first pass
  only measures the OLS residuals); at a fixed point ``x`` and ``s`` agree, and the fixed
  point is the usual IRLS one (weights and MAD scale at the estimate). The start is OLS
  (statsmodels' RLM's default; the bisquare's objective is not convex: a start far off can
  settle in another minimum). ``covariance_`` is that of the last weighted least-squares step.
- ``TLS()``: total least squares (Golub & Van Loan 1980): the right singular vector of
  ``[W tau]`` for its least singular value, ``x = -v[:p] / v[p]``, taken exactly from the SVD
  of the triangular factor R of ``[W tau]`` (``A = Q R`` has A's singular values and right
  singular vectors): no second pass. It is the maximum-likelihood estimate when every entry
  of ``[W tau]`` carries independent noise of one variance; scale the columns first when they
  do not (or use ``ML`` with the covariance). ``covariance_``: the mean squared error matrix
  ``C_EIV + d d^T``. ``C_EIV`` is Gleser's (1981) covariance to second order (``_eiv_covariance``
  with ``C = sigma2 I``, ``sigma2 = s_{p+1}^2 / (m - p)``); its first-order term alone,
  ``sigma2 (1 + |x|^2) (W^T W - s_{p+1}^2 I)^-1`` (Van Huffel & Vandewalle 1991, §8), is too
  small where the noise is ~10 % of a column (z RMS 1.5, |z| up to 6 on arm3). ``d = x_TLS -
  x_OLS = s_{p+1}^2 (W^T W - s_{p+1}^2 I)^-1 x_OLS`` is TLS's correction for the regressor
  noise it assumes; when the regressor is exact (the noise only in the torques, as in a
  twin's log) that correction is TLS's bias, of order the noise variance, which no covariance
  holds: with ``C_EIV`` alone 4 to 6 of arm3's 24 coefficients lay beyond 5 sigma (issue 31;
  ``tests/test_sigma_coverage.py``). With ``d d^T`` the std covers in both cases, generously
  (z RMS 0.7) when the noise really is in every column.
- ``ML(regressor_noise, torque_noise)``: the Gaussian errors-in-variables maximum likelihood
  with a known error covariance, every row ``[w_i tau_i]`` observed with independent errors
  of covariance ``C = blockdiag(Sigma_W, sigma_tau^2)``: it minimises
  ``sum_i (tau_i - w_i x)^2 / (sigma_tau^2 + x^T Sigma_W x)``, the generalised TLS of
  Gleser (1981) (Van Huffel & Vandewalle 1991, §3.3 and §7): the generalised eigenvector of
  ``([W tau]^T [W tau], C)`` for its least eigenvalue, again exact from the factor R. This is
  not BIRDy's IDIM-ML (Leboutet et al. 2021, after Olsen, Swevers & Verdonck 2002), which
  propagates the joint-state noise through the dynamics sample by sample and minimises the
  resulting likelihood iteratively; with ``Sigma_W`` of the base regressor's columns it is its
  row-independent, constant-covariance case. ``covariance_``: Gleser's to second order
  (``_eiv_covariance``), whose first term is ``(sigma_tau^2 + x^T Sigma_W x) (W^T W - lambda
  Sigma_W)^-1``, lambda the least eigenvalue; ``sigma2_ = lambda / (m - p)``, about 1 when the
  stated noise is right (a check on it).

Physically consistent variants: ``dynid.identification.constrained.robust`` (PC-IRLS, each
step the CLS-3 LMI problem, as BIRDy's PC-IDIM-IRLS). The literature states no physically
consistent TLS or errors-in-variables ML: none is offered here.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Hashable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_float_array
from dynid.identification._stream import CHUNK_SAMPLES, Factors, Layout
from dynid.identification.linear._figures import (
    check_factors,
    coefficient_figures,
    regressor_figures,
)
from dynid.identification.linear.estimators import (
    RankDeficiencyError,
    _blocks,
    _LinearEstimator,
)

__all__ = ["IRLS", "LOSSES", "METHODS", "ML", "TLS", "IRLSConvergenceWarning",
           "irls_from_options", "robust_weights"]

#: Each loss's default tuning constant, in units of the residuals' scale: 95 % efficiency
#: on Gaussian noise (Huber 1964; Beaton & Tukey 1974).
LOSSES = {"huber": 1.345, "tukey": 4.685}

# MAD / MAD_GAUSSIAN estimates a Gaussian sigma (the median of |N(0, 1)| is 0.6745)
MAD_GAUSSIAN = 0.6744897501960817
# the smallest residual scale IRLS resolves, relative to a joint's RMS torque (about the
# precision of the constrained solver's steps)
SCALE_FLOOR = 1e-7


class IRLSConvergenceWarning(RuntimeWarning):
    """IRLS stopped at ``max_iter`` with its estimate or scale still changing."""


def robust_weights(u: NDArray, loss: str, tuning: float) -> NDArray:
    """``psi(u) / u`` of ``loss`` at standardised residuals ``u``: Huber ``min(1, c / |u|)``,
    Tukey's bisquare ``(1 - (u / c)^2)^2`` inside ``|u| < c``, 0 outside."""
    a = np.abs(u)
    if loss == "huber":
        return np.minimum(1.0, tuning / np.maximum(a, np.finfo(float).tiny))
    if loss == "tukey":
        return np.where(a < tuning, (1.0 - (u / tuning) ** 2) ** 2, 0.0)
    raise ValueError(f"`loss` must be one of {sorted(LOSSES)}, got {loss!r}")


def _joint(key: Hashable) -> int:
    """The joint of a group key ``(..., joint)``; 0 for a flat regressor's one group."""
    return int(key[-1]) if isinstance(key, tuple) else 0


def _mad(residuals: list[NDArray]) -> float:
    r = np.concatenate(residuals) if residuals else np.zeros(0)
    if r.size == 0:
        return 0.0
    return float(np.median(np.abs(r - np.median(r))) / MAD_GAUSSIAN)


Refold = Callable[[Callable[[Hashable, Layout, NDArray], NDArray]], Factors]


def refold_arrays(w: NDArray, y: NDArray, chunk: int = CHUNK_SAMPLES) -> Refold:
    """``refold(weights)`` for an in-memory regressor ``(N, n, p)`` with torques ``(N, n)``
    (one group per joint) or ``(m, p)`` with ``(m,)`` (one group): the factors of its rows,
    each times the square root of ``weights(key, layout, rows)`` — as ``fold_logs(...,
    weights=...)`` folds logs."""
    p = w.shape[-1]
    every = Layout.every(p)

    def refold(weights) -> Factors:
        out = Factors(p)
        for start in range(0, w.shape[0], chunk):
            part = slice(start, start + chunk)
            groups = ([(0, w[part], y[part])] if w.ndim == 2 else
                      [((0, j), w[part, j], y[part, j]) for j in range(w.shape[1])])
            for key, rows_w, rows_y in groups:
                rows = np.column_stack([rows_w, rows_y])
                rows *= np.sqrt(weights(key, every, rows))[:, None]
                out.add(key, every, rows)
        return out

    return refold


class IRLS(_LinearEstimator):
    """M-estimation by iteratively reweighted least squares (see the module).

    ``loss``: "huber" or "tukey"; ``tuning``: its constant in units of the MAD scale (default
    ``LOSSES[loss]``); at most ``max_iter`` passes, stopping when the estimate and the
    per-joint scales change by less than ``tol``: the standardised residuals (what the
    weights see) by ``tol`` RMS, the scales by ``tol`` relative (a constrained step may wander
    along directions the data do not see; the residuals do not). Learned besides OLS's
    figures:
    ``scale_`` (n,) each joint's MAD scale, ``n_iter_``, ``converged_``, ``rejected_`` (n,)
    the rows given weight 0 in the last pass, ``mean_weight_`` (n,); ``fit`` also gives
    ``weights_`` (m,) at ``coef_``. A flat regressor ``(m, p)`` has one scale. ``std_`` and
    ``covariance_`` are the last weighted least-squares step's (rows of weight 0 counted in
    its degrees of freedom), not Huber's sandwich: a lower bound of the M-estimate's spread.
    """

    refolds = True  # identify gives fit_factors the logs' rows again: ``refold``
    std_kind = "lower bound"  # the last weighted step's (see above; LinearModel.std_kind)

    def __init__(self, *, loss: str = "huber", tuning: float | None = None,
                 max_iter: int = 50, tol: float = 1e-4) -> None:
        super().__init__()
        self.loss = loss
        self.tuning = tuning
        self.max_iter = max_iter
        self.tol = tol

    @property
    def name(self) -> str:
        return f"irls-{self.loss}"

    def check_params(self) -> float:
        """The tuning constant; a ValueError naming a bad hyperparameter."""
        if self.loss not in LOSSES:
            raise ValueError(f"`loss` must be one of {sorted(LOSSES)}, got {self.loss!r}")
        tuning = LOSSES[self.loss] if self.tuning is None else self.tuning
        if isinstance(tuning, bool) or not isinstance(tuning, (int, float, np.number)) \
                or not np.isfinite(tuning) or tuning <= 0:
            raise ValueError(f"`tuning` must be a finite number > 0, got {self.tuning!r}")
        if isinstance(self.max_iter, bool) or not isinstance(self.max_iter, (int, np.integer)) \
                or self.max_iter < 1:
            raise ValueError(f"`max_iter` must be an integer >= 1, got {self.max_iter!r}")
        if not (isinstance(self.tol, (int, float, np.floating)) and 0 < self.tol < 1):
            raise ValueError(f"`tol` must be a number in (0, 1), got {self.tol!r}")
        return float(tuning)

    def fit(self, regressor: ArrayLike, torque: ArrayLike) -> IRLS:
        self.check_params()
        w, y, n = _blocks(regressor, torque, need_blocks=False)
        if n is None:
            refold = refold_arrays(w, y)
        else:
            refold = refold_arrays(w.reshape(-1, n, w.shape[1]), y.reshape(-1, n))
        self.fit_factors(refold(lambda key, layout, rows: np.ones(rows.shape[0])),
                         refold=refold)
        self.residuals_ = y - w @ self.coef_
        joints = np.zeros(y.size, dtype=int) if n is None else np.tile(np.arange(n),
                                                                        y.size // n)
        scale = self.scale_[joints]
        u = np.divide(self.residuals_, scale, out=np.zeros_like(scale), where=scale > 0)
        self.weights_ = robust_weights(u, self.loss, self.check_params())
        return self

    def row_weights(self) -> Callable[[Hashable, Layout, NDArray], NDArray]:
        """``weights(key, layout, rows)`` of the rows as the fitted estimate weighs them (at
        ``coef_``, with ``scale_``): ``fold_logs(..., weights=...)`` folds the problem this fit
        solved at convergence again (the held-out choice of the model's structure)."""
        tuning, x, scale = self.check_params(), self.coef_, self.scale_

        def weights(key, layout: Layout, rows: NDArray) -> NDArray:
            own = x[layout.columns]
            if layout.regrouping is not None:
                own = layout.regrouping @ own
            r = rows[:, -1] - rows[:, :-1] @ own
            j = _joint(key)
            if scale[j] == 0:
                return np.ones(r.size)
            return robust_weights(r / scale[j], self.loss, tuning)

        return weights

    def fit_factors(self, factors: Factors, *, refold: Refold | None = None) -> IRLS:
        """Fit from ``factors`` (the unweighted rows: OLS's start and the relative error) and
        ``refold(weights)``, which folds the same rows again weighted (``refold_arrays``, or
        ``fold_logs(..., weights=...)`` for logs): the rows' residuals are needed each pass."""
        self.check_params()
        if refold is None:
            raise ValueError("`refold`: IRLS reweights every row each pass; give the function "
                             "that folds the rows again (`refold_arrays`, or identify's logs)")
        check_factors(factors)

        def solve(weighted: Factors) -> NDArray:
            self._solve(weighted)
            return self.coef_.copy()

        coef, record = self.iterate(factors, refold, solve)
        self.coef_ = coef  # the last solve's figures stand: its weighted step's, at coef
        self.relative_error_percent_ = float(100.0 * np.sqrt(
            sum(factors.residual_squares(coef).values()) / factors.target_squares()))
        for name, value in record.items():
            setattr(self, f"{name}_", value)
        self.details_ = {"loss": self.loss, "tuning": self.check_params(),
                         "iterations": int(self.n_iter_), "converged": bool(self.converged_),
                         "scale": self.scale_.tolist(), "rejected": self.rejected_.tolist(),
                         "mean_weight": self.mean_weight_.tolist()}
        if not self.converged_:
            warnings.warn(f"IRLS ({self.loss}) stopped after {self.max_iter} passes with its "
                          "estimate still changing; raise `max_iter`",
                          IRLSConvergenceWarning, stacklevel=2)
        return self

    def iterate(self, factors: Factors, refold: Refold, solve: Callable[[Factors], NDArray]
                ) -> tuple[NDArray, dict]:
        """The IRLS passes (see the module) with ``solve(factors) -> x`` as each weighted
        step (least squares here; the CLS-3 problem for PC-IRLS): the estimate and the record
        ``{n_iter, converged, scale, rejected, mean_weight}``."""
        tuning = self.check_params()
        n = 1 + max(_joint(key) for key in factors.keys())
        x = solve(factors)
        state = {"x": x, "scale": None}
        residuals: list[list[NDArray]] = [[] for _ in range(n)]
        sums = np.zeros((3, n))  # rows, weight sum, zero weights per joint
        power = np.zeros(n)  # each joint's sum of squared torques (the first pass's)

        def weights(key, layout: Layout, rows: NDArray) -> NDArray:
            own = state["x"][layout.columns]
            if layout.regrouping is not None:
                own = layout.regrouping @ own
            r = rows[:, -1] - rows[:, :-1] @ own
            j = _joint(key)
            residuals[j].append(r)
            if state["scale"] is None:
                power[j] += rows[:, -1] @ rows[:, -1]
            scale = state["scale"]
            if scale is None or scale[j] == 0:  # no scale yet, or an exact fit: weight 1
                out = np.ones(r.size)
            else:
                out = robust_weights(r / scale[j], self.loss, tuning)
            sums[:, j] += (r.size, out.sum(), np.count_nonzero(out == 0))
            return out

        def measured() -> tuple[NDArray, list[NDArray]]:
            """The residuals' scale per joint and the residuals themselves (per joint), of
            the pass just folded. Residuals below SCALE_FLOOR of a joint's RMS torque are
            rounding (a noise-free log, a solver's tolerance): the scale is floored there."""
            floor = SCALE_FLOOR * np.sqrt(power / np.maximum(sums[0], 1))
            out = np.maximum([_mad(rows) for rows in residuals], floor)
            flat = [np.concatenate(rows) for rows in residuals]
            for rows in residuals:
                rows.clear()
            return out, flat

        refold(weights)  # the OLS residuals' scale
        state["scale"], fitted = measured()
        converged, passes = False, 0
        while passes < self.max_iter:
            passes += 1
            sums[:] = 0
            weighted = refold(weights)
            new_x = solve(weighted)
            new_scale, new_fitted = measured()  # at state["x"]: the scale of the next pass
            # what the weights see: the standardised residuals (RMS change per joint), and
            # the scales; a constrained step may wander along directions the data do not
            # see (the LMIs' boundary), the residuals do not. Pass k folds the residuals of
            # step k - 1, so the first pass compares the start with itself: not a test
            # (a joint without torque, scale 0, is fitted exactly: nothing to test)
            live = state["scale"] > 0
            change = max((np.sqrt(np.mean((new - old) ** 2)) / scale for new, old, scale, on
                          in zip(new_fitted, fitted, state["scale"], live, strict=True) if on),
                         default=0.0)
            scale_change = float(np.max(np.abs(new_scale - state["scale"])[live]
                                        / state["scale"][live], initial=0.0))
            state["x"], state["scale"], fitted = new_x, new_scale, new_fitted
            if passes > 1 and change <= self.tol and scale_change <= self.tol:
                converged = True
                break
        rows = np.maximum(sums[0], 1)
        return state["x"], {"n_iter": passes, "converged": converged,
                            "scale": state["scale"], "rejected": sums[2].astype(int),
                            "mean_weight": sums[1] / rows}


class _EIV:
    """TLS and ML share the fit from the factor of ``[W tau]``."""

    #: Gleser's covariance (TLS: and its bias if W is exact) covers (``LinearModel.std_kind``)
    std_kind = "covariance"

    def fit(self, regressor: ArrayLike, torque: ArrayLike):
        from dynid.identification._stream import from_arrays

        w, y, n = _blocks(regressor, torque, need_blocks=False)
        self.fit_factors(from_arrays(w if n is None else w.reshape(-1, n, w.shape[1]),
                                     y if n is None else y.reshape(-1, n)))
        self.residuals_ = y - w @ self.coef_
        return self

    def fit_factors(self, factors: Factors):
        """Fit compressed rows (see the module)."""
        import scipy.linalg

        noise = self._covariance(factors.n_columns)
        m, p = check_factors(factors)
        stacked = factors.stacked()
        gram = stacked.T @ stacked  # [W tau]^T [W tau], (p + 1, p + 1)
        regressor_figures(self, stacked[:-1, :-1], m)
        if self.rank_ < p:  # ML's pencil (C, [W tau]^T [W tau]) is then singular too
            raise RankDeficiencyError(
                f"{self.name}: the regressor is rank deficient ({self.rank_} < {p} columns): "
                "errors in variables has no estimate then (no minimum-norm one, as least "
                "squares has); excite every coefficient, or reduce the regressor to base "
                "parameters")
        if noise is None:  # TLS: the SVD of the factor
            _, singular, vt = np.linalg.svd(stacked)
            v, least = vt[-1], float(singular[-1] ** 2)
        else:  # ML: C v = mu (A^T A) v, the largest mu is the least ratio
            try:
                mu, vectors = scipy.linalg.eigh(noise, gram)
            except np.linalg.LinAlgError:  # "the leading minor of order k of B is not ..."
                raise RankDeficiencyError(
                    f"{self.name}: [W tau]^T [W tau] is not numerically positive definite "
                    f"(the regressor's condition number is {self.condition_number_:.3g}): "
                    "some coefficient is barely excited; excite it, or reduce the regressor "
                    "to base parameters") from None
            v, least = vectors[:, -1], float(1.0 / mu[-1]) if mu[-1] > 0 else np.inf
        if abs(v[-1]) <= np.sqrt(np.finfo(float).eps) * np.abs(v).max():
            raise ValueError(f"{self.name}: no solution — the least singular direction of "
                             "[W tau] has no torque component (the regressor alone is "
                             "nearly rank deficient: reduce it to base parameters)")
        coef = -v[:-1] / v[-1]
        sigma2 = least / max(m - p, 1)
        if noise is None:  # TLS: one noise variance on every entry of [W tau], estimated
            cov = _eiv_covariance(gram[:-1, :-1] - least * np.eye(p), coef,
                                  sigma2 * np.eye(p + 1), m)
            if np.isfinite(cov).all():  # TLS's correction of OLS: its bias if W is exact
                correction = coef - scipy.linalg.solve_triangular(stacked[:-1, :-1],
                                                                  stacked[:-1, -1])
                cov = cov + np.outer(correction, correction)
        else:
            cov = _eiv_covariance(gram[:-1, :-1] - least * noise[:-1, :-1], coef, noise, m)
        coefficient_figures(self, coef, cov, sigma2, factors)
        self.least_ = least
        self.details_ = {"least_eigenvalue": least}
        return self

    def predict(self, regressor: ArrayLike) -> NDArray:
        """``W coef_`` with W ``(..., p)`` -> ``(...)``."""
        return _LinearEstimator.predict(self, regressor)


def _eiv_covariance(inner: NDArray, coef: NDArray, noise: NDArray, m: int) -> NDArray:
    """The covariance ``(p, p)`` of an errors-in-variables estimate ``coef`` from ``m`` rows
    with the error covariance ``noise`` ``(p + 1, p + 1)`` of a row of ``[W tau]``, to second
    order (Gleser 1981): ``s K + m K (s Sigma_W - a a^T) K``, ``K = inner^-1`` (``inner`` the
    noise-free ``W^T W`` as the data estimate it), ``s = x~^T C x~`` the residual variance of
    a row (``x~ = [x, -1]``), ``a = Sigma_W x``: the sandwich of the estimating equation
    ``sum_i w_i r_i + Sigma_W x r_i^2 / s = 0``, whose score has variance ``s W0^T W0 +
    m (s Sigma_W - a a^T)``. The first term alone (Van Huffel & Vandewalle 1991, §8) is too
    small where the regressor noise is ~10 % of a column (measured: z RMS 1.3 for ML, 1.5 for
    TLS on arm3)."""
    p = coef.size
    try:
        k = np.linalg.inv(inner)
    except np.linalg.LinAlgError:
        return np.full((p, p), np.inf)
    augmented = np.append(coef, -1.0)
    s = float(augmented @ noise @ augmented)
    a = noise[:-1, :-1] @ coef
    return s * k + m * k @ (s * noise[:-1, :-1] - np.outer(a, a)) @ k


class TLS(_EIV):
    """Total least squares from the SVD of the factor of ``[W tau]`` (see the module).
    ``least_``: the least squared singular value of ``[W tau]``."""

    name = "tls"

    def _covariance(self, p: int) -> None:
        return None


class ML(_EIV):
    """Errors-in-variables maximum likelihood with a known error covariance (see the module):
    ``regressor_noise`` (p,) the noise std of each regressor column, one std for every
    column, or their (p, p) covariance; ``torque_noise`` the torque noise std [N m] (> 0).
    ``least_``: the least generalised eigenvalue (the likelihood's weighted residual sum)."""

    name = "ml"

    def __init__(self, *, regressor_noise: ArrayLike, torque_noise: float) -> None:
        self.regressor_noise = regressor_noise
        self.torque_noise = torque_noise

    def _covariance(self, p: int) -> NDArray:
        noise = as_float_array("regressor_noise", self.regressor_noise)
        if noise.size == 1 and noise.ndim <= 1:
            noise = np.full(p, noise.item())
        if noise.shape == (p,):
            if (noise < 0).any():
                raise ValueError("`regressor_noise` must be standard deviations >= 0")
            sigma_w = np.diag(noise**2)
        elif noise.shape == (p, p):
            if not np.allclose(noise, noise.T) or np.linalg.eigvalsh(noise)[0] < \
                    -np.sqrt(np.finfo(float).eps) * max(np.abs(noise).max(), 1e-300):
                raise ValueError("`regressor_noise` as a matrix must be a symmetric positive "
                                 "semidefinite covariance")
            sigma_w = noise
        else:
            raise ValueError(f"`regressor_noise` must be ({p},) standard deviations or a "
                             f"({p}, {p}) covariance, got shape {noise.shape}")
        torque = self.torque_noise
        if isinstance(torque, bool) or not isinstance(torque, (int, float, np.number)) \
                or not np.isfinite(torque) or torque <= 0:
            raise ValueError(f"`torque_noise` must be a finite number > 0, got {torque!r}")
        out = np.zeros((p + 1, p + 1))
        out[:p, :p] = sigma_w
        out[p, p] = float(torque) ** 2
        return out


def irls_from_options(loss: str) -> Callable[[dict], IRLS]:
    """``make(options)``: an unfitted ``IRLS(loss)`` with the settings ``options`` holds
    (``tuning``, ``max_iter``, ``tol``, taken out of it): a registered method's estimator."""
    def make(options: dict) -> IRLS:
        return IRLS(loss=loss, **{key: options.pop(key) for key in ("tuning", "max_iter", "tol")
                                  if key in options})
    return make


def _methods() -> tuple:
    from dynid.identification.estimate import Estimate, Method, Problem
    from dynid.identification.linear.idim import identify

    def linear(name: str, make: Callable[[dict], object]):
        def run(problem: Problem, **options) -> Estimate:
            estimator = make(options)
            model = identify(problem.robot, problem.logs, friction=problem.friction,
                             estimator=estimator, **options)
            converged = bool(getattr(estimator, "converged_", True))
            return Estimate(name, model, 0.0, converged,
                            "converged" if name.startswith("irls") and converged else
                            "stopped at max_iter" if not converged else "closed form",
                            iterations=int(getattr(estimator, "n_iter_", 0)),
                            details=dict(getattr(estimator, "details_", {})))
        return run

    def ml(options: dict) -> ML:
        missing = [key for key in ("regressor_noise", "torque_noise") if key not in options]
        if missing:
            raise ValueError(f"method 'ml' needs the noise it assumes: give "
                             f"{' and '.join(f'`{key}`' for key in missing)}")
        return ML(regressor_noise=options.pop("regressor_noise"),
                  torque_noise=options.pop("torque_noise"))

    needs = frozenset({"ddq", "effort"})
    return (
        Method("irls-huber", "linear", False, needs,
               "Holland & Welsch 1977 (IRLS); Huber 1964 loss, MAD scale", linear(
                   "irls-huber", irls_from_options("huber"))),
        Method("irls-tukey", "linear", False, needs,
               "Holland & Welsch 1977 (IRLS); Beaton & Tukey 1974 bisquare, MAD scale",
               linear("irls-tukey", irls_from_options("tukey"))),
        Method("tls", "linear", False, needs, "Golub & Van Loan 1980 (TLS)",
               linear("tls", lambda options: TLS())),
        Method("ml", "linear", False, needs,
               "Gleser 1981; Van Huffel & Vandewalle 1991 §3.3 (EIV ML, known covariance)",
               linear("ml", ml)),
    )


#: The methods of this module, behind the one contract (``dynid.identification.estimate``).
METHODS = _methods()
