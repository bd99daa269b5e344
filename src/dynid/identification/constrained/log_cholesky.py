"""Log-Cholesky least squares inside the bounds (Rucker & Wensing 2022, with the bounds of
``dynid.robot.bounds`` built into the coordinates).

Every link is a body of mass ``m``, centre of mass ``c`` and mass covariance ``C`` (the second
moment about the CoM per unit mass, [m^2]); its pseudo-inertia is

    J = m [[C + c c^T, c], [c^T, 1]]

and ``J > 0`` (a physical body, density realizable) exactly when ``m > 0`` and ``C > 0``. The
coordinates map every real vector into the interior of the bounds:

- the CoM into its box: ``c = lower + (upper - lower) * sigmoid(s)``;
- the covariance ``C = L L^T`` with ``L`` lower triangular, ``exp`` on its diagonal (the
  log-Cholesky factor): positive definite whatever the entries;
- the masses into their bounds: ``m_k = lo_k + (hi_k - lo_k) * sigmoid(a_k + lambda)``; with a
  total-mass range ``[T_lo, T_hi]`` the total is a coordinate too,
  ``T = T_lo + (T_hi - T_lo) * sigmoid(b)``, and ``lambda`` is the one shift of the ``a_k`` that
  makes the masses add up to it (without the range, ``lambda = 0``). The common shift of the
  ``a_k`` is then free (``lambda`` absorbs it): a residual row on their mean pins it.

So every point the solver visits is consistent and inside the box, mass and total-mass bounds
by construction (a bounding ellipsoid, when the bounds give one, is not built in: the result's
consistency report checks it). The fit is CLS-3's least squares (compressed data, Euclidean
rows towards the prior), started from CLS-3's solution drawn slightly into the open region,
with an analytic Jacobian.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dynid.robot.bounds import ParameterBounds
from dynid.robot.inertia import (
    FIRST_MOMENT,
    MASS,
    N_LINK_PARAMETERS,
    from_pseudo_inertia,
    pseudo_inertia,
)

__all__ = ["BoundedLogCholesky", "CurrentGains", "fit_log_cholesky"]

# one link's coordinates, in this order: a (mass), s (CoM, 3), d (log of L's diagonal, 3),
# l21, l31, l32 (L below its diagonal)
_A = 0
_S = slice(1, 4)
_D = slice(4, 7)
_OFF = slice(7, 10)
_BELOW = ((1, 0), (2, 0), (2, 1))  # (row, column) in L of l21, l31, l32
# how far inside the open bounds the start is drawn, as a fraction of each range
START_MARGIN = 1e-5


def _sigmoid(x: NDArray) -> NDArray:
    from scipy.special import expit

    return expit(x)


def _logit(p: NDArray) -> NDArray:
    from scipy.special import logit

    return logit(p)


@dataclass(frozen=True)
class BoundedLogCholesky:
    """The coordinates of the module for ``n`` links under ``bounds``: ``size`` reals, ten per
    link (``a, s_x, s_y, s_z, d_1, d_2, d_3, l21, l31, l32``), then ``b`` (the total mass)
    when the bounds' total-mass range narrows the sum of the link ranges."""

    mass_lower: NDArray  # (n,) [kg]
    mass_width: NDArray  # (n,) [kg]
    com_lower: NDArray  # (n, 3) [m]
    com_width: NDArray  # (n, 3) [m]
    total: tuple[float, float] | None  # (T_lo, T_hi - T_lo) [kg], None: masses independent

    @classmethod
    def from_bounds(cls, bounds: ParameterBounds) -> BoundedLogCholesky:
        """The map for ``bounds``; ValueError where the bounds leave no open region (a total
        mass range that only the links' extreme masses reach)."""
        lower = np.array([link.mass[0] for link in bounds.links])
        width = np.array([link.mass[1] - link.mass[0] for link in bounds.links])
        com_lower = np.array([link.com_lower for link in bounds.links])
        com_width = np.array([link.com_upper - link.com_lower for link in bounds.links])
        total = None
        if bounds.total_mass is not None:
            low = max(bounds.total_mass[0], lower.sum())
            high = min(bounds.total_mass[1], lower.sum() + width.sum())
            if low > high or (width.sum() > 0
                              and (high <= lower.sum() or low >= lower.sum() + width.sum())):
                raise ValueError(
                    f"`bounds`: the total-mass range {list(bounds.total_mass)} kg meets the "
                    f"links' mass bounds ({lower.sum():g} to {lower.sum() + width.sum():g} kg) "
                    "at most on their boundary: no open region for log-Cholesky coordinates")
            if low > lower.sum() or high < lower.sum() + width.sum():
                total = (float(low), float(high - low))
        return cls(mass_lower=lower, mass_width=width, com_lower=com_lower,
                   com_width=com_width, total=total)

    @property
    def n_links(self) -> int:
        return self.mass_lower.size

    @property
    def size(self) -> int:
        return N_LINK_PARAMETERS * self.n_links + (self.total is not None)

    # --- the map and its derivative -------------------------------------------------------

    def _shift(self, a: NDArray, excess: float) -> float:
        """``lambda`` with ``sum_k w_k sigmoid(a_k + lambda) = excess`` (0 < excess < sum w,
        kept off 0 and sum w where a sigmoid rounds to 0 or 1): the sum rises monotonically in
        lambda and is bracketed by the shifts that put every link at the mean fraction
        ``excess / sum w``, once from above and once from below (widened by one against
        rounding)."""
        from scipy.optimize import brentq

        live = self.mass_width > 0
        w, a = self.mass_width[live], a[live]
        if not live.any():
            return 0.0
        fraction = np.clip(excess / w.sum(), np.finfo(float).tiny, 1 - np.finfo(float).eps)
        centre = float(_logit(fraction))
        low, high = centre - a.max() - 1.0, centre - a.min() + 1.0
        return brentq(lambda shift: w @ _sigmoid(a + shift) - fraction * w.sum(), low, high,
                      xtol=1e-14 * max(1.0, abs(low), abs(high)), rtol=4 * np.finfo(float).eps)

    def _masses(self, theta: NDArray) -> tuple[NDArray, NDArray]:
        """Masses ``(n,)`` and their derivative ``(n, n + 1)`` by ``a`` (and ``b``)."""
        n = self.n_links
        a = theta[: N_LINK_PARAMETERS * n : N_LINK_PARAMETERS]
        jacobian = np.zeros((n, n + 1))
        if self.total is None:
            sig = _sigmoid(a)
            jacobian[:, :n] = np.diag(self.mass_width * sig * (1 - sig))
            return self.mass_lower + self.mass_width * sig, jacobian
        low, span = self.total
        sig_b = _sigmoid(theta[N_LINK_PARAMETERS * n])
        excess = low + span * sig_b - self.mass_lower.sum()
        sig = _sigmoid(a + self._shift(a, excess))
        slope = self.mass_width * sig * (1 - sig)  # dm_k / d(a_k + lambda)
        total_slope = max(slope.sum(), np.finfo(float).tiny)
        # implicit function theorem on sum_k m_k = T: d lambda / d a_j = -slope_j / sum slope
        jacobian[:, :n] = np.diag(slope) - np.outer(slope, slope) / total_slope
        jacobian[:, n] = slope / total_slope * span * sig_b * (1 - sig_b)
        return self.mass_lower + self.mass_width * sig, jacobian

    def _unit(self, theta: NDArray):
        """Per link: the unit-mass pseudo-inertia's parts (c, L) and the CoM's slope."""
        links = theta[: N_LINK_PARAMETERS * self.n_links].reshape(-1, N_LINK_PARAMETERS)
        sig = _sigmoid(links[:, _S])
        com = self.com_lower + self.com_width * sig
        factor = np.zeros((self.n_links, 3, 3))
        factor[:, [0, 1, 2], [0, 1, 2]] = np.exp(links[:, _D])
        for k, (row, col) in enumerate(_BELOW):
            factor[:, row, col] = links[:, _OFF][:, k]
        return com, factor, self.com_width * sig * (1 - sig)

    @staticmethod
    def _unit_pseudo_inertia(com: NDArray, factor: NDArray) -> NDArray:
        j = np.zeros((com.shape[0], 4, 4))
        j[:, :3, :3] = factor @ np.swapaxes(factor, -1, -2) + com[:, :, None] * com[:, None, :]
        j[:, :3, 3] = com
        j[:, 3, :3] = com
        j[:, 3, 3] = 1.0
        return j

    def parameters(self, theta: NDArray) -> NDArray:
        """Coordinates ``(size,)`` -> link parameters ``(n, 10)``, each a physical body
        (``J > 0``) inside the bounds."""
        masses, _ = self._masses(theta)
        com, factor, _ = self._unit(theta)
        return masses[:, None] * from_pseudo_inertia(self._unit_pseudo_inertia(com, factor))

    def jacobian(self, theta: NDArray) -> NDArray:
        """``d pi / d theta``: ``(10 n, size)``, ``pi`` the link parameters flattened."""
        n = self.n_links
        masses, mass_jacobian = self._masses(theta)
        com, factor, com_slope = self._unit(theta)
        unit = from_pseudo_inertia(self._unit_pseudo_inertia(com, factor))  # = d pi / d m
        # d J_unit / d (s_x, s_y, s_z, d_1, d_2, d_3, l21, l31, l32): (n, 9, 4, 4)
        d_unit = np.zeros((n, N_LINK_PARAMETERS - 1, 4, 4))
        eye = np.eye(3)
        for axis in range(3):
            outer = eye[axis][None, :, None] * com[:, None, :]
            d_unit[:, axis, :3, :3] = outer + np.swapaxes(outer, -1, -2)
            d_unit[:, axis, :3, 3] = eye[axis]
            d_unit[:, axis, 3, :3] = eye[axis]
            d_unit[:, axis] *= com_slope[:, axis, None, None]
        entries = [(i, i) for i in range(3)] + list(_BELOW)
        for k, (row, col) in enumerate(entries):
            # d (L L^T) = E_rc L^T + L E_cr, times exp(d) on the diagonal (chain rule)
            step = np.zeros((n, 3, 3))
            step[:, row, col] = factor[:, row, col] if row == col else 1.0
            d_gram = step @ np.swapaxes(factor, -1, -2)
            d_unit[:, 3 + k, :3, :3] = d_gram + np.swapaxes(d_gram, -1, -2)
        local = masses[:, None, None] * from_pseudo_inertia(d_unit)  # (n, 9, 10)
        out = np.zeros((n, N_LINK_PARAMETERS, self.size))
        for k in range(n):
            start = N_LINK_PARAMETERS * k
            out[k, :, start + 1 : start + N_LINK_PARAMETERS] = local[k].T
        mass_columns = list(range(0, N_LINK_PARAMETERS * n, N_LINK_PARAMETERS))
        if self.total is not None:
            out[:, :, [*mass_columns, N_LINK_PARAMETERS * n]] += (
                unit[:, :, None] * mass_jacobian[:, None, :])
        else:
            out[:, :, mass_columns] += unit[:, :, None] * mass_jacobian[:, None, :n]
        return out.reshape(N_LINK_PARAMETERS * n, self.size)

    # --- the way in -----------------------------------------------------------------------

    def coordinates(self, parameters: NDArray, *, margin: float = START_MARGIN) -> NDArray:
        """Coordinates of the body nearest ``parameters`` ``(n, 10)`` at least ``margin`` of
        each range inside the bounds: masses, total mass and CoM clipped, the covariance's
        eigenvalues floored at 1e-6 of its largest (at least of ``(1e-3 L)^2``, ``L`` the
        largest CoM bound). For a start: a link of zero mass (no CoM) starts at its box's
        centre as a ball of radius ``1e-6 L``."""
        n = self.n_links
        pi = np.asarray(parameters, dtype=float).reshape(n, N_LINK_PARAMETERS)
        theta = np.zeros(self.size)
        links = theta[: N_LINK_PARAMETERS * n].reshape(n, N_LINK_PARAMETERS)  # a view
        m = pi[:, MASS]
        live = self.mass_width > 0
        fraction = np.full(n, 0.5)
        fraction[live] = (m[live] - self.mass_lower[live]) / self.mass_width[live]
        fraction = np.clip(fraction, margin, 1 - margin)
        a = _logit(fraction)
        if self.total is not None:
            low, span = self.total
            total = self.mass_lower.sum() + self.mass_width @ fraction
            total = np.clip(total, low + margin * span, low + (1 - margin) * span)
            theta[N_LINK_PARAMETERS * n] = _logit((total - low) / span) if span > 0 else 0.0
            a = a + self._shift(a, total - self.mass_lower.sum())
            a = a - a[live].mean() if live.any() else a
        links[:, _A] = a
        massive = m > 1e-12 * np.maximum(self.mass_lower + self.mass_width, 1.0)
        safe = np.where(massive, m, 1.0)
        com = np.where(massive[:, None], pi[:, FIRST_MOMENT] / safe[:, None],
                       self.com_lower + 0.5 * self.com_width)
        lo = self.com_lower + margin * self.com_width
        com = np.clip(com, lo, np.maximum(lo, self.com_lower + (1 - margin) * self.com_width))
        boxed = self.com_width > 0
        links[:, _S] = np.where(boxed, _logit(np.where(boxed, (com - self.com_lower)
                                                       / np.where(boxed, self.com_width, 1.0),
                                                       0.5)), 0.0)
        h = pi[:, FIRST_MOMENT]
        second = pseudo_inertia(pi)[:, :3, :3]  # the second moment about the origin
        covariance = np.where(massive[:, None, None],
                              (second - h[:, :, None] * h[:, None, :] / safe[:, None, None])
                              / safe[:, None, None], 0.0)
        values, vectors = np.linalg.eigh(0.5 * (covariance + np.swapaxes(covariance, -1, -2)))
        size = np.maximum(np.abs(self.com_lower).max(axis=1), np.abs(self.com_lower
                                                                   + self.com_width).max(axis=1))
        size = np.where(size > 0, size, 1.0)
        floor = 1e-6 * np.maximum(values[:, -1:], (1e-3 * size[:, None]) ** 2)
        values = np.maximum(values, floor)
        covariance = vectors @ (values[:, :, None] * np.swapaxes(vectors, -1, -2))
        factor = np.linalg.cholesky(covariance)
        links[:, _D] = np.log(factor[:, [0, 1, 2], [0, 1, 2]])
        for k, (row, col) in enumerate(_BELOW):
            links[:, _OFF.start + k] = factor[:, row, col]
        return theta

    def mean_shift(self) -> NDArray:
        """The row that pins the free common shift of the ``a_k``: ``theta`` -> their mean
        (``(size,)``, zero without a total-mass coordinate)."""
        row = np.zeros(self.size)
        if self.total is not None:
            live = np.flatnonzero(self.mass_width > 0)
            row[N_LINK_PARAMETERS * live + _A] = 1.0 / max(live.size, 1)
        return row


@dataclass(frozen=True)
class CurrentGains:
    """The fit in current units (``fit_log_cholesky``): row ``r`` of the data reads
    ``h[joint[r]] (operator[r] [pi; f] + offset[r]) - z[r]``, with ``h = 1 / K`` the inverse
    drive gains: ``inverse`` ``(n,)`` (fixed, and the start of the ``free`` ones), the
    ``free`` ones unknowns within ``lower`` and ``upper``."""

    joint: NDArray  # (rows,) int
    offset: NDArray  # (rows,)
    inverse: NDArray  # (n,)
    free: NDArray  # (k,) int
    lower: NDArray  # (k,)
    upper: NDArray  # (k,)


def fit_log_cholesky(operator: NDArray, z: NDArray, start: NDArray, friction: NDArray,
                     bounds: ParameterBounds, *, scale: NDArray, prior: NDArray,
                     weight: float, max_nfev: int = 200, ftol: float = 1e-6,
                     nonnegative: int = 0, gains: CurrentGains | None = None,
                     norm: float | None = None) -> tuple[NDArray, NDArray, str]:
    """Minimise CLS-3's objective ``|operator [pi; f] - z|^2 / |z|^2 + weight |(pi - prior) /
    scale|^2 / (10 n)`` over the bounded log-Cholesky coordinates of ``bounds`` and the linear
    friction coefficients ``f`` (the first ``nonnegative`` of them kept >= 0: rotor
    inertias), from ``start`` ``(n, 10)`` and ``friction``.

    Where CLS-3's optimum (of the same objective, over the closed bounds) lies on a bound,
    this one lies at infinity in these coordinates and the solver creeps towards it: it stops
    once a step gains less than ``ftol`` of the objective (1e-6 by default, far below what the
    data can tell apart) or after ``max_nfev`` evaluations.

    With ``gains`` the fit is in current units (see ``CurrentGains``): ``friction`` then
    ends with the start of the free inverse gains, and so does the returned vector. ``norm``
    replaces ``|z|`` in the objective.

    Returns the link parameters ``(n, 10)``, the friction coefficients and the status:
    ``"optimal"`` when scipy's trust-region solver met its tolerances, otherwise
    ``"stopped after N evaluations: <scipy's reason>"``.
    """
    import scipy.optimize
    from threadpoolctl import threadpool_limits

    coordinates = BoundedLogCholesky.from_bounds(bounds)
    n = coordinates.n_links
    rigid = N_LINK_PARAMETERS * n
    size = coordinates.size
    norm = np.linalg.norm(z) if norm is None else norm
    norm = norm if norm > 0 else 1.0
    pull = np.sqrt(weight / rigid) / scale  # the regulariser's rows: pull * (pi - prior)
    target = np.asarray(prior, dtype=float).ravel()
    shift = coordinates.mean_shift()
    rigid_operator = operator[:, :rigid] / norm
    n_free = 0 if gains is None else gains.free.size
    end = None if n_free == 0 else -n_free  # the linear unknowns end before the gains
    friction_operator = operator[:, rigid:] / norm
    offset = np.zeros(operator.shape[0]) if gains is None else gains.offset / norm
    fit_rows = operator.shape[0]

    def inverse_gains(x: NDArray) -> NDArray:
        """``h`` of every row (ones for a torque fit)."""
        if gains is None:
            return np.ones(fit_rows)
        h = np.array(gains.inverse, dtype=float)
        h[gains.free] = x[x.size - n_free:]
        return h[gains.joint]

    def residual(x: NDArray) -> NDArray:
        pi = coordinates.parameters(x[:size]).ravel()
        torque = rigid_operator @ pi + friction_operator @ x[size:end] + offset
        fit = inverse_gains(x) * torque - z / norm
        return np.concatenate([fit, pull * (pi - target), [shift @ x[:size]]])

    def jacobian(x: NDArray) -> NDArray:
        d_pi = coordinates.jacobian(x[:size])
        h = inverse_gains(x)[:, None]
        out = np.zeros((fit_rows + rigid + 1, x.size))
        out[:fit_rows, :size] = h * (rigid_operator @ d_pi)
        out[:fit_rows, size:x.size - n_free] = h * friction_operator
        if n_free:
            pi = coordinates.parameters(x[:size]).ravel()
            torque = rigid_operator @ pi + friction_operator @ x[size:end] + offset
            for k, j in enumerate(gains.free):
                rows = gains.joint == j
                out[:fit_rows, x.size - n_free + k][rows] = torque[rows]
        out[fit_rows : fit_rows + rigid, :size] = pull[:, None] * d_pi
        out[-1, :size] = shift
        return out

    x0 = np.concatenate([coordinates.coordinates(start), np.asarray(friction, dtype=float)])
    lower = np.full(x0.size, -np.inf)
    upper = np.full(x0.size, np.inf)
    lower[size:size + nonnegative] = 0.0
    if n_free:
        lower[x0.size - n_free:] = gains.lower
        upper[x0.size - n_free:] = gains.upper
        # strictly inside for the trust-region solver
        span = upper[x0.size - n_free:] - lower[x0.size - n_free:]
        x0[x0.size - n_free:] = np.clip(x0[x0.size - n_free:],
                                        gains.lower + START_MARGIN * span,
                                        gains.upper - START_MARGIN * span)
    x0 = np.maximum(x0, np.where(np.isfinite(lower[:x0.size]) & (np.arange(x0.size)
                                                                  < size + nonnegative),
                                 1e-12, -np.inf))
    # the matrices are a few hundred wide at most: BLAS threads cost more than they save
    # (and an SVD of them takes seconds instead of milliseconds on a loaded machine)
    with threadpool_limits(limits=1):
        result = scipy.optimize.least_squares(residual, x0, jac=jacobian, method="trf",
                                              x_scale=_x_scale(coordinates, x0, jacobian(x0)),
                                              max_nfev=max_nfev, ftol=ftol,
                                              bounds=(lower, upper))
    parameters = coordinates.parameters(result.x[:size])
    status = ("optimal" if result.success
              else f"stopped after {result.nfev} evaluations: {result.message}")
    return parameters, result.x[size:], status


def _x_scale(coordinates: BoundedLogCholesky, x0: NDArray, jacobian: NDArray) -> NDArray:
    """The solver's variable scales. The logits and logs (a, s, d, b) are unitless and
    saturate: scaled by their Jacobian's columns they would be given astronomic steps where a
    sigmoid is flat or a factor is small, so they keep 1. L's entries below the diagonal are
    lengths: the link's radius of gyration ``sqrt(tr C)`` at the start (at least 1 mm). The friction
    coefficients, linear, by their Jacobian's columns."""
    n = coordinates.n_links
    scale = np.ones(x0.size)
    links = x0[: N_LINK_PARAMETERS * n].reshape(n, N_LINK_PARAMETERS)
    length = np.maximum(np.sqrt(np.sum(np.exp(2 * links[:, _D]), axis=1)
                                + np.sum(links[:, _OFF] ** 2, axis=1)), 1e-3)
    scale[: N_LINK_PARAMETERS * n].reshape(n, N_LINK_PARAMETERS)[:, _OFF] = length[:, None]
    columns = np.linalg.norm(jacobian[:, coordinates.size :], axis=0)
    scale[coordinates.size :] = 1.0 / np.maximum(columns, np.finfo(float).tiny)
    return scale
