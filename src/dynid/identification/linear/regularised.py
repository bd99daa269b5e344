"""Ridge and elastic net on the base parameters, with the scikit-learn estimator contract,
fitted from the triangular factor of ``[W tau]`` (``fit(W, tau)`` folds its arrays and calls
``fit_factors``; ``identify(robot, logs, estimator=Ridge(alpha=...))`` folds logs of any
length the same way).

One objective for both, so that they meet where they should:

    1/2 |tau - W x|^2 + alpha (l1_ratio |x|_1 + (1 - l1_ratio) / 2 |x|^2)

- ``Ridge(alpha=a)`` is ``l1_ratio = 0``: ``x = (W^T W + a I)^-1 W^T tau`` (Hoerl & Kennard
  1970), solved as least squares on ``[R; sqrt(a) I] x = [z; 0]`` (R, z from the factor: no
  Gram matrix is inverted);
- ``ElasticNet(alpha=a, l1_ratio=r)`` (Zou & Hastie 2005): ``r = 1`` is the lasso (Tibshirani
  1996), ``r = 0`` ridge. Solved exactly on the Gram matrix ``R^T R`` by feature-sign search
  (Lee, Battle, Raina & Ng 2007, with the ridge part in the Hessian): an active set and its
  signs, the stationarity equations solved on it, a line search to the first sign change; it
  ends in finitely many steps where every optimality condition holds, whatever the
  conditioning (cyclic coordinate descent crawls on ill-conditioned regressors: still short of
  the optimum after 10^5 sweeps on a 5000 x 70 problem of condition number 10^4, measured).

Unlike scikit-learn's ``ElasticNet`` the squared error is not divided by the row count: alpha is
in torque squared, and a longer log weighs the data more against the penalty (as a prior's
would). The penalty acts on every unknown the regressor has — base parameters, friction, rotor
inertias and the logs' offset deviations alike — with no column scaling.

Figures: ``covariance_`` is the sandwich ``sigma2 M^-1 W^T W M^-1`` with
``M = W^T W + alpha (1 - l1_ratio) I`` (ridge) and, for the elastic net on its active set,
Tibshirani's (1996, §2.5) approximation ``M = W_A^T W_A + alpha (1 - r) I + alpha r
diag(1 / |x_A|)``; a coefficient set to zero has std 0 (and ``relative_std_percent_`` inf).
``sigma2_ = |tau - W coef_|^2 / (m - k)``, k the coefficients not set to zero. ``rank_``,
``singular_`` and ``condition_number_`` are the unregularised regressor's.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dynid.identification._stream import Factors, from_arrays
from dynid.identification.linear._figures import (
    check_factors,
    coefficient_figures,
    compressed,
    regressor_figures,
)
from dynid.identification.linear.estimators import _blocks, _LinearEstimator

__all__ = ["METHODS", "ElasticNet", "ElasticNetConvergenceWarning", "Ridge",
           "check_penalty", "elastic_net", "penalised_from_options"]


class ElasticNetConvergenceWarning(RuntimeWarning):
    """Feature-sign search stopped at its step limit before the optimality conditions
    held."""


def check_penalty(alpha, l1_ratio) -> tuple[float, float]:
    """``alpha`` >= 0 and ``l1_ratio`` in [0, 1] as floats; a ValueError naming the one that
    is not."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating, np.integer)) \
            or not np.isfinite(alpha) or alpha < 0:
        raise ValueError(f"`alpha` must be a finite number >= 0, got {alpha!r}")
    if isinstance(l1_ratio, bool) or not isinstance(
            l1_ratio, (int, float, np.floating, np.integer)) or not 0 <= l1_ratio <= 1:
        raise ValueError(f"`l1_ratio` must be a number in [0, 1], got {l1_ratio!r}")
    return float(alpha), float(l1_ratio)


def elastic_net(r: NDArray, z: NDArray, alpha: float, l1_ratio: float, *,
                max_steps: int | None = None) -> tuple[NDArray, int, bool]:
    """The minimiser of ``1/2 |R x - z|^2 + alpha (l1 |x|_1 + (1 - l1) / 2 |x|^2)``, the
    feature-sign steps taken and whether the optimality conditions hold (see the module)."""
    p = r.shape[1]
    c = r.T @ z
    l1, l2 = alpha * l1_ratio, alpha * (1.0 - l1_ratio)
    hessian = r.T @ r + l2 * np.eye(p)
    if l1 == 0.0:
        return np.linalg.solve(hessian, c), 0, True

    def objective(x: NDArray) -> float:
        return float(0.5 * np.sum((r @ x - z) ** 2) + 0.5 * l2 * x @ x
                     + l1 * np.abs(x).sum())

    def tolerance(x: NDArray) -> float:  # the solves' rounding in the gradient's units
        return 1e-9 * (np.abs(hessian).max() * np.abs(x).max() + np.abs(c).max() + l1)

    max_steps = 20 * p + 100 if max_steps is None else max_steps
    x = np.zeros(p)
    signs = np.zeros(p)
    steps = 0
    while steps < max_steps:
        gradient = hessian @ x - c
        # a zero coefficient whose gradient beats the l1 pull enters, on the descent's sign
        violation = np.where(x == 0, np.abs(gradient) - l1, -np.inf)
        entering = int(np.argmax(violation))
        if violation[entering] <= tolerance(x):
            return x, steps, True
        signs[entering] = -np.sign(gradient[entering])
        active = (x != 0) | (np.arange(p) == entering)
        while steps < max_steps:  # feature-sign steps on the active set and its signs
            steps += 1
            on = np.flatnonzero(active)
            target = np.zeros(p)
            # least squares: with l1_ratio = 1 the active columns may be collinear (no ridge)
            target[on] = np.linalg.lstsq(hessian[np.ix_(on, on)], c[on] - l1 * signs[on],
                                         rcond=None)[0]
            # the best of the target and each point where an active coefficient hits zero
            hits = {int(k): x[k] / (x[k] - target[k]) for k in on
                    if x[k] != 0 and np.sign(target[k]) != np.sign(x[k])}
            best = min([1.0, *hits.values()], key=lambda t: objective(x + t * (target - x)))
            x = x + best * (target - x)
            for k, t in hits.items():
                if t == best:
                    x[k] = 0.0  # exactly: the line search stopped where it crosses zero
            active = x != 0
            signs = np.sign(x)
            gradient = hessian @ x - c
            if np.all(np.abs(gradient[active] + l1 * signs[active]) <= tolerance(x)):
                break
    return x, steps, False


class _Penalised:
    """Ridge and elastic net share the fit from factors (see the module)."""

    l1_ratio: float
    #: the sandwich leaves out the penalty's shrinkage towards zero (``LinearModel.std_kind``)
    std_kind = "lower bound"

    @property
    def regularises(self) -> bool:
        """Whether the penalty determines every coefficient, the data's unexcited directions
        too (alpha > 0): then rank-deficient data are fitted, not refused."""
        return check_penalty(self.alpha, self.l1_ratio)[0] > 0

    def _fit(self, factors: Factors) -> None:
        alpha, l1_ratio = check_penalty(self.alpha, self.l1_ratio)
        m, p = check_factors(factors)
        r, z, rho = compressed(factors)
        regressor_figures(self, r, m)
        if l1_ratio == 0.0:
            # least squares on [R; sqrt(a) I] x = [z; 0] (alpha 0 on rank-deficient data:
            # the least-norm solution, which fit_base then refuses, naming what is missing)
            stacked = np.vstack([r, np.sqrt(alpha) * np.eye(p)])
            coef = np.linalg.lstsq(stacked, np.concatenate([z, np.zeros(p)]), rcond=None)[0]
            self.n_iter_, self.converged_ = 0, True
        else:
            coef, self.n_iter_, self.converged_ = elastic_net(r, z, alpha, l1_ratio)
            if not self.converged_:
                warnings.warn(f"elastic net: feature-sign search stopped after {self.n_iter_} "
                              "steps before its optimality conditions held; the estimate is "
                              "approximate", ElasticNetConvergenceWarning, stacklevel=3)
        active = np.flatnonzero(coef) if l1_ratio > 0 else np.arange(p)
        residual = float(np.sum((r @ coef - z) ** 2) + rho**2)
        sigma2 = residual / max(m - active.size, 1)
        covariance = np.zeros((p, p))
        if active.size:
            gram = r[:, active].T @ r[:, active]
            middle = gram + alpha * (1.0 - l1_ratio) * np.eye(active.size)
            if l1_ratio > 0:
                middle = middle + alpha * l1_ratio * np.diag(1.0 / np.abs(coef[active]))
            inverse = np.linalg.pinv(middle)
            covariance[np.ix_(active, active)] = sigma2 * inverse @ gram @ inverse.T
        self.active_ = active
        coefficient_figures(self, coef, covariance, sigma2, factors)
        self.details_ = {"alpha": alpha, "l1_ratio": l1_ratio, "active": int(active.size),
                         "iterations": int(self.n_iter_)}

    def fit(self, regressor: ArrayLike, torque: ArrayLike):
        w, y, n = _blocks(regressor, torque, need_blocks=False)
        factors = from_arrays(w if n is None else w.reshape(-1, n, w.shape[1]),
                              y if n is None else y.reshape(-1, n))
        self._fit(factors)
        self.residuals_ = y - w @ self.coef_
        return self

    def fit_factors(self, factors: Factors):
        """Fit compressed rows (see the module)."""
        self._fit(factors)
        return self

    def predict(self, regressor: ArrayLike) -> NDArray:
        """``W coef_`` with W ``(..., p)`` -> ``(...)``."""
        return _LinearEstimator.predict(self, regressor)


class Ridge(_Penalised):
    """Ridge regression, ``(W^T W + alpha I)^-1 W^T tau`` (see the module); ``alpha`` >= 0
    [N^2 m^2 per unit squared of the coefficients]."""

    name = "ridge"
    l1_ratio = 0.0

    def __init__(self, *, alpha: float = 1.0) -> None:
        self.alpha = alpha


class ElasticNet(_Penalised):
    """Elastic net (see the module): ``alpha`` >= 0, ``l1_ratio`` in [0, 1] (1: the lasso,
    0: ridge)."""

    name = "elastic-net"

    def __init__(self, *, alpha: float = 1.0, l1_ratio: float = 0.5) -> None:
        self.alpha = alpha
        self.l1_ratio = l1_ratio


def penalised_from_options(kind: type) -> Callable[[dict], Ridge | ElasticNet]:
    """``make(options)``: an unfitted ``Ridge`` or ``ElasticNet`` with the settings ``options``
    holds (``alpha``, ``l1_ratio``, taken out of it; the others keep the class's defaults): a
    registered method's estimator."""
    keys = ("alpha",) if kind is Ridge else ("alpha", "l1_ratio")

    def make(options: dict) -> Ridge | ElasticNet:
        return kind(**{key: options.pop(key) for key in keys if key in options})
    return make


def _methods() -> tuple:
    from dynid.identification.estimate import Estimate, Method, Problem
    from dynid.identification.linear.idim import identify

    def run_with(name: str, make):
        def run(problem: Problem, **options) -> Estimate:
            estimator = make(options)
            model = identify(problem.robot, problem.logs, friction=problem.friction,
                             estimator=estimator, **options)
            return Estimate(name, model, 0.0, bool(estimator.converged_),
                            "optimal" if estimator.converged_ else "stopped at max steps",
                            iterations=int(estimator.n_iter_), details=dict(estimator.details_))
        return run

    needs = frozenset({"ddq", "effort"})
    return (
        Method("ridge", "linear", False, needs, "Hoerl & Kennard 1970 (ridge)",
               run_with("ridge", penalised_from_options(Ridge))),
        Method("elastic-net", "linear", False, needs,
               "Zou & Hastie 2005 (elastic net); Lee et al. 2007 (feature-sign search)",
               run_with("elastic-net", penalised_from_options(ElasticNet))),
    )


#: The methods of this module, behind the one contract (``dynid.identification.estimate``).
METHODS = _methods()
