"""The Kalman filters' per-sample work, compiled: the joint state-parameter model's step and
the EKF, square-root EKF, UKF and square-root UKF recursions over a block of samples.

State ``x = [q (n), dq (n), theta (r)]``: ``theta`` the base parameters of a linear model
(rigid body, rotor inertias, viscous + Coulomb + offset friction; ``LinearModel`` layout),
turned into the equivalent full parameters (the coefficients at their representative columns,
zero elsewhere: ``Y pi_eq = Y_b theta`` exactly) for the compiled dynamics. The acceleration
``ddq = M(q)^-1 (tau - c(q, dq) - g(q) - tau_f(dq))`` comes from the RNEA with ``ddq = 0``
(``c + g``) and the composite-rigid-body ``M`` with the rotor inertias on its diagonal,
solved by its Cholesky factor (leaves of ``dynid.dynamics._kernels``). One step over a sample
period ``h`` with the torque held (the log's zero-order hold) is Heun's (RK2): two
accelerations, local error O(h^3) in ``q`` and ``dq``; ``theta`` is constant (a random walk
through the process noise).

Measurement: the positions and, when ``velocity`` is set, the velocities: ``y = H x`` with
``H`` selecting the first m = n or 2n entries (linear, so every filter's update is the
Kalman update; the unscented transform of a linear map is exact).

- EKF: ``F`` by central differences of the step (the q, dq rows; ``theta`` maps to itself),
  ``P <- F P F^T + Q``; update in Joseph form.
- SR-EKF: ``P = S S^T``, ``S`` lower triangular, never formed into ``P``: predict
  ``S <- tria([F S, Q^1/2])``, update by the array algorithm (``[[R^1/2, H S], [0, S]]``
  triangularised: ``[[Re^1/2, 0], [K Re^1/2, S+]]``; Kailath, Sayed & Hassibi, Linear
  Estimation, 2000, ch. 12), each ``tria`` one QR.
- UKF (Julier & Uhlmann 2004; weights of Wan & van der Merwe 2000 with ``alpha``, ``beta``,
  ``kappa``): 2L + 1 sigma points from a Cholesky factor of ``P``, each stepped.
- SR-UKF (van der Merwe & Wan 2001, "The square-root unscented Kalman filter for state and
  parameter-estimation", ICASSP): sigma points from ``S``; ``S <- qr([sqrt(Wc_1) (X_i - x),
  Q^1/2])`` then a rank-one Cholesky update (downdate when ``Wc_0 < 0``) by ``X_0 - x``; the
  linear measurement update as the SR-EKF's.

Statuses: ``OK``; ``NOT_DEFINITE`` where ``M(q)`` of some evaluated state and estimate is not
positive definite, a covariance factor cannot be downdated, or the innovation covariance is
singular; ``NOT_FINITE`` where the state became NaN or infinite.
"""

from __future__ import annotations

import numpy as np

from dynid._jit import kernel
from dynid.dynamics._kernels import (
    _joint_torques,
    _link_forces,
    _mass_matrix_given_poses,
    _motion,
    _poses,
)

OK, NOT_DEFINITE, NOT_FINITE = 0, 1, 2
EKF, SREKF, UKF, SRUKF = 0, 1, 2, 3
# central-difference step: cbrt(eps) of the entry's size (the error's best trade-off)
_STEP = 6e-6


@kernel
def _model(theta, independent, n, n_rotor, pi, rotor, friction):
    """``theta`` -> the equivalent link parameters ``pi`` (n, 10), rotor inertias (n,) and
    viscous-Coulomb-offset coefficients ``friction`` (3, n)."""
    pi[:, :] = 0.0
    rotor[:] = 0.0
    friction[:, :] = 0.0
    rigid = 10 * n
    for k in range(theta.size):
        column = independent[k]
        if column < rigid:
            pi[column // 10, column % 10] = theta[k]
        elif column < rigid + n_rotor:
            rotor[column - rigid] = theta[k]
        else:
            f = column - rigid - n_rotor
            friction[f // n, f % n] = theta[k]


@kernel
def _acceleration(rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, gravity, pi, rotor, friction,
                  q, dq, tau, work, rot, pos, state, force, moment, mass, ddq, signs, frozen):
    """``ddq`` (n,) at ``q, dq`` (each (1, n)) under ``tau`` (n,); False where ``M`` is not
    positive definite. ``work`` (2, n): zero accelerations, then ``c + g``. ``signs`` (n,):
    the velocities' signs in the Coulomb term, written (``frozen`` False) or read (True)."""
    n = zeta.shape[0]
    work[0, :] = 0.0
    _poses(rev, k0, kc, ks, p0, pc, ps, pl, q, 0, rot, pos)
    _motion(zeta, eta, dq, work, gravity, 0, rot, pos, state)
    _link_forces(pi, state, force, moment)
    _joint_torques(zeta, eta, 1, rot, pos, force, moment, work)
    _mass_matrix_given_poses(zeta, eta, pi, 0, rot, pos, mass)
    for i in range(n):
        v = dq[0, i]
        if not frozen:
            signs[i] = 1.0 if v > 0.0 else (-1.0 if v < 0.0 else 0.0)
        ddq[i] = (tau[i] - work[1, i]
                  - (friction[0, i] * v + friction[1, i] * signs[i] + friction[2, i]))
        mass[0, i, i] += rotor[i]
    # Cholesky M = L L^T in place (lower triangle), then the two triangular solves
    for j in range(n):
        total = mass[0, j, j]
        for c in range(j):
            total -= mass[0, j, c] * mass[0, j, c]
        if not total > 0.0:
            return False
        pivot = np.sqrt(total)
        mass[0, j, j] = pivot
        for i in range(j + 1, n):
            total = mass[0, i, j]
            for c in range(j):
                total -= mass[0, i, c] * mass[0, j, c]
            mass[0, i, j] = total / pivot
    for i in range(n):
        total = ddq[i]
        for c in range(i):
            total -= mass[0, i, c] * ddq[c]
        ddq[i] = total / mass[0, i, i]
    for i in range(n - 1, -1, -1):
        total = ddq[i]
        for c in range(i + 1, n):
            total -= mass[0, c, i] * ddq[c]
        ddq[i] = total / mass[0, i, i]
    return True


@kernel
def _step(chain, gravity, independent, n_rotor, x, tau, h, out, signs, frozen):
    """Heun's step of the state ``x`` over ``h`` under ``tau`` into ``out``; False where ``M``
    is not positive definite. ``signs`` (2, n): the Coulomb signs of the two stages, written
    or, ``frozen``, read (the EKF's differences hold them: the sign's jump has no
    derivative)."""
    rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta = chain
    n = zeta.shape[0]
    pi, rotor, friction = np.empty((n, 10)), np.empty(n), np.empty((3, n))
    _model(x[2 * n:], independent, n, n_rotor, pi, rotor, friction)
    rot, pos, state = np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((n, 9))
    force, moment, mass = np.empty((n, 3)), np.empty((n, 3)), np.empty((1, n, n))
    work, q, dq = np.empty((2, n)), np.empty((1, n)), np.empty((1, n))
    first, second = np.empty(n), np.empty(n)
    q[0, :] = x[:n]
    dq[0, :] = x[n:2 * n]
    if not _acceleration(rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, gravity, pi, rotor,
                         friction, q, dq, tau, work, rot, pos, state, force, moment, mass,
                         first, signs[0], frozen):
        return False
    for i in range(n):
        q[0, i] = x[i] + h * x[n + i]
        dq[0, i] = x[n + i] + h * first[i]
    if not _acceleration(rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, gravity, pi, rotor,
                         friction, q, dq, tau, work, rot, pos, state, force, moment, mass,
                         second, signs[1], frozen):
        return False
    for i in range(n):
        out[i] = x[i] + 0.5 * h * (x[n + i] + dq[0, i])
        out[n + i] = x[n + i] + 0.5 * h * (first[i] + second[i])
    out[2 * n:] = x[2 * n:]
    return True


@kernel
def _lower_factor(block):
    """A lower-triangular ``S`` with ``S S^T = block block^T`` (``block`` (L, c), c >= L), by
    one QR of ``block^T``."""
    r = np.linalg.qr(np.ascontiguousarray(block.T))[1]
    size = block.shape[0]
    out = np.ascontiguousarray(r[:size, :size].T)
    for j in range(size):  # a positive diagonal (S S^T does not change)
        if out[j, j] < 0.0:
            out[:, j] = -out[:, j]
    return out


@kernel
def _rank_one(s, v, weight):
    """``S S^T + weight v v^T`` for lower-triangular ``S``, in place (a downdate for
    ``weight < 0``); False where the result is not positive definite."""
    size = s.shape[0]
    sign = 1.0 if weight >= 0.0 else -1.0
    u = v * np.sqrt(abs(weight))
    for k in range(size):
        total = s[k, k] * s[k, k] + sign * u[k] * u[k]
        if not total > 0.0:
            return False
        diagonal = np.sqrt(total)
        c = diagonal / s[k, k]
        t = u[k] / s[k, k]
        s[k, k] = diagonal
        for i in range(k + 1, size):
            s[i, k] = (s[i, k] + sign * t * u[i]) / c
            u[i] = c * u[i] - t * s[i, k]
    return True


@kernel
def _measure(kind, x, p, y, noise):
    """The Kalman update with ``y`` (m,) of the first m states, measurement std ``noise``
    (m,): ``p`` is ``P`` (EKF, UKF: Joseph form) or its lower factor ``S`` (square-root
    forms: the array algorithm). False where the innovation covariance is singular."""
    m, size = y.size, x.size
    innovation = y - x[:m]
    if kind == EKF or kind == UKF:
        s = p[:m, :m].copy()
        for i in range(m):
            s[i, i] += noise[i] * noise[i]
        try:
            gain = np.ascontiguousarray(np.linalg.solve(s, p[:m, :]).T)  # P H^T S^-1 (L, m)
        except Exception:  # numba: a singular matrix
            return False
        x += gain @ innovation
        ikh = np.eye(size)  # I - K H
        ikh[:, :m] -= gain
        joseph = ikh @ p @ ikh.T + (gain * (noise * noise)) @ gain.T
        p[:, :] = 0.5 * (joseph + joseph.T)
        return True
    pre = np.zeros((m + size, m + size))
    for i in range(m):
        pre[i, i] = noise[i]
    pre[:m, m:] = p[:m, :]
    pre[m:, m:] = p
    post = _lower_factor(pre)
    root = post[:m, :m]
    scaled_gain = post[m:, :m]
    for i in range(m):
        if root[i, i] == 0.0:
            return False
    # x += K e with K = scaled_gain root^-1
    solved = np.linalg.solve(root, innovation)
    x += scaled_gain @ solved
    p[:, :] = post[m:, m:]
    return True


@kernel
def _input_columns(chain, gravity, independent, n_rotor, x, tau, h, torque, columns, signs):
    """``columns[:, j] = torque[j] d step / d tau_j`` (central differences; the step is nearly
    linear in the torque): the process noise that a torque error of std ``torque[j]`` brings.
    False where ``M`` is not positive definite."""
    size = x.size
    shifted = tau.copy()
    plus, minus = np.empty(size), np.empty(size)
    for j in range(tau.size):
        columns[:, j] = 0.0
        if torque[j] == 0.0:
            continue
        delta = 1e-3 * max(abs(tau[j]), torque[j], 1e-6)
        shifted[j] = tau[j] + delta
        if not _step(chain, gravity, independent, n_rotor, x, shifted, h, plus, signs, True):
            return False
        shifted[j] = tau[j] - delta
        if not _step(chain, gravity, independent, n_rotor, x, shifted, h, minus, signs, True):
            return False
        shifted[j] = tau[j]
        for i in range(size):
            columns[i, j] = torque[j] * (plus[i] - minus[i]) / (2.0 * delta)
    return True


@kernel
def _predict(kind, chain, gravity, independent, n_rotor, x, p, tau, h, process, torque, gamma,
             wm, wc):
    """Propagate the state and ``P`` (or its factor) over ``h`` under ``tau``; process std
    ``process`` (L,) on each state and ``torque`` (n,) on each joint's torque (through the
    step: ``_input_columns``). Returns a status."""
    size = x.size
    n = chain[8].shape[0]
    top = 2 * n
    new = np.empty(size)
    signs, scratch = np.empty((2, n)), np.empty((2, n))
    if not _step(chain, gravity, independent, n_rotor, x, tau, h, new, signs, False):
        return NOT_DEFINITE
    inputs = np.empty((size, n))
    if not _input_columns(chain, gravity, independent, n_rotor, x, tau, h, torque, inputs,
                          signs):
        return NOT_DEFINITE
    if kind == EKF or kind == SREKF:
        jac = np.eye(size)
        plus, minus, shifted = np.empty(size), np.empty(size), x.copy()
        for j in range(size):
            if kind == EKF:
                spread = np.sqrt(abs(p[j, j]))
            else:
                spread = np.sqrt(np.sum(p[j, :j + 1] ** 2))
            delta = _STEP * max(abs(x[j]), spread, 1e-9)
            shifted[j] = x[j] + delta
            if not _step(chain, gravity, independent, n_rotor, shifted, tau, h, plus, signs,
                         True):
                return NOT_DEFINITE
            shifted[j] = x[j] - delta
            if not _step(chain, gravity, independent, n_rotor, shifted, tau, h, minus, signs,
                         True):
                return NOT_DEFINITE
            shifted[j] = x[j]
            for i in range(top):
                jac[i, j] = (plus[i] - minus[i]) / (2.0 * delta)
        x[:] = new
        if kind == EKF:
            propagated = jac @ p @ jac.T
            for i in range(size):
                propagated[i, i] += process[i] * process[i]
            propagated += inputs @ inputs.T
            p[:, :] = 0.5 * (propagated + propagated.T)
        else:
            block = np.zeros((size, 2 * size + n))
            block[:, :size] = jac @ p
            for i in range(size):
                block[i, size + i] = process[i]
            block[:, 2 * size:] = inputs
            p[:, :] = _lower_factor(block)
    else:
        if kind == UKF:
            try:
                root = np.linalg.cholesky(p)
            except Exception:  # numba: not positive definite
                return NOT_DEFINITE
        else:
            root = p.copy()
        points = np.empty((2 * size + 1, size))
        start = x.copy()
        points[0] = new
        for j in range(size):
            for sign in range(2):
                shifted = start + (gamma if sign == 0 else -gamma) * root[:, j]
                if not _step(chain, gravity, independent, n_rotor, shifted, tau, h,
                             points[1 + j + sign * size], scratch, False):
                    return NOT_DEFINITE
        mean = wm[0] * points[0]
        for i in range(1, 2 * size + 1):
            mean += wm[1] * points[i]
        if kind == UKF:
            deviation = points[0] - mean
            covariance = wc[0] * np.outer(deviation, deviation)
            for i in range(1, 2 * size + 1):
                deviation = points[i] - mean
                covariance += wc[1] * np.outer(deviation, deviation)
            for i in range(size):
                covariance[i, i] += process[i] * process[i]
            covariance += inputs @ inputs.T
            p[:, :] = 0.5 * (covariance + covariance.T)
        else:
            block = np.zeros((size, 3 * size + n))
            spread = np.sqrt(wc[1])
            for i in range(1, 2 * size + 1):
                block[:, i - 1] = spread * (points[i] - mean)
            for i in range(size):
                block[i, 2 * size + i] = process[i]
            block[:, 3 * size:] = inputs
            factor = _lower_factor(block)
            if not _rank_one(factor, points[0] - mean, wc[0]):
                return NOT_DEFINITE  # x and its factor as they were
            p[:, :] = factor
        x[:] = mean
    for i in range(size):
        if not np.isfinite(x[i]):
            return NOT_FINITE
    return OK


@kernel
def filter_block(kind, chain, gravity, independent, n_rotor, x, p, last_tau, started, q, dq,
                 tau, periods, velocity, noise, process, torque, band, gamma, wm, wc, every, count,
                 history, history_std, recorded):
    """Advance a filter over the samples ``q, dq, tau`` (k, n): for each, predict from the
    previous sample (``last_tau`` held over ``periods[i]``), then update with its positions
    (and velocities when ``velocity``); the first sample (``started[0] == 0``) sets the state's
    ``q, dq`` instead. The process noise: ``process`` (L,) on the states, and ``torque`` (n,)
    on the joints' torques, through the step; a joint whose velocity changes sign between the
    state and the sample (``dq``, measured or not) or is within ``band`` of zero at either end
    has twice its estimated Coulomb level added to its torque's std for that step: Coulomb
    friction may switch inside the period (a sign model chatters about zero while the joint
    sticks), which one step with the sign of its ends cannot follow (errors of 1e-2 rad/s in
    every joint, through M^-1, on the Panda twin). ``count[0]`` counts the samples; every
    ``every``-th writes ``theta`` and its std into ``history``, ``history_std`` at row
    ``recorded[0]``. Returns ``(status, index)`` of the first failing sample (``OK, -1`` when
    none failed); a failing sample leaves ``x`` and ``p`` as they were before it."""
    n = q.shape[1]
    m = 2 * n if velocity else n
    size = x.size
    y = np.empty(m)
    spread = np.empty(n)
    pi, rotor, friction = np.empty((n, 10)), np.empty(n), np.empty((3, n))
    saved_x, saved_p = x.copy(), p.copy()
    for k in range(q.shape[0]):
        saved_x[:] = x  # a failing sample leaves the state as it was before it
        saved_p[:, :] = p
        status = OK
        if started[0] != 0:
            _model(x[2 * n:], independent, n, n_rotor, pi, rotor, friction)
            for i in range(n):  # Coulomb friction may switch inside the period
                spread[i] = torque[i]
                if x[n + i] * dq[k, i] <= 0.0 or min(abs(x[n + i]), abs(dq[k, i])) < band:
                    spread[i] += 2.0 * abs(friction[1, i])
            status = _predict(kind, chain, gravity, independent, n_rotor, x, p, last_tau,
                              periods[k], process, spread, gamma, wm, wc)
            if status == OK:
                y[:n] = q[k]
                if velocity:
                    y[n:] = dq[k]
                if not _measure(kind, x, p, y, noise):
                    status = NOT_DEFINITE
                for i in range(size):
                    if status == OK and not np.isfinite(x[i]):
                        status = NOT_FINITE
        else:  # the first sample: the state is the measurement (its variance in P already)
            x[:n] = q[k]
            x[n:2 * n] = dq[k]
            started[0] = 1
        if status != OK:
            x[:] = saved_x
            p[:, :] = saved_p
            return status, k
        last_tau[:] = tau[k]
        count[0] += 1
        if every > 0 and count[0] % every == 0 and recorded[0] < history.shape[0]:
            row = recorded[0]
            for i in range(2 * n, size):
                history[row, i - 2 * n] = x[i]
                if kind == EKF or kind == UKF:
                    variance = p[i, i]
                else:
                    variance = 0.0
                    for c in range(i + 1):
                        variance += p[i, c] * p[i, c]
                history_std[row, i - 2 * n] = np.sqrt(max(variance, 0.0))
            recorded[0] += 1
    return OK, -1
