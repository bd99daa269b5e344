"""The closed loop's control periods, compiled: one serial loop over a block of samples.

Per sample k (``twin.simulate_closed_loop`` says what each step means):

1. the controller reads the encoders: ``qm = round(q / resolution) resolution`` (when a
   resolution is given), ``dqm = (qm - qm_prev) rate`` (velocities from positions, from the
   second sample on) or the true ``dq``;
2. it computes ``tau`` on its model: ``M^(qm) a + c^(qm, dqm) + g^(qm)`` with
   ``a = ddq_d + Kd (dq_d - dqm) + Kp (q_d - qm)`` (computed torque), or
   ``M^(qm) ddq_d + Kd (dq_d - dqm) + Kp (q_d - qm) + c^ + g^`` (joint impedance); the sum
   ``M^ a + c^ + g^`` in one RNEA pass with ``ddq = a`` (rotor inertias ``Ia a`` added);
3. ``tau`` is held while ``substeps`` RK4 steps integrate the truth's state ``(q, dq, z)``:
   ``ddq = M(q)^-1 (tau + tau_ext - tau_f(dq, z) - c(q, dq) - g(q))`` (``c + g`` by the RNEA
   with ``ddq = 0``, M by the composite-rigid-body algorithm with the rotor inertias on its
   diagonal, solved by its LDL^T factors; the stages' cos and sin from the substep's own, by the
   sum formulas), ``dz`` of the LuGre state (``dynid.friction._compiled``);
   ``tau_ext = J(q)^T F`` of the contacts active at the stage's time (``contacts``, a table
   of ``dynid.simulate.contacts.TABLE_COLUMNS`` rows, evaluated on the stage's poses by the
   leaf ``external_torques_given_poses``; none: the term is skipped, bit for bit).

``run_block`` advances rows ``first..stop-1`` of a piece of the run and returns
``(status, k)``: ``OK``, or ``DIVERGED`` / ``NOT_POSITIVE_DEFINITE`` at row k, so that the
caller can report progress and stay interruptible between blocks. A model is the tuple
``model_arrays`` gives: the chain arrays (``dynid.dynamics._chain``), then its link parameters,
gravity and rotor inertias.
"""

from __future__ import annotations

import numpy as np

from dynid._jit import kernel
from dynid.dynamics._chain import chain_arrays
from dynid.dynamics._kernels import (
    _joint_torques,
    _link_forces,
    _mass_matrix_given_poses,
    _motion,
    _poses,
    _poses_given_angles,
)
from dynid.friction import _compiled as friction
from dynid.robot import Robot
from dynid.simulate.contacts import external_torques_given_poses

OK, DIVERGED, NOT_POSITIVE_DEFINITE = 0, 1, 2


def model_arrays(robot: Robot) -> tuple:
    """``(*chain_arrays, parameters (n, 10), gravity (3,), rotor_inertia (n,))``, C arrays."""
    return (*chain_arrays(robot), np.array(robot.parameters, order="C"),
            np.array(robot.gravity, dtype=float), np.array(robot.rotor_inertia, dtype=float))


@kernel
def _ldl_solve(a, x, row, offset):
    """``x[row, offset:offset + n] <- a^-1 x[row, offset:offset + n]`` for ``a`` (n, n)
    symmetric positive definite, by its factors ``a = L D L^T`` (unit lower-triangular L, no
    square roots on the critical path), in place: the strict lower triangle becomes L's, the
    diagonal ``1 / D`` (multiplications, not divisions, in the solves), the strict upper
    triangle ``L D`` (column j of ``L D`` in row j). False where ``a`` is not positive definite
    (a pivot ``D[j] <= 0`` or NaN, as in LAPACK's potrf; ``x`` then holds no solution)."""
    n = a.shape[0]
    definite = True
    for j in range(n):
        d = a[j, j]
        for m in range(j):
            d -= a[j, m] * a[m, j]
        definite = definite and d > 0.0
        inverse = 1.0 / d if d > 0.0 else np.nan
        a[j, j] = inverse
        for i in range(j + 1, n):
            s = a[i, j]
            for m in range(j):
                s -= a[i, m] * a[m, j]
            a[j, i] = s
            a[i, j] = s * inverse
    for i in range(n):  # L y = b
        s = x[row, offset + i]
        for m in range(i):
            s -= a[i, m] * x[row, offset + m]
        x[row, offset + i] = s
    for i in range(n - 1, -1, -1):  # D L^T x = y
        s = x[row, offset + i] * a[i, i]
        for m in range(i + 1, n):
            s -= a[m, i] * x[row, offset + m]
        x[row, offset + i] = s
    return definite


@kernel
def _cos_sin_near(x, c, s, delta):
    """``(cos(x + delta), sin(x + delta))`` from ``c = cos(x)``, ``s = sin(x)``: by the sum
    formulas with Taylor series of ``delta`` where ``|delta| <= 0.05`` (an RK4 stage's step;
    the first omitted terms ``delta^9 / 9!`` and ``delta^10 / 10!`` are below 1e-16
    relative), directly otherwise. Half the time of ``np.cos`` and ``np.sin``."""
    if abs(delta) > 0.05:
        return np.cos(x + delta), np.sin(x + delta)
    d2 = delta * delta
    sd = delta * (1.0 - d2 / 6.0 * (1.0 - d2 / 20.0 * (1.0 - d2 / 42.0 * (1.0 - d2 / 72.0))))
    cd = 1.0 - d2 / 2.0 * (1.0 - d2 / 12.0 * (1.0 - d2 / 30.0 * (1.0 - d2 / 56.0)))
    return c * cd - s * sd, s * cd + c * sd


# Reference counting: a compiled function that calls another one (not inlined) takes a
# reference to each of its array arguments on entry and drops it on exit, atomically. The
# per-evaluation work therefore sits in ``run_block`` itself (entered once per block) and calls
# only leaf functions (which call nothing that is not inlined: numba can prune their counting);
# done per RK4 stage, the counting cost as much as the dynamics.
@kernel
def run_block(truth, model, friction_code, friction_table, q_d, dq_d, ddq_d, kp, kd, impedance,
              resolution, from_positions, rate, substeps, first, stop, state, previous,
              q_log, dq_log, ddq_log, tau_log, times, contacts, offset, total):
    """Rows ``first..stop-1`` of the closed loop (see the module); ``state`` (3 n) and
    ``previous`` (the last measured positions, n) carry over to the next block. The arrays
    (reference, logs, ``times`` [s]) hold a piece of the run: their row 0 is sample
    ``offset`` of ``total``. ``contacts`` (m, 12): the contact table (m = 0: none)."""
    rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, pi, gravity, rotor = truth
    m_rev, m_k0, m_kc, m_ks, m_p0, m_pc, m_ps, m_pl, m_zeta, m_eta, m_pi, m_gravity, m_rotor = model
    n = q_d.shape[1]
    h = 1.0 / rate / substeps
    steps = (0.0, 0.5 * h, 0.5 * h, h)  # RK4 evaluates stage s at state + steps[s] k_(s-1)
    # one-sample rows for the kernels, and their workspace
    q_row, dq_row, ddq_row, zero_row = (np.empty((1, n)), np.empty((1, n)), np.empty((1, n)),
                                        np.zeros((1, n)))
    tau_row, inertia = np.empty((1, n)), np.empty((1, n, n))
    matrix = inertia[0]  # M(q) as the mass-matrix kernel writes it, (n, n) for the solve
    rot, pos, motion = np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((n, 9))
    force, moment = np.empty((n, 3)), np.empty((n, 3))
    measured, tau = np.empty(n), np.empty(n)
    stages, trial = np.empty((4, 3 * n)), np.empty(3 * n)
    external, frame_rot, frame_pos = np.zeros(n), np.empty((n, 3, 3)), np.empty((n, 3))
    # cos and sin of the positions at a substep's start, then at each of its stages
    base_cos, base_sin, cosines, sines = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    for k in range(first, stop):
        # the controller acts on what the encoders report, as on the real robot
        for i in range(n):
            measured[i] = (np.rint(state[i] / resolution) * resolution if resolution > 0
                           else state[i])
            rate_measured = state[n + i]
            if from_positions and offset + k > 0:
                rate_measured = (measured[i] - previous[i]) * rate
            previous[i] = measured[i]
            feedback = kd[i] * (dq_d[k, i] - rate_measured) + kp[i] * (q_d[k, i] - measured[i])
            q_row[0, i] = measured[i]
            dq_row[0, i] = rate_measured
            ddq_row[0, i] = ddq_d[k, i] if impedance else ddq_d[k, i] + feedback
            tau[i] = feedback if impedance else 0.0
        # M^ a + c^ + g^ in one inverse-dynamics pass of the controller's model
        _poses(m_rev, m_k0, m_kc, m_ks, m_p0, m_pc, m_ps, m_pl, q_row, 0, rot, pos)
        _motion(m_zeta, m_eta, dq_row, ddq_row, m_gravity, 0, rot, pos, motion)
        _link_forces(m_pi, motion, force, moment)
        _joint_torques(m_zeta, m_eta, 0, rot, pos, force, moment, tau_row)
        finite = True
        for i in range(n):
            tau[i] += tau_row[0, i] + m_rotor[i] * ddq_row[0, i]
            finite = finite and np.isfinite(tau[i])
            q_log[k, i] = state[i]
            dq_log[k, i] = state[n + i]
            tau_log[k, i] = tau[i]
        if not finite:
            return DIVERGED, k
        # RK4 stage s of substep j is evaluation 4 j + s; the first is also the logged
        # acceleration, and the last sample needs no step
        for evaluation in range(4 * substeps if offset + k + 1 < total else 1):
            s = evaluation % 4
            step = steps[s]
            for i in range(3 * n):
                trial[i] = state[i] + step * stages[s - 1, i] if s > 0 else state[i]
                finite = finite and np.isfinite(trial[i])
            if not finite:
                return DIVERGED, k
            for i in range(n):
                q_row[0, i] = trial[i]
                dq_row[0, i] = trial[n + i]
                if s == 0:
                    base_cos[i], base_sin[i] = np.cos(trial[i]), np.sin(trial[i])
                    cosines[i], sines[i] = base_cos[i], base_sin[i]
                else:
                    cosines[i], sines[i] = _cos_sin_near(state[i], base_cos[i], base_sin[i],
                                                         step * stages[s - 1, i])
            # the truth: M(q) ddq = tau + tau_ext - tau_f(dq, z) - c(q, dq) - g(q), dz = state_rate
            _poses_given_angles(rev, k0, kc, ks, p0, pc, ps, pl, q_row[0], cosines, sines, rot,
                                pos)
            _motion(zeta, eta, dq_row, zero_row, gravity, 0, rot, pos, motion)
            _link_forces(pi, motion, force, moment)
            _joint_torques(zeta, eta, 0, rot, pos, force, moment, tau_row)
            _mass_matrix_given_poses(zeta, eta, pi, 0, rot, pos, inertia)
            if contacts.shape[0] > 0:  # tau_ext = J^T F at the stage's time, on its poses
                external_torques_given_poses(
                    contacts, times[k] + (evaluation // 4) * h + step, zeta, eta,
                    rot, pos, frame_rot, frame_pos, external)
            for i in range(n):
                inertia[0, i, i] += rotor[i]
                v, z = trial[n + i], trial[2 * n + i]
                tau_f, z_rate = friction.evaluate(
                    friction_code, friction.parameters(friction_table, i), v, z)
                stages[s, i] = v
                applied = tau[i] + external[i] if contacts.shape[0] > 0 else tau[i]
                stages[s, n + i] = (applied - tau_f) - tau_row[0, i]  # solved for ddq below
                stages[s, 2 * n + i] = z_rate
            if not _ldl_solve(matrix, stages, s, n):
                return NOT_POSITIVE_DEFINITE, k
            if evaluation == 0:
                for i in range(n):
                    ddq_log[k, i] = stages[0, n + i]
            if s == 3:
                for i in range(3 * n):
                    state[i] = state[i] + h / 6 * (stages[0, i] + 2 * stages[1, i]
                                                   + 2 * stages[2, i] + stages[3, i])
        for i in range(3 * n):
            if not np.isfinite(state[i]):
                return DIVERGED, k
    return OK, stop
