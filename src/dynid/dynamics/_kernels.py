"""Compiled per-sample recursions, and the batched kernels built on them: each in a parallel
form (``prange`` over chunks of samples) and a serial twin (``*_serial``, the same per-sample
functions on the calling thread); ``_launch`` picks one.

Per sample k: ``_poses`` (every link's pose in its parent), then ``_motion`` (velocities and
accelerations) and ``_link_forces`` / ``_joint_torques`` (the RNEA), ``_regressor_columns``, or
``_mass_matrix_given_poses`` (the composite-rigid-body algorithm). These are leaves: they call
nothing that is not inlined. A compiled function that calls another one takes a reference to
each of its array arguments on entry and drops it on exit (atomic counting that numba prunes
only in leaves); done per sample that costs as much as a small recursion, so the batched
kernels and the closed loop (``dynid.simulate._closed_loop``) call the leaves one after another
rather than through a per-sample wrapper.

Notation (all vectors in the coordinates of the link they belong to, about its origin):
``w`` angular velocity, ``dw`` angular acceleration, ``v``/``a`` spatial linear velocity and
acceleration of the link origin (Featherstone), ``ac = a + w x v`` the classical acceleration of
the link origin. Gravity enters as a base acceleration ``-g``. For link parameters
``(m, h = m c, I about the origin)`` the force and moment the link needs are

    f = m ac + dw x h + w x (w x h)
    n = I dw + w x (I w) + h x ac

which is linear in the 10-vector; the torque of joint i is ``zeta_i . n_i + eta_i . f_i`` after
the backward sum. The regressor projects every link's force basis on the motion subspaces of
the joints before it, carried into that link's frame:

    zeta' = R^T zeta,   eta' = R^T (eta + zeta x p)      (from link j-1 to link j)
    Y[i, j, m]   = eta' . ac
    Y[i, j, h]   = ac x zeta' + eta' x dw + (eta' x w) x w
    Y[i, j, I]   = sym(zeta', dw) + sym(zeta' x w, w)     (sym(u, w) = entries of u^T I w)

Parameter layout ``[m, hx, hy, hz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz]`` (``dynid.robot.inertia``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from dynid.robot.inertia import PARAMETER_NAMES

# The kernels index the 10-vector by position for speed: they are written for this order.
if PARAMETER_NAMES != ("m", "mx", "my", "mz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz"):
    raise ImportError("dynid.dynamics._kernels is written for another parameter layout")

CHUNK = 256


@njit(cache=True)
def _pose(rev, k0, kc, ks, p0, pc, ps, pl, i, qi, rot, pos):
    """Pose of link i in link i-1 (``x_parent = rot x + pos``), into ``rot[i]``, ``pos[i]``."""
    if rev[i] != 0.0:
        c = np.cos(qi)
        s = np.sin(qi)
        lin = 0.0
    else:
        c = 0.0
        s = 0.0
        lin = qi
    for r in range(3):
        for col in range(3):
            rot[i, r, col] = k0[i, r, col] + c * kc[i, r, col] + s * ks[i, r, col]
        pos[i, r] = p0[i, r] + c * pc[i, r] + s * ps[i, r] + lin * pl[i, r]


@njit(cache=True)
def _rt(rot, i, x, y, z):
    """``rot[i]^T (x, y, z)``: parent coordinates -> child coordinates."""
    return (
        rot[i, 0, 0] * x + rot[i, 1, 0] * y + rot[i, 2, 0] * z,
        rot[i, 0, 1] * x + rot[i, 1, 1] * y + rot[i, 2, 1] * z,
        rot[i, 0, 2] * x + rot[i, 1, 2] * y + rot[i, 2, 2] * z,
    )


@njit(cache=True)
def _r(rot, i, x, y, z):
    """``rot[i] (x, y, z)``: child coordinates -> parent coordinates."""
    return (
        rot[i, 0, 0] * x + rot[i, 0, 1] * y + rot[i, 0, 2] * z,
        rot[i, 1, 0] * x + rot[i, 1, 1] * y + rot[i, 1, 2] * z,
        rot[i, 2, 0] * x + rot[i, 2, 1] * y + rot[i, 2, 2] * z,
    )


@njit(cache=True)
def _cross(ax, ay, az, bx, by, bz):
    return ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx


@njit(cache=True)
def _poses(rev, k0, kc, ks, p0, pc, ps, pl, q, k, rot, pos):
    """Every link's pose in its parent at sample k, into ``rot``, ``pos``."""
    for i in range(q.shape[1]):
        _pose(rev, k0, kc, ks, p0, pc, ps, pl, i, q[k, i], rot, pos)


@njit(cache=True)
def _motion(zeta, eta, qd, qdd, gravity, k, rot, pos, state):
    """Forward pass for sample k, given its poses (``_poses``): per link i,
    ``state[i] = (w, dw, ac)`` (9 numbers)."""
    n = qd.shape[1]
    wx = wy = wz = 0.0
    vx = vy = vz = 0.0
    dwx = dwy = dwz = 0.0
    ax, ay, az = -gravity[0], -gravity[1], -gravity[2]
    for i in range(n):
        px, py, pz = pos[i, 0], pos[i, 1], pos[i, 2]
        ux, uy, uz = _cross(wx, wy, wz, px, py, pz)
        gx, gy, gz = _cross(dwx, dwy, dwz, px, py, pz)
        vx, vy, vz = _rt(rot, i, vx + ux, vy + uy, vz + uz)
        ax, ay, az = _rt(rot, i, ax + gx, ay + gy, az + gz)
        wx, wy, wz = _rt(rot, i, wx, wy, wz)
        dwx, dwy, dwz = _rt(rot, i, dwx, dwy, dwz)
        zx, zy, zz = zeta[i, 0], zeta[i, 1], zeta[i, 2]
        ex, ey, ez = eta[i, 0], eta[i, 1], eta[i, 2]
        rate, acc = qd[k, i], qdd[k, i]
        wx += zx * rate
        wy += zy * rate
        wz += zz * rate
        vx += ex * rate
        vy += ey * rate
        vz += ez * rate
        # v x_m (S qd): (w x zeta qd, w x eta qd + v x zeta qd)
        cx, cy, cz = _cross(wx, wy, wz, zx, zy, zz)
        dwx += zx * acc + cx * rate
        dwy += zy * acc + cy * rate
        dwz += zz * acc + cz * rate
        c1x, c1y, c1z = _cross(wx, wy, wz, ex, ey, ez)
        c2x, c2y, c2z = _cross(vx, vy, vz, zx, zy, zz)
        ax += ex * acc + (c1x + c2x) * rate
        ay += ey * acc + (c1y + c2y) * rate
        az += ez * acc + (c1z + c2z) * rate
        cx, cy, cz = _cross(wx, wy, wz, vx, vy, vz)
        state[i, 0] = wx
        state[i, 1] = wy
        state[i, 2] = wz
        state[i, 3] = dwx
        state[i, 4] = dwy
        state[i, 5] = dwz
        state[i, 6] = ax + cx
        state[i, 7] = ay + cy
        state[i, 8] = az + cz


@njit(cache=True)
def _inertia_times6(ixx, ixy, ixz, iyy, iyz, izz, x, y, z):
    """``I (x, y, z)`` for the symmetric I with entries (xx, xy, xz, yy, yz, zz)."""
    return (
        ixx * x + ixy * y + ixz * z,
        ixy * x + iyy * y + iyz * z,
        ixz * x + iyz * y + izz * z,
    )


@njit(cache=True)
def _inertia_times(pi, i, x, y, z):
    """``I_i (x, y, z)`` with I_i about the link origin, entries pi[i, 4:10]."""
    return _inertia_times6(pi[i, 4], pi[i, 5], pi[i, 6], pi[i, 7], pi[i, 8], pi[i, 9], x, y, z)


@njit(cache=True)
def _link_forces(pi, state, force, moment):
    """The force and moment each link needs for its motion ``state`` (``_motion``)."""
    n = pi.shape[0]
    for i in range(n):
        wx, wy, wz = state[i, 0], state[i, 1], state[i, 2]
        dwx, dwy, dwz = state[i, 3], state[i, 4], state[i, 5]
        acx, acy, acz = state[i, 6], state[i, 7], state[i, 8]
        m, hx, hy, hz = pi[i, 0], pi[i, 1], pi[i, 2], pi[i, 3]
        whx, why, whz = _cross(wx, wy, wz, hx, hy, hz)
        t1x, t1y, t1z = _cross(dwx, dwy, dwz, hx, hy, hz)
        t2x, t2y, t2z = _cross(wx, wy, wz, whx, why, whz)
        force[i, 0] = m * acx + t1x + t2x
        force[i, 1] = m * acy + t1y + t2y
        force[i, 2] = m * acz + t1z + t2z
        iwx, iwy, iwz = _inertia_times(pi, i, wx, wy, wz)
        idx, idy, idz = _inertia_times(pi, i, dwx, dwy, dwz)
        t3x, t3y, t3z = _cross(wx, wy, wz, iwx, iwy, iwz)
        t4x, t4y, t4z = _cross(hx, hy, hz, acx, acy, acz)
        moment[i, 0] = idx + t3x + t4x
        moment[i, 1] = idy + t3y + t4y
        moment[i, 2] = idz + t3z + t4z


@njit(cache=True)
def _joint_torques(zeta, eta, k, rot, pos, force, moment, tau):
    """``tau[k]``: the link forces and moments summed from the tip down (overwritten on the
    way), projected on each joint's motion subspace."""
    n = zeta.shape[0]
    for i in range(n - 1, -1, -1):
        tau[k, i] = (
            zeta[i, 0] * moment[i, 0] + zeta[i, 1] * moment[i, 1]
            + zeta[i, 2] * moment[i, 2] + eta[i, 0] * force[i, 0]
            + eta[i, 1] * force[i, 1] + eta[i, 2] * force[i, 2]
        )
        if i > 0:
            fx, fy, fz = _r(rot, i, force[i, 0], force[i, 1], force[i, 2])
            nx, ny, nz = _r(rot, i, moment[i, 0], moment[i, 1], moment[i, 2])
            cx, cy, cz = _cross(pos[i, 0], pos[i, 1], pos[i, 2], fx, fy, fz)
            force[i - 1, 0] += fx
            force[i - 1, 1] += fy
            force[i - 1, 2] += fz
            moment[i - 1, 0] += nx + cx
            moment[i - 1, 1] += ny + cy
            moment[i - 1, 2] += nz + cz


@njit(parallel=True, cache=True)
def rnea(rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, pi, q, qd, qdd, gravity, tau):
    """Inverse dynamics ``tau[k] = M ddq + c + g`` for every sample k (writes ``tau``)."""
    n_samples, n = q.shape
    for chunk in prange((n_samples + CHUNK - 1) // CHUNK):
        rot, pos = np.empty((n, 3, 3)), np.empty((n, 3))
        state, force, moment = np.empty((n, 9)), np.empty((n, 3)), np.empty((n, 3))
        for k in range(chunk * CHUNK, min(n_samples, (chunk + 1) * CHUNK)):
            _poses(rev, k0, kc, ks, p0, pc, ps, pl, q, k, rot, pos)
            _motion(zeta, eta, qd, qdd, gravity, k, rot, pos, state)
            _link_forces(pi, state, force, moment)
            _joint_torques(zeta, eta, k, rot, pos, force, moment, tau)


@njit(cache=True)
def rnea_serial(rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, pi, q, qd, qdd, gravity, tau):
    """``rnea`` on the calling thread alone."""
    n_samples, n = q.shape
    rot, pos = np.empty((n, 3, 3)), np.empty((n, 3))
    state, force, moment = np.empty((n, 9)), np.empty((n, 3)), np.empty((n, 3))
    for k in range(n_samples):
        _poses(rev, k0, kc, ks, p0, pc, ps, pl, q, k, rot, pos)
        _motion(zeta, eta, qd, qdd, gravity, k, rot, pos, state)
        _link_forces(pi, state, force, moment)
        _joint_torques(zeta, eta, k, rot, pos, force, moment, tau)


@njit(cache=True)
def _regressor_columns(zeta, eta, k, rot, pos, state, axis_w, axis_v, out):
    """The regressor of sample k into ``out[k]``, given its poses and motion (``_poses``,
    ``_motion``)."""
    n = zeta.shape[0]
    for j in range(n):
        # the motion subspaces of joints 0..j-1 from link j-1 into link j coordinates (inline:
        # a call here would cost reference counting on every sample), then joint j's own
        px, py, pz = pos[j, 0], pos[j, 1], pos[j, 2]
        for i in range(j):
            zx, zy, zz = axis_w[i, 0], axis_w[i, 1], axis_w[i, 2]
            cx, cy, cz = _cross(zx, zy, zz, px, py, pz)
            ex, ey, ez = _rt(rot, j, axis_v[i, 0] + cx, axis_v[i, 1] + cy, axis_v[i, 2] + cz)
            zx, zy, zz = _rt(rot, j, zx, zy, zz)
            axis_w[i, 0], axis_w[i, 1], axis_w[i, 2] = zx, zy, zz
            axis_v[i, 0], axis_v[i, 1], axis_v[i, 2] = ex, ey, ez
        for c in range(3):
            axis_w[j, c] = zeta[j, c]
            axis_v[j, c] = eta[j, c]
        wx, wy, wz = state[j, 0], state[j, 1], state[j, 2]
        dwx, dwy, dwz = state[j, 3], state[j, 4], state[j, 5]
        acx, acy, acz = state[j, 6], state[j, 7], state[j, 8]
        col = 10 * j
        for i in range(j + 1):
            zx, zy, zz = axis_w[i, 0], axis_w[i, 1], axis_w[i, 2]
            ex, ey, ez = axis_v[i, 0], axis_v[i, 1], axis_v[i, 2]
            out[k, i, col] = ex * acx + ey * acy + ez * acz
            h1x, h1y, h1z = _cross(acx, acy, acz, zx, zy, zz)
            h2x, h2y, h2z = _cross(ex, ey, ez, dwx, dwy, dwz)
            ewx, ewy, ewz = _cross(ex, ey, ez, wx, wy, wz)
            h3x, h3y, h3z = _cross(ewx, ewy, ewz, wx, wy, wz)
            out[k, i, col + 1] = h1x + h2x + h3x
            out[k, i, col + 2] = h1y + h2y + h3y
            out[k, i, col + 3] = h1z + h2z + h3z
            ux, uy, uz = _cross(zx, zy, zz, wx, wy, wz)
            out[k, i, col + 4] = zx * dwx + ux * wx
            out[k, i, col + 5] = zx * dwy + zy * dwx + ux * wy + uy * wx
            out[k, i, col + 6] = zx * dwz + zz * dwx + ux * wz + uz * wx
            out[k, i, col + 7] = zy * dwy + uy * wy
            out[k, i, col + 8] = zy * dwz + zz * dwy + uy * wz + uz * wy
            out[k, i, col + 9] = zz * dwz + uz * wz
        for i in range(j + 1, n):
            for c in range(10):
                out[k, i, col + c] = 0.0


@njit(parallel=True, cache=True)
def regressor(rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, q, qd, qdd, gravity, out):
    """Joint-torque regressor: ``out[k]`` (n, 10 n) with ``tau[k] = out[k] @ pi.ravel()``."""
    n_samples, n = q.shape
    for chunk in prange((n_samples + CHUNK - 1) // CHUNK):
        rot, pos, state = np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((n, 9))
        axis_w, axis_v = np.empty((n, 3)), np.empty((n, 3))
        for k in range(chunk * CHUNK, min(n_samples, (chunk + 1) * CHUNK)):
            _poses(rev, k0, kc, ks, p0, pc, ps, pl, q, k, rot, pos)
            _motion(zeta, eta, qd, qdd, gravity, k, rot, pos, state)
            _regressor_columns(zeta, eta, k, rot, pos, state, axis_w, axis_v, out)


@njit(cache=True)
def regressor_serial(rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, q, qd, qdd, gravity, out):
    """``regressor`` on the calling thread alone."""
    n_samples, n = q.shape
    rot, pos, state = np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((n, 9))
    axis_w, axis_v = np.empty((n, 3)), np.empty((n, 3))
    for k in range(n_samples):
        _poses(rev, k0, kc, ks, p0, pc, ps, pl, q, k, rot, pos)
        _motion(zeta, eta, qd, qdd, gravity, k, rot, pos, state)
        _regressor_columns(zeta, eta, k, rot, pos, state, axis_w, axis_v, out)


@njit(cache=True)
def _rotated_inertia(rot, j, ixx, ixy, ixz, iyy, iyz, izz):
    """``rot[j] I rot[j]^T`` for the symmetric I: entries (xx, xy, xz, yy, yz, zz)."""
    # column b of I R^T is u_b = I r_b (r_b row b of R); entry (a, b) of R I R^T is r_a . u_b
    ux, uy, uz = _inertia_times6(ixx, ixy, ixz, iyy, iyz, izz,
                                 rot[j, 0, 0], rot[j, 0, 1], rot[j, 0, 2])
    vx, vy, vz = _inertia_times6(ixx, ixy, ixz, iyy, iyz, izz,
                                 rot[j, 1, 0], rot[j, 1, 1], rot[j, 1, 2])
    wx, wy, wz = _inertia_times6(ixx, ixy, ixz, iyy, iyz, izz,
                                 rot[j, 2, 0], rot[j, 2, 1], rot[j, 2, 2])
    return (
        rot[j, 0, 0] * ux + rot[j, 0, 1] * uy + rot[j, 0, 2] * uz,
        rot[j, 0, 0] * vx + rot[j, 0, 1] * vy + rot[j, 0, 2] * vz,
        rot[j, 0, 0] * wx + rot[j, 0, 1] * wy + rot[j, 0, 2] * wz,
        rot[j, 1, 0] * vx + rot[j, 1, 1] * vy + rot[j, 1, 2] * vz,
        rot[j, 1, 0] * wx + rot[j, 1, 1] * wy + rot[j, 1, 2] * wz,
        rot[j, 2, 0] * wx + rot[j, 2, 1] * wy + rot[j, 2, 2] * wz,
    )


@njit(cache=True)
def _mass_matrix_given_poses(zeta, eta, pi, k, rot, pos, composite, out):
    """``M`` of sample k into ``out[k]``, rigid bodies only, given its poses (``_poses``).

    The composite-rigid-body algorithm: ``composite[j]``, the 10-vector of links j..n-1 in
    link-j coordinates (about its origin), from the tip down; then the momentum of composite i
    moving along joint i's motion subspace, ``(f, n) = (m eta + zeta x h, I zeta + h x eta)``,
    carried down the chain as the RNEA carries forces: ``M[j, i] = zeta_j . n + eta_j . f``.
    """
    n = zeta.shape[0]
    for c in range(10):
        composite[n - 1, c] = pi[n - 1, c]
    for j in range(n - 1, 0, -1):
        # composite j into link j-1 coordinates (x_parent = R x + p, b = R h):
        # I' = R I R^T + m (p.p E - p p^T) + 2 (p.b) E - p b^T - b p^T,  h' = b + m p
        m = composite[j, 0]
        bx, by, bz = _r(rot, j, composite[j, 1], composite[j, 2], composite[j, 3])
        px, py, pz = pos[j, 0], pos[j, 1], pos[j, 2]
        sxx, sxy, sxz, syy, syz, szz = _rotated_inertia(
            rot, j, composite[j, 4], composite[j, 5], composite[j, 6], composite[j, 7],
            composite[j, 8], composite[j, 9])
        pp = px * px + py * py + pz * pz
        pb2 = 2.0 * (px * bx + py * by + pz * bz)
        composite[j - 1, 0] = pi[j - 1, 0] + m
        composite[j - 1, 1] = pi[j - 1, 1] + bx + m * px
        composite[j - 1, 2] = pi[j - 1, 2] + by + m * py
        composite[j - 1, 3] = pi[j - 1, 3] + bz + m * pz
        composite[j - 1, 4] = pi[j - 1, 4] + sxx + m * (pp - px * px) + pb2 - 2.0 * px * bx
        composite[j - 1, 5] = pi[j - 1, 5] + sxy - m * px * py - (px * by + bx * py)
        composite[j - 1, 6] = pi[j - 1, 6] + sxz - m * px * pz - (px * bz + bx * pz)
        composite[j - 1, 7] = pi[j - 1, 7] + syy + m * (pp - py * py) + pb2 - 2.0 * py * by
        composite[j - 1, 8] = pi[j - 1, 8] + syz - m * py * pz - (py * bz + by * pz)
        composite[j - 1, 9] = pi[j - 1, 9] + szz + m * (pp - pz * pz) + pb2 - 2.0 * pz * bz
    for i in range(n):
        zx, zy, zz = zeta[i, 0], zeta[i, 1], zeta[i, 2]
        ex, ey, ez = eta[i, 0], eta[i, 1], eta[i, 2]
        m, hx, hy, hz = composite[i, 0], composite[i, 1], composite[i, 2], composite[i, 3]
        nx, ny, nz = _inertia_times(composite, i, zx, zy, zz)
        cx, cy, cz = _cross(hx, hy, hz, ex, ey, ez)
        nx += cx
        ny += cy
        nz += cz
        cx, cy, cz = _cross(zx, zy, zz, hx, hy, hz)
        fx, fy, fz = m * ex + cx, m * ey + cy, m * ez + cz
        out[k, i, i] = zx * nx + zy * ny + zz * nz + ex * fx + ey * fy + ez * fz
        for j in range(i - 1, -1, -1):
            fx, fy, fz = _r(rot, j + 1, fx, fy, fz)
            nx, ny, nz = _r(rot, j + 1, nx, ny, nz)
            cx, cy, cz = _cross(pos[j + 1, 0], pos[j + 1, 1], pos[j + 1, 2], fx, fy, fz)
            nx += cx
            ny += cy
            nz += cz
            value = (zeta[j, 0] * nx + zeta[j, 1] * ny + zeta[j, 2] * nz
                     + eta[j, 0] * fx + eta[j, 1] * fy + eta[j, 2] * fz)
            out[k, j, i] = value
            out[k, i, j] = value


@njit(parallel=True, cache=True)
def mass_matrix(rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, pi, q, out):
    """Joint-space inertia ``out[k][i, c] = sum_j S_i^(j)T I_j S_c^(j)`` over links j >= i, c."""
    n_samples, n = q.shape
    for chunk in prange((n_samples + CHUNK - 1) // CHUNK):
        rot, pos, composite = np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((n, 10))
        for k in range(chunk * CHUNK, min(n_samples, (chunk + 1) * CHUNK)):
            _poses(rev, k0, kc, ks, p0, pc, ps, pl, q, k, rot, pos)
            _mass_matrix_given_poses(zeta, eta, pi, k, rot, pos, composite, out)


@njit(cache=True)
def mass_matrix_serial(rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, pi, q, out):
    """``mass_matrix`` on the calling thread alone."""
    n_samples, n = q.shape
    rot, pos, composite = np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((n, 10))
    for k in range(n_samples):
        _poses(rev, k0, kc, ks, p0, pc, ps, pl, q, k, rot, pos)
        _mass_matrix_given_poses(zeta, eta, pi, k, rot, pos, composite, out)
