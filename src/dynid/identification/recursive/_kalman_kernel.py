"""The Kalman filters' per-sample work, compiled: the joint state-parameter model's step and
the EKF, square-root EKF, UKF and square-root UKF recursions over a block of samples.

State ``x = [q (n), dq (n), theta (r)]``: ``theta`` the base parameters of a linear model
(rigid body, rotor inertias, linear friction; ``LinearModel`` layout), turned into the
equivalent full parameters (the coefficients at their representative columns, zero
elsewhere: ``Y pi_eq = Y_b theta`` exactly) for the compiled dynamics. The friction is any
model linear in its coefficients whose columns are fixed functions of the joint's velocity,
given to the kernels as ``law = (codes (k,), shapes (k, n))``: column ``c`` of joint ``j`` is
``VELOCITY`` dq, ``SIGN`` sign(dq), ``ONE`` 1 or ``ATAN`` (2/pi) atan(shapes[c, j] dq)
(viscous-Coulomb-offset: VELOCITY, SIGN, ONE; Szabó's arctan: ATAN k_v, ATAN delta,
VELOCITY). The acceleration ``ddq = M(q)^-1 (tau - c(q, dq) - g(q) - tau_f(dq))`` comes from
the RNEA with ``ddq = 0`` (``c + g``) and the composite-rigid-body ``M`` with the rotor
inertias on its diagonal, solved by its Cholesky factor (leaves of
``dynid.dynamics._kernels``). One step over a sample period ``h``, the torque held (the log's
zero-order hold) or linear between the samples, is ROS2, a Rosenbrock W-method (``_step``):
two accelerations, local error O(h^3) in ``q`` and ``dq``, stable under a steep friction
slope where Heun's explicit step is not (and Heun's step where the friction has no slope);
``theta`` is constant (a random walk through the process noise).

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
    _regressor_columns,
)

OK, NOT_DEFINITE, NOT_FINITE = 0, 1, 2
EKF, SREKF, UKF, SRUKF = 0, 1, 2, 3
# the friction columns a kernel evaluates (``_friction_column``): v, sign(v), 1, (2/pi) atan(s v)
VELOCITY, SIGN, ONE, ATAN = 0, 1, 2, 3
_GAMMA = 1.0 + 1.0 / np.sqrt(2.0)  # ROS2's
# forward-difference step: sqrt(eps) of the entry's size (error ~1e-8 of the derivative, far
# below the linearisation's own; half the steps of central differences)
_FORWARD_STEP = 1.5e-8


@kernel
def _model(theta, independent, n, n_rotor, pi, rotor, friction):
    """``theta`` -> the equivalent link parameters ``pi`` (n, 10), rotor inertias (n,) and
    friction coefficients ``friction`` (k, n), type-major (one row per friction column)."""
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
def _friction_column(code, shape, v, sign):
    """One friction column at velocity ``v`` and its slope d/dv: ``VELOCITY`` v (1), ``SIGN``
    the given ``sign`` (0: a step stays explicit), ``ONE`` 1 (0), ``ATAN`` (2/pi) atan(shape
    v) ((2/pi) shape / (1 + (shape v)^2))."""
    if code == VELOCITY:
        return v, 1.0
    if code == SIGN:
        return sign, 0.0
    if code == ONE:
        return 1.0, 0.0
    scaled = shape * v
    return 2.0 / np.pi * np.arctan(scaled), 2.0 / np.pi * shape / (1.0 + scaled * scaled)


@kernel
def _cholesky(mass):
    """``mass`` (n, n) -> its lower Cholesky factor in place; False where not positive
    definite."""
    n = mass.shape[0]
    for j in range(n):
        total = mass[j, j]
        for c in range(j):
            total -= mass[j, c] * mass[j, c]
        if not total > 0.0:
            return False
        pivot = np.sqrt(total)
        mass[j, j] = pivot
        for i in range(j + 1, n):
            total = mass[i, j]
            for c in range(j):
                total -= mass[i, c] * mass[j, c]
            mass[i, j] = total / pivot
    return True


@kernel
def _solve(factor, rhs):
    """``rhs <- (L L^T)^-1 rhs`` for the lower factor ``L`` in ``factor``, in place."""
    n = rhs.size
    for i in range(n):
        total = rhs[i]
        for c in range(i):
            total -= factor[i, c] * rhs[c]
        rhs[i] = total / factor[i, i]
    for i in range(n - 1, -1, -1):
        total = rhs[i]
        for c in range(i + 1, n):
            total -= factor[c, i] * rhs[c]
        rhs[i] = total / factor[i, i]


@kernel
def _dynamics(rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, gravity, pi, rotor, friction, law,
              q, dq, tau, work, rot, pos, state, force, moment, mass, residual, slope, signs,
              frozen):
    """At ``q, dq`` (each (1, n)) under ``tau`` (n,): ``residual`` (n,) ``tau - c - g -
    tau_f``, ``mass[0]`` ``M(q)`` with the rotor inertias on its diagonal, and ``slope`` (n,)
    each joint's ``d tau_f / d dq`` (``_friction_column``; >= 0: a negative one dropped).
    ``law``: the friction columns' codes (k,) and shape constants (k, n); ``friction`` (k, n)
    their coefficients.
    ``work`` (2, n): zero accelerations, then ``c + g``. ``signs`` (n,): the velocities' signs
    in a ``SIGN`` column, written (``frozen`` False) or read (True)."""
    codes, shapes = law
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
        torque, rate = 0.0, 0.0
        for k in range(codes.size):
            value, derivative = _friction_column(codes[k], shapes[k, i], v, signs[i])
            torque += friction[k, i] * value
            rate += friction[k, i] * derivative
        residual[i] = tau[i] - work[1, i] - torque
        slope[i] = max(rate, 0.0)
        mass[0, i, i] += rotor[i]


@kernel
def _workspace(n, k):
    """The scratch arrays of ``_step`` (allocated once per block, not per step: a step is a
    few microseconds, and 20 allocations were a third of it) and what ``_sensitivities``
    reads of the last step: ``(pi, rotor, friction, rot, pos, state, force, moment,
    first_mass (M at the start), second_mass (the factor of M at the second stage), w (the
    factor of W), work, q, dq (the second stage's state), first (k1's velocity part), second,
    slope, start_slope (the friction's slope at the start), accel (the second stage's
    acceleration), rhs (k2's velocity part))``; ``k`` friction columns."""
    return (np.empty((n, 10)), np.empty(n), np.empty((k, n)), np.empty((n, 3, 3)),
            np.empty((n, 3)), np.empty((n, 9)), np.empty((n, 3)), np.empty((n, 3)),
            np.empty((1, n, n)), np.empty((1, n, n)), np.empty((n, n)), np.empty((2, n)),
            np.empty((1, n)), np.empty((1, n)), np.empty(n), np.empty(n), np.empty(n),
            np.empty(n), np.empty(n), np.empty(n))


@kernel
def _step(chain, gravity, independent, n_rotor, law, x, tau, tau_end, h, out, signs, frozen,
          ws):
    """One step of the state ``x`` over ``h`` into ``out``, the torque going linearly from
    ``tau`` to ``tau_end`` (the same array: held); False where ``M`` (or ``W``) is not
    positive definite. ``signs`` (2, n): the ``SIGN`` columns' signs of the two stages,
    written or, ``frozen``, read (the EKF's differences hold them: the sign's jump has no
    derivative). ``ws``: ``_workspace`` (left holding the step's stages).

    The step is ROS2 (Verwer, Spee, Blom & Hundsdorfer 1999, SIAM J. Sci. Comput. 20(4)), a
    second-order Rosenbrock W-method (second order whatever ``W``; L-stable with the exact
    Jacobian), with ``W = I - gamma h J`` built from the friction's stiff part only, ``J =
    [[0, I], [0, -M^-1 D]]``, ``D`` per joint the friction's slope ``d tau_f / d dq`` at the
    step's start: its velocity block is ``M + gamma h D`` (one Cholesky). A steep friction
    (an arctan of 30 s/rad on a wrist of 0.012 kg m^2: ``h D / M`` = 3 at 1 kHz, 30 at 100
    Hz) makes Heun's explicit step unstable about rest, where ROS2 damps it; with ``D = 0``
    ROS2 is Heun's step. (The secant ``tau_f / dq`` in place of the slope damps a joint
    leaving rest too much: on the TX40 at 100 Hz the filters then drove ``M`` indefinite
    within 0.3 s.)"""
    rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta = chain
    (pi, rotor, friction, rot, pos, state, force, moment, first_mass, second_mass, w, work, q,
     dq, first, second, slope, start_slope, accel, rhs) = ws
    n = zeta.shape[0]
    _model(x[2 * n:], independent, n, n_rotor, pi, rotor, friction)
    q[0, :] = x[:n]
    dq[0, :] = x[n:2 * n]
    _dynamics(rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, gravity, pi, rotor, friction, law,
              q, dq, tau, work, rot, pos, state, force, moment, first_mass, first, slope,
              signs[0], frozen)
    gh = _GAMMA * h
    w[:, :] = first_mass[0]
    for i in range(n):
        w[i, i] += gh * slope[i]
        start_slope[i] = slope[i]
    if not _cholesky(w):
        return False
    _solve(w, first)  # k1's velocity part, (M + gamma h D)^-1 r1
    for i in range(n):  # y + h k1, k1's position part dq + gamma h k1_v
        q[0, i] = x[i] + h * (x[n + i] + gh * first[i])
        dq[0, i] = x[n + i] + h * first[i]
    _dynamics(rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, gravity, pi, rotor, friction, law,
              q, dq, tau_end, work, rot, pos, state, force, moment, second_mass, second,
              slope, signs[1], frozen)
    if not _cholesky(second_mass[0]):
        return False
    _solve(second_mass[0], second)  # f's velocity part at y + h k1
    for i in range(n):
        accel[i] = second[i]
        second[i] -= 2.0 * first[i]
    for i in range(n):  # W's velocity row: (M + gamma h D) k2_v = M (a2 - 2 k1_v)
        total = 0.0
        for c in range(n):
            total += first_mass[0, i, c] * second[c]
        rhs[i] = total
    _solve(w, rhs)
    for i in range(n):
        k1_q = x[n + i] + gh * first[i]
        k2_q = dq[0, i] - 2.0 * k1_q + gh * rhs[i]
        out[i] = x[i] + h * (1.5 * k1_q + 0.5 * k2_q)
        out[n + i] = x[n + i] + h * (1.5 * first[i] + 0.5 * rhs[i])
    out[2 * n:] = x[2 * n:]
    return True


@kernel
def _regressor_at(chain, gravity, q, dq, ddq, rot, pos, state, axis_w, axis_v, out, posed):
    """The rigid-body regressor ``out[0]`` (n, 10 n) at ``q, dq, ddq`` (each (1, n)) under
    ``gravity``; ``posed``: ``rot, pos`` hold ``q``'s poses already."""
    rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta = chain
    if not posed:
        _poses(rev, k0, kc, ks, p0, pc, ps, pl, q, 0, rot, pos)
    _motion(zeta, eta, dq, ddq, gravity, 0, rot, pos, state)
    _regressor_columns(zeta, eta, 0, rot, pos, state, axis_w, axis_v, out)


@kernel
def _column(independent, n, n_rotor, law, k, rigid, accel, velocity, sign, column):
    """Base parameter ``k``'s column (n,) of the inverse dynamics' regressor, given the
    rigid-body regressor ``rigid`` (n, 10 n) at the same state: ``d (M a + c + g + tau_f) /
    d theta_k`` at acceleration ``accel`` (rotor: ``Ia_j`` times ``accel_j``), velocity
    ``velocity`` and friction signs ``sign`` (None of a friction column where ``velocity`` is
    None: its inertia part only, zero)."""
    codes, shapes = law
    index = independent[k]
    column[:] = 0.0
    if index < 10 * n:
        for i in range(n):
            column[i] = rigid[0, i, index]
    elif index < 10 * n + n_rotor:
        j = index - 10 * n
        column[j] = accel[j]
    elif velocity is not None:
        f = index - 10 * n - n_rotor
        c, j = f // n, f % n
        column[j] = _friction_column(codes[c], shapes[c, j], velocity[j], sign[j])[0]


@kernel
def _sensitivities(chain, gravity, independent, n_rotor, law, x, tau_end, h, signs, torque,
                   ws, with_theta, theta_columns, inputs):
    """The exact derivatives of the step ``_step`` just took (``ws`` holds its stages, the
    signs frozen): ``theta_columns`` (2n, r) ``d [q, dq]_next / d theta`` (``with_theta``)
    and ``inputs`` (2n, n) ``torque[j] d [q, dq]_next / d tau_j`` (the torque's both ends
    shifted: the process noise a torque error of std ``torque[j]`` brings). False where
    ``M`` is not positive definite at a perturbed second stage.

    The dynamics are linear in ``theta``: ``M(theta) a + c(theta) + g(theta) + tau_f(theta)
    = Y(q, dq, a) theta``, so ``d a / d theta = -M^-1 Y(q, dq, a)`` at fixed state, and the
    stages of ROS2 differentiate in closed form (``W k1 = r1``, ``W k2 = M (a2 - 2 k1)``),
    but for the second stage's state, which moves with ``k1``: that enters through ``G =
    gamma h^2 d a / d q + h d a / d dq`` at the second stage, n forward differences along
    ``(gamma h^2, h) e_j``. Three regressors and 2n accelerations where central
    differences of the whole step over ``theta`` took 4 r dynamics (r ~ 60-80 on a 7-joint
    arm): the EKF's bulk."""
    rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta = chain
    (pi, rotor, friction, rot, pos, state, force, moment, first_mass, second_mass, w, work, q2,
     dq2, first, second, _slope, start_slope, accel, rhs) = ws
    codes, shapes = law
    n = zeta.shape[0]
    r = independent.size
    gh = _GAMMA * h
    q1 = np.empty((1, n))
    dq1 = np.empty((1, n))
    q1[0, :] = x[:n]
    dq1[0, :] = x[n:2 * n]
    axis_w, axis_v = np.empty((n, 3)), np.empty((n, 3))
    start_y, mass_y, end_y = np.empty((1, n, 10 * n)), np.empty((1, n, 10 * n)), \
        np.empty((1, n, 10 * n))
    acc = np.empty((1, n))
    zero, no_gravity = np.zeros((1, n)), np.zeros(3)
    # the second stage's G by central differences of its acceleration, the signs frozen
    g_matrix = np.empty((n, n))
    q_s, dq_s = np.empty((1, n)), np.empty((1, n))
    mass_s, accel_plus, slope_s = np.empty((1, n, n)), np.empty(n), np.empty(n)
    for j in range(n):  # forward differences from the stage's own acceleration
        delta = _FORWARD_STEP * max(abs(dq2[0, j]), 1.0)  # the velocity's shift; the
        q_s[0, :] = q2[0]  # position's gamma h times it
        dq_s[0, :] = dq2[0]
        q_s[0, j] += gh * delta
        dq_s[0, j] += delta
        _dynamics(rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, gravity, pi, rotor, friction,
                  law, q_s, dq_s, tau_end, work, rot, pos, state, force, moment, mass_s,
                  accel_plus, slope_s, signs[1], True)
        if not _cholesky(mass_s[0]):
            return False
        _solve(mass_s[0], accel_plus)
        for i in range(n):  # per unit of k1_v: the shift is h times it in dq, delta in all
            g_matrix[i, j] = h * (accel_plus[i] - accel[i]) / delta
    d1, da2, t = np.empty(n), np.empty(n), np.empty(n)
    # the torques: r1 and r2 shift by e_j (both ends)
    for j in range(n):
        for i in range(2 * n):
            inputs[i, j] = 0.0
        if torque[j] == 0.0:
            continue
        d1[:] = 0.0
        d1[j] = 1.0
        _solve(w, d1)
        da2[:] = 0.0
        da2[j] = 1.0
        _solve(second_mass[0], da2)
        for i in range(n):
            total = 0.0
            for c in range(n):
                total += g_matrix[i, c] * d1[c]
            da2[i] += total - 2.0 * d1[i]  # now d(a2 - 2 k1)
        for i in range(n):
            total = 0.0
            for c in range(n):
                total += first_mass[0, i, c] * da2[c]
            t[i] = total
        _solve(w, t)  # d k2_v
        for i in range(n):
            inputs[i, j] = torque[j] * h * ((0.5 * gh + 0.5 * h) * d1[i] + 0.5 * gh * t[i])
            inputs[n + i, j] = torque[j] * h * (1.5 * d1[i] + 0.5 * t[i])
    if not with_theta:
        return True
    # theta: Y at the start (a = k1_v), M's part at the start (a = a2 - 2 k1_v - k2_v, no
    # velocity, no gravity), Y at the second stage (a = a2)
    for i in range(n):
        acc[0, i] = first[i]
    _regressor_at(chain, gravity, q1, dq1, acc, rot, pos, state, axis_w, axis_v, start_y,
                  False)
    for i in range(n):
        acc[0, i] = second[i] - rhs[i]
    _regressor_at(chain, no_gravity, q1, zero, acc, rot, pos, state, axis_w, axis_v, mass_y,
                  True)
    for i in range(n):
        acc[0, i] = accel[i]
    _regressor_at(chain, gravity, q2, dq2, acc, rot, pos, state, axis_w, axis_v, end_y, False)
    column, mass_column, end_column = np.empty(n), np.empty(n), np.empty(n)
    u = np.empty(n)
    for i in range(n):
        u[i] = second[i] - rhs[i]
    for k in range(r):
        _column(independent, n, n_rotor, law, k, start_y, first, dq1[0], signs[0], column)
        _column(independent, n, n_rotor, law, k, mass_y, u, None, signs[0], mass_column)
        _column(independent, n, n_rotor, law, k, end_y, accel, dq2[0], signs[1], end_column)
        # the friction's slope at the start, d D / d theta_k (a joint whose slope is clipped
        # at zero: none)
        index = independent[k] - 10 * n - n_rotor
        joint, rate = -1, 0.0
        if index >= 0:
            joint = index % n
            c = index // n
            if start_slope[joint] > 0.0:
                rate = _friction_column(codes[c], shapes[c, joint], dq1[0, joint],
                                        signs[0, joint])[1]
        for i in range(n):
            d1[i] = -column[i]
        if joint >= 0:
            d1[joint] -= gh * rate * first[joint]
        _solve(w, d1)  # d k1_v
        for i in range(n):
            da2[i] = -end_column[i]
        _solve(second_mass[0], da2)
        for i in range(n):
            total = 0.0
            for c in range(n):
                total += g_matrix[i, c] * d1[c]
            da2[i] += total - 2.0 * d1[i]  # d(a2 - 2 k1_v)
        for i in range(n):
            total = mass_column[i]
            for c in range(n):
                total += first_mass[0, i, c] * da2[c]
            t[i] = total
        if joint >= 0:
            t[joint] -= gh * rate * rhs[joint]
        _solve(w, t)  # d k2_v
        for i in range(n):
            theta_columns[i, k] = h * ((0.5 * gh + 0.5 * h) * d1[i] + 0.5 * gh * t[i])
            theta_columns[n + i, k] = h * (1.5 * d1[i] + 0.5 * t[i])
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
        # Joseph's form (I - K H) P (I - K H)^T + K R K^T, in its product form, with H the
        # first m rows of the identity: (I - K H) P = P - K P[:m], times (I - K H)^T on the
        # right takes that product's first m columns times K^T; O(L^2 m), not O(L^3)
        left = p - gain @ np.ascontiguousarray(p[:m, :])
        joseph = left - np.ascontiguousarray(left[:, :m]) @ gain.T \
            + (gain * (noise * noise)) @ gain.T
        p[:, :] = 0.5 * (joseph + joseph.T)
        return True
    pre = np.zeros((m + size, m + size))
    for i in range(m):
        pre[i, i] = noise[i]
    pre[:m, m:] = p[:m, :]
    pre[m:, m:] = p
    post = _lower_factor(pre)
    root = np.ascontiguousarray(post[:m, :m])
    scaled_gain = np.ascontiguousarray(post[m:, :m])
    for i in range(m):
        if root[i, i] == 0.0:
            return False
    # x += K e with K = scaled_gain root^-1
    solved = np.linalg.solve(root, innovation)
    x += scaled_gain @ solved
    p[:, :] = post[m:, m:]
    return True


@kernel
def _predict(kind, chain, gravity, independent, n_rotor, law, x, p, tau, tau_end, h, process,
             torque, gamma, wm, wc, ws):
    """Propagate the state and ``P`` (or its factor) over ``h``, the torque going from ``tau``
    to ``tau_end`` (``_step``, scratch ``ws``); process std ``process`` (L,) on each state
    and ``torque`` (n,) on each joint's torque (through the step: ``_sensitivities``).
    Returns a status.

    The EKF's ``F`` is the identity but for its first 2n rows (``theta`` maps to itself):
    its ``theta`` columns are exact (``_sensitivities``), its state columns forward
    differences of the step; ``F P F^T`` is formed by those rows alone (O(L^2 n)). (Central
    differences of the whole step over every state, 2 L + 2n steps a sample, and ``F P F^T``
    and Joseph's update in O(L^3) took 0.9 ms a sample on the Panda, L = 78; now 2n + 1
    steps.)"""
    size = x.size
    n = chain[8].shape[0]
    top = 2 * n
    new = np.empty(size)
    signs, scratch = np.empty((2, n)), np.empty((2, n))
    if not _step(chain, gravity, independent, n_rotor, law, x, tau, tau_end, h, new, signs,
                 False, ws):
        return NOT_DEFINITE
    ekf = kind == EKF or kind == SREKF
    rows = np.zeros((top, size))  # F's first 2n rows
    inputs = np.empty((top, n))
    if not _sensitivities(chain, gravity, independent, n_rotor, law, x, tau_end, h, signs,
                          torque, ws, ekf, rows[:, top:], inputs):
        return NOT_DEFINITE
    if ekf:
        plus, shifted = np.empty(size), x.copy()
        for j in range(top):  # forward differences from the step itself, the signs held
            if kind == EKF:
                spread = np.sqrt(abs(p[j, j]))
            else:
                spread = np.sqrt(np.sum(p[j, :j + 1] ** 2))
            delta = _FORWARD_STEP * max(abs(x[j]), spread, 1e-9)
            shifted[j] = x[j] + delta
            if not _step(chain, gravity, independent, n_rotor, law, shifted, tau, tau_end, h,
                         plus, signs, True, ws):
                return NOT_DEFINITE
            shifted[j] = x[j]
            for i in range(top):
                rows[i, j] = (plus[i] - new[i]) / delta
        x[:] = new
        if kind == EKF:
            product = rows @ p  # F's first rows times P (2n, L)
            corner = product @ rows.T + inputs @ inputs.T
            for i in range(top):
                for j in range(top):
                    p[i, j] = 0.5 * (corner[i, j] + corner[j, i])
                p[i, i] += process[i] * process[i]
            for i in range(top):
                for j in range(top, size):
                    p[i, j] = product[i, j]
                    p[j, i] = product[i, j]
            for i in range(top, size):
                p[i, i] += process[i] * process[i]
        else:
            jac = np.eye(size)
            jac[:top, :] = rows
            block = np.zeros((size, 2 * size + n))
            block[:, :size] = jac @ p
            for i in range(size):
                block[i, size + i] = process[i]
            block[:top, 2 * size:] = inputs
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
                if not _step(chain, gravity, independent, n_rotor, law, shifted, tau, tau_end,
                             h, points[1 + j + sign * size], scratch, False, ws):
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
            covariance[:top, :top] += inputs @ inputs.T
            p[:, :] = 0.5 * (covariance + covariance.T)
        else:
            block = np.zeros((size, 3 * size + n))
            spread = np.sqrt(wc[1])
            for i in range(1, 2 * size + 1):
                block[:, i - 1] = spread * (points[i] - mean)
            for i in range(size):
                block[i, 2 * size + i] = process[i]
            block[:top, 3 * size:] = inputs
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
def filter_block(kind, chain, gravity, independent, n_rotor, law, linear, x, p, last_tau,
                 started, q, dq, tau, periods, velocity, noise, process, torque, band, gamma, wm,
                 wc, every, count, history, history_std, recorded):
    """Advance a filter over the samples ``q, dq, tau`` (k, n): for each, predict from the
    previous sample over ``periods[i]`` (its torque ``last_tau`` held or, ``linear``, going
    linearly to this sample's), then update with its positions (and velocities when
    ``velocity``); the first sample (``started[0] == 0``) sets the state's ``q, dq`` instead.
    ``law``: the friction's columns (the module). The process noise: ``process`` (L,) on the
    states, and ``torque`` (n,) on the joints' torques, through the step; a joint whose
    velocity changes sign between the state and the sample (``dq``, measured or not) or is
    within ``band`` of zero at either end has twice its estimated Coulomb level (its ``SIGN``
    columns' coefficients) added to its torque's std for that step: Coulomb friction may
    switch inside the period (a sign model chatters about zero while the joint sticks), which
    one step with the sign of its ends cannot follow (errors of 1e-2 rad/s in every joint,
    through M^-1, on the Panda twin). ``count[0]`` counts the samples; every ``every``-th
    writes ``theta`` and its std into ``history``, ``history_std`` at row ``recorded[0]``.
    Returns ``(status, index)`` of the first failing sample (``OK, -1`` when none failed); a
    failing sample leaves ``x`` and ``p`` as they were before it."""
    n = q.shape[1]
    m = 2 * n if velocity else n
    size = x.size
    y = np.empty(m)
    spread = np.empty(n)
    codes = law[0]
    pi, rotor, friction = np.empty((n, 10)), np.empty(n), np.empty((codes.size, n))
    saved_x, saved_p = x.copy(), p.copy()
    ws = _workspace(n, codes.size)
    for k in range(q.shape[0]):
        saved_x[:] = x  # a failing sample leaves the state as it was before it
        saved_p[:, :] = p
        status = OK
        if started[0] != 0:
            _model(x[2 * n:], independent, n, n_rotor, pi, rotor, friction)
            for i in range(n):  # Coulomb friction may switch inside the period
                spread[i] = torque[i]
                if x[n + i] * dq[k, i] <= 0.0 or min(abs(x[n + i]), abs(dq[k, i])) < band:
                    for c in range(codes.size):
                        if codes[c] == SIGN:
                            spread[i] += 2.0 * abs(friction[c, i])
            status = _predict(kind, chain, gravity, independent, n_rotor, law, x, p, last_tau,
                              tau[k] if linear else last_tau, periods[k], process, spread,
                              gamma, wm, wc, ws)
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
