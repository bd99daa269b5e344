"""Compiled per-sample recursions, run in parallel over chunks of samples.

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
def _motion(rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, q, qd, qdd, gravity, k, rot, pos, state):
    """Forward pass for sample k: per link i, ``state[i] = (w, dw, ac)`` (9 numbers)."""
    n = q.shape[1]
    wx = wy = wz = 0.0
    vx = vy = vz = 0.0
    dwx = dwy = dwz = 0.0
    ax, ay, az = -gravity[0], -gravity[1], -gravity[2]
    for i in range(n):
        _pose(rev, k0, kc, ks, p0, pc, ps, pl, i, q[k, i], rot, pos)
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
def _inertia_times(pi, i, x, y, z):
    """``I_i (x, y, z)`` with I_i about the link origin, entries pi[i, 4:10]."""
    ixx, ixy, ixz, iyy, iyz, izz = pi[i, 4], pi[i, 5], pi[i, 6], pi[i, 7], pi[i, 8], pi[i, 9]
    return (
        ixx * x + ixy * y + ixz * z,
        ixy * x + iyy * y + iyz * z,
        ixz * x + iyz * y + izz * z,
    )


@njit(parallel=True, cache=True)
def rnea(rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, pi, q, qd, qdd, gravity, tau):
    """Inverse dynamics ``tau[k] = M ddq + c + g`` for every sample k (writes ``tau``)."""
    n_samples, n = q.shape
    for chunk in prange((n_samples + CHUNK - 1) // CHUNK):
        rot = np.empty((n, 3, 3))
        pos = np.empty((n, 3))
        state = np.empty((n, 9))
        force = np.empty((n, 3))
        moment = np.empty((n, 3))
        for k in range(chunk * CHUNK, min(n_samples, (chunk + 1) * CHUNK)):
            _motion(rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, q, qd, qdd, gravity, k,
                    rot, pos, state)
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


@njit(cache=True)
def _carry_axes(rot, pos, j, axis_w, axis_v):
    """Re-express the motion subspaces of joints 0..j-1 from link j-1 to link j coordinates."""
    px, py, pz = pos[j, 0], pos[j, 1], pos[j, 2]
    for i in range(j):
        zx, zy, zz = axis_w[i, 0], axis_w[i, 1], axis_w[i, 2]
        cx, cy, cz = _cross(zx, zy, zz, px, py, pz)
        ex, ey, ez = _rt(rot, j, axis_v[i, 0] + cx, axis_v[i, 1] + cy, axis_v[i, 2] + cz)
        zx, zy, zz = _rt(rot, j, zx, zy, zz)
        axis_w[i, 0], axis_w[i, 1], axis_w[i, 2] = zx, zy, zz
        axis_v[i, 0], axis_v[i, 1], axis_v[i, 2] = ex, ey, ez


@njit(parallel=True, cache=True)
def regressor(rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, q, qd, qdd, gravity, out):
    """Joint-torque regressor: ``out[k]`` (n, 10 n) with ``tau[k] = out[k] @ pi.ravel()``."""
    n_samples, n = q.shape
    for chunk in prange((n_samples + CHUNK - 1) // CHUNK):
        rot = np.empty((n, 3, 3))
        pos = np.empty((n, 3))
        state = np.empty((n, 9))
        axis_w = np.empty((n, 3))
        axis_v = np.empty((n, 3))
        for k in range(chunk * CHUNK, min(n_samples, (chunk + 1) * CHUNK)):
            _motion(rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, q, qd, qdd, gravity, k,
                    rot, pos, state)
            for j in range(n):
                _carry_axes(rot, pos, j, axis_w, axis_v)
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
def mass_matrix(rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, pi, q, out):
    """Joint-space inertia ``out[k][i, c] = sum_j S_i^(j)T I_j S_c^(j)`` over links j >= i, c."""
    n_samples, n = q.shape
    for chunk in prange((n_samples + CHUNK - 1) // CHUNK):
        rot = np.empty((n, 3, 3))
        pos = np.empty((n, 3))
        axis_w = np.empty((n, 3))
        axis_v = np.empty((n, 3))
        for k in range(chunk * CHUNK, min(n_samples, (chunk + 1) * CHUNK)):
            for i in range(n):
                for col in range(n):
                    out[k, i, col] = 0.0
            for j in range(n):
                _pose(rev, k0, kc, ks, p0, pc, ps, pl, j, q[k, j], rot, pos)
                _carry_axes(rot, pos, j, axis_w, axis_v)
                for c in range(3):
                    axis_w[j, c] = zeta[j, c]
                    axis_v[j, c] = eta[j, c]
                m, hx, hy, hz = pi[j, 0], pi[j, 1], pi[j, 2], pi[j, 3]
                for col in range(j + 1):
                    zx, zy, zz = axis_w[col, 0], axis_w[col, 1], axis_w[col, 2]
                    ex, ey, ez = axis_v[col, 0], axis_v[col, 1], axis_v[col, 2]
                    # momentum of link j moving along S_col:
                    # n = I zeta + h x eta, f = m eta + zeta x h
                    nx, ny, nz = _inertia_times(pi, j, zx, zy, zz)
                    cx, cy, cz = _cross(hx, hy, hz, ex, ey, ez)
                    nx += cx
                    ny += cy
                    nz += cz
                    cx, cy, cz = _cross(zx, zy, zz, hx, hy, hz)
                    fx, fy, fz = m * ex + cx, m * ey + cy, m * ez + cz
                    for i in range(col + 1):
                        out[k, i, col] += (
                            axis_w[i, 0] * nx + axis_w[i, 1] * ny + axis_w[i, 2] * nz
                            + axis_v[i, 0] * fx + axis_v[i, 1] * fy + axis_v[i, 2] * fz
                        )
            for i in range(n):
                for col in range(i + 1, n):
                    out[k, col, i] = out[k, i, col]
