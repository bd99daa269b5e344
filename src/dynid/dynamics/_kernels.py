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
from numba import prange

from dynid._jit import kernel
from dynid.robot.inertia import PARAMETER_NAMES

# The kernels index the 10-vector by position for speed: they are written for this order.
if PARAMETER_NAMES != ("m", "mx", "my", "mz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz"):
    raise ImportError("dynid.dynamics._kernels is written for another parameter layout")

CHUNK = 256


@kernel
def _pose(rev, k0, kc, ks, p0, pc, ps, pl, i, qi, c, s, rot, pos):
    """Pose of link i in link i-1 (``x_parent = rot x + pos``), into ``rot[i]``, ``pos[i]``;
    ``c``, ``s``: ``cos(qi)``, ``sin(qi)`` of a revolute joint (not read for a prismatic one)."""
    if rev[i] != 0.0:
        lin = 0.0
    else:
        c = 0.0
        s = 0.0
        lin = qi
    for r in range(3):
        for col in range(3):
            rot[i, r, col] = k0[i, r, col] + c * kc[i, r, col] + s * ks[i, r, col]
        pos[i, r] = p0[i, r] + c * pc[i, r] + s * ps[i, r] + lin * pl[i, r]


@kernel
def _rt(rot, i, x, y, z):
    """``rot[i]^T (x, y, z)``: parent coordinates -> child coordinates."""
    return (
        rot[i, 0, 0] * x + rot[i, 1, 0] * y + rot[i, 2, 0] * z,
        rot[i, 0, 1] * x + rot[i, 1, 1] * y + rot[i, 2, 1] * z,
        rot[i, 0, 2] * x + rot[i, 1, 2] * y + rot[i, 2, 2] * z,
    )


@kernel
def _r(rot, i, x, y, z):
    """``rot[i] (x, y, z)``: child coordinates -> parent coordinates."""
    return (
        rot[i, 0, 0] * x + rot[i, 0, 1] * y + rot[i, 0, 2] * z,
        rot[i, 1, 0] * x + rot[i, 1, 1] * y + rot[i, 1, 2] * z,
        rot[i, 2, 0] * x + rot[i, 2, 1] * y + rot[i, 2, 2] * z,
    )


@kernel
def _cross(ax, ay, az, bx, by, bz):
    return ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx


@kernel
def _poses(rev, k0, kc, ks, p0, pc, ps, pl, q, k, rot, pos):
    """Every link's pose in its parent at sample k, into ``rot``, ``pos``."""
    for i in range(q.shape[1]):
        qi = q[k, i]
        c = s = 0.0
        if rev[i] != 0.0:
            c, s = np.cos(qi), np.sin(qi)
        _pose(rev, k0, kc, ks, p0, pc, ps, pl, i, qi, c, s, rot, pos)


@kernel
def _poses_given_angles(rev, k0, kc, ks, p0, pc, ps, pl, q, cosines, sines, rot, pos):
    """``_poses`` of the positions ``q`` (n,) whose revolute joints' cosines and sines are
    known already."""
    for i in range(q.shape[0]):
        _pose(rev, k0, kc, ks, p0, pc, ps, pl, i, q[i], cosines[i], sines[i], rot, pos)


@kernel
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


@kernel
def _inertia_times6(ixx, ixy, ixz, iyy, iyz, izz, x, y, z):
    """``I (x, y, z)`` for the symmetric I with entries (xx, xy, xz, yy, yz, zz)."""
    return (
        ixx * x + ixy * y + ixz * z,
        ixy * x + iyy * y + iyz * z,
        ixz * x + iyz * y + izz * z,
    )


@kernel
def _inertia_times(pi, i, x, y, z):
    """``I_i (x, y, z)`` with I_i about the link origin, entries pi[i, 4:10]."""
    return _inertia_times6(pi[i, 4], pi[i, 5], pi[i, 6], pi[i, 7], pi[i, 8], pi[i, 9], x, y, z)


@kernel
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


@kernel
def _joint_torques(zeta, eta, k, rot, pos, force, moment, tau):
    """``tau[k]``: the link forces and moments summed from the tip down, projected on each
    joint's motion subspace (the sum carried in registers: no store feeds the next link)."""
    n = zeta.shape[0]
    fx = fy = fz = nx = ny = nz = 0.0  # links i+1.. on link i, in link i coordinates
    for i in range(n - 1, -1, -1):
        fx += force[i, 0]
        fy += force[i, 1]
        fz += force[i, 2]
        nx += moment[i, 0]
        ny += moment[i, 1]
        nz += moment[i, 2]
        tau[k, i] = (zeta[i, 0] * nx + zeta[i, 1] * ny + zeta[i, 2] * nz
                     + eta[i, 0] * fx + eta[i, 1] * fy + eta[i, 2] * fz)
        # into link i-1 coordinates (at i = 0, the base's: unused, but no branch in the loop)
        fx, fy, fz = _r(rot, i, fx, fy, fz)
        nx, ny, nz = _r(rot, i, nx, ny, nz)
        cx, cy, cz = _cross(pos[i, 0], pos[i, 1], pos[i, 2], fx, fy, fz)
        nx += cx
        ny += cy
        nz += cz


@kernel(parallel=True)
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


@kernel
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


@kernel
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


@kernel(parallel=True)
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


@kernel
def regressor_serial(rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, q, qd, qdd, gravity, out):
    """``regressor`` on the calling thread alone."""
    n_samples, n = q.shape
    rot, pos, state = np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((n, 9))
    axis_w, axis_v = np.empty((n, 3)), np.empty((n, 3))
    for k in range(n_samples):
        _poses(rev, k0, kc, ks, p0, pc, ps, pl, q, k, rot, pos)
        _motion(zeta, eta, qd, qdd, gravity, k, rot, pos, state)
        _regressor_columns(zeta, eta, k, rot, pos, state, axis_w, axis_v, out)


@kernel
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


@kernel
def _mass_matrix_given_poses(zeta, eta, pi, k, rot, pos, out):
    """``M`` of sample k into ``out[k]``, rigid bodies only, given its poses (``_poses``).

    The composite-rigid-body algorithm in one pass from the tip down, the composite of links
    i..n-1 held in registers (``m``, ``h``, ``I`` in link-i coordinates, about its origin):
    column i is the momentum of composite i moving along joint i's motion subspace,
    ``(f, n) = (m eta + zeta x h, I zeta + h x eta)``, carried down the chain as the RNEA
    carries forces, ``M[j, i] = zeta_j . n + eta_j . f``; then composite i moves into link
    i-1 coordinates (``x_parent = R x + p``, ``b = R h``) and link i-1 joins it:
    ``I' = R I R^T + m (p.p E - p p^T) + 2 (p.b) E - p b^T - b p^T``, ``h' = b + m p``.
    """
    n = zeta.shape[0]
    m, hx, hy, hz = pi[n - 1, 0], pi[n - 1, 1], pi[n - 1, 2], pi[n - 1, 3]
    ixx, ixy, ixz = pi[n - 1, 4], pi[n - 1, 5], pi[n - 1, 6]
    iyy, iyz, izz = pi[n - 1, 7], pi[n - 1, 8], pi[n - 1, 9]
    for i in range(n - 1, -1, -1):
        zx, zy, zz = zeta[i, 0], zeta[i, 1], zeta[i, 2]
        ex, ey, ez = eta[i, 0], eta[i, 1], eta[i, 2]
        nx, ny, nz = _inertia_times6(ixx, ixy, ixz, iyy, iyz, izz, zx, zy, zz)
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
        if i > 0:
            bx, by, bz = _r(rot, i, hx, hy, hz)
            px, py, pz = pos[i, 0], pos[i, 1], pos[i, 2]
            sxx, sxy, sxz, syy, syz, szz = _rotated_inertia(rot, i, ixx, ixy, ixz, iyy, iyz, izz)
            pp = px * px + py * py + pz * pz
            pb2 = 2.0 * (px * bx + py * by + pz * bz)
            ixx = pi[i - 1, 4] + sxx + m * (pp - px * px) + pb2 - 2.0 * px * bx
            ixy = pi[i - 1, 5] + sxy - m * px * py - (px * by + bx * py)
            ixz = pi[i - 1, 6] + sxz - m * px * pz - (px * bz + bx * pz)
            iyy = pi[i - 1, 7] + syy + m * (pp - py * py) + pb2 - 2.0 * py * by
            iyz = pi[i - 1, 8] + syz - m * py * pz - (py * bz + by * pz)
            izz = pi[i - 1, 9] + szz + m * (pp - pz * pz) + pb2 - 2.0 * pz * bz
            hx = pi[i - 1, 1] + bx + m * px
            hy = pi[i - 1, 2] + by + m * py
            hz = pi[i - 1, 3] + bz + m * pz
            m = pi[i - 1, 0] + m


@kernel(parallel=True)
def mass_matrix(rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, pi, q, out):
    """Joint-space inertia ``out[k][i, c] = sum_j S_i^(j)T I_j S_c^(j)`` over links j >= i, c."""
    n_samples, n = q.shape
    for chunk in prange((n_samples + CHUNK - 1) // CHUNK):
        rot, pos = np.empty((n, 3, 3)), np.empty((n, 3))
        for k in range(chunk * CHUNK, min(n_samples, (chunk + 1) * CHUNK)):
            _poses(rev, k0, kc, ks, p0, pc, ps, pl, q, k, rot, pos)
            _mass_matrix_given_poses(zeta, eta, pi, k, rot, pos, out)


@kernel
def mass_matrix_serial(rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, pi, q, out):
    """``mass_matrix`` on the calling thread alone."""
    n_samples, n = q.shape
    rot, pos = np.empty((n, 3, 3)), np.empty((n, 3))
    for k in range(n_samples):
        _poses(rev, k0, kc, ks, p0, pc, ps, pl, q, k, rot, pos)
        _mass_matrix_given_poses(zeta, eta, pi, k, rot, pos, out)


@kernel
def _rotated_general(rot, j, b00, b01, b02, b10, b11, b12, b20, b21, b22):
    """``rot[j] B rot[j]^T`` for a general 3 x 3 B (row-major entries, returned likewise)."""
    # t = B R^T: t[a, c] = B[a, :] . R[c, :]
    t00 = b00 * rot[j, 0, 0] + b01 * rot[j, 0, 1] + b02 * rot[j, 0, 2]
    t01 = b00 * rot[j, 1, 0] + b01 * rot[j, 1, 1] + b02 * rot[j, 1, 2]
    t02 = b00 * rot[j, 2, 0] + b01 * rot[j, 2, 1] + b02 * rot[j, 2, 2]
    t10 = b10 * rot[j, 0, 0] + b11 * rot[j, 0, 1] + b12 * rot[j, 0, 2]
    t11 = b10 * rot[j, 1, 0] + b11 * rot[j, 1, 1] + b12 * rot[j, 1, 2]
    t12 = b10 * rot[j, 2, 0] + b11 * rot[j, 2, 1] + b12 * rot[j, 2, 2]
    t20 = b20 * rot[j, 0, 0] + b21 * rot[j, 0, 1] + b22 * rot[j, 0, 2]
    t21 = b20 * rot[j, 1, 0] + b21 * rot[j, 1, 1] + b22 * rot[j, 1, 2]
    t22 = b20 * rot[j, 2, 0] + b21 * rot[j, 2, 1] + b22 * rot[j, 2, 2]
    # R t: entry (a, c) = R[a, :] . t[:, c]
    x0, x1, x2 = _r(rot, j, t00, t10, t20)
    y0, y1, y2 = _r(rot, j, t01, t11, t21)
    z0, z1, z2 = _r(rot, j, t02, t12, t22)
    return x0, y0, z0, x1, y1, z1, x2, y2, z2


@kernel
def _articulated_body(zeta, eta, pi, rotor, gravity, rot, pos, qd, tau, k, ddq, motion, art,
                      force, gain):
    """Forward dynamics of sample k by the articulated-body algorithm, given its poses
    (``_poses``): ``ddq[k] = (M + diag(rotor))^-1 (tau[k] - c - g)``. False where a pivot
    ``D_i`` is not positive (then ``M + diag(rotor)`` is not positive definite).

    Spatial vectors in link coordinates about the link origin: motion ``(w, v)``, force
    ``(n, f)``. A link's spatial inertia is ``[[I, [h]], [[h]^T, m E]]``; an articulated
    inertia ``[[A, B], [B^T, C]]`` is kept as 21 numbers per link in ``art``: A and C
    (symmetric: xx, xy, xz, yy, yz, zz) around B (row-major). Workspace: ``motion`` (n, 12):
    velocity and velocity-product acceleration ``c``; ``force`` (n, 6): bias force;
    ``gain`` (n, 8): ``U = IA S``, ``1 / D`` and ``u = tau - S^T pA``. Carried to the parent
    (``x_parent = R x + p``): motion ``w' = R^T w``, ``v' = R^T (v + w x p)``; force
    ``f' = R f``, ``n' = R n + p x f'``; inertia ``X^T IA X``: rotated ``A, B, C -> R A R^T,
    R B R^T, R C R^T``, then shifted ``A - (B P + (B P)^T) - P C P``, ``B + P C``, ``C``
    with ``P = [p]``.
    """
    n = zeta.shape[0]
    wx = wy = wz = 0.0
    vx = vy = vz = 0.0
    for i in range(n):  # velocities, velocity-product accelerations, bias forces
        px, py, pz = pos[i, 0], pos[i, 1], pos[i, 2]
        ux, uy, uz = _cross(wx, wy, wz, px, py, pz)
        vx, vy, vz = _rt(rot, i, vx + ux, vy + uy, vz + uz)
        wx, wy, wz = _rt(rot, i, wx, wy, wz)
        rate = qd[k, i]
        sx, sy, sz = zeta[i, 0] * rate, zeta[i, 1] * rate, zeta[i, 2] * rate
        ex, ey, ez = eta[i, 0] * rate, eta[i, 1] * rate, eta[i, 2] * rate
        wx += sx
        wy += sy
        wz += sz
        vx += ex
        vy += ey
        vz += ez
        motion[i, 0], motion[i, 1], motion[i, 2] = wx, wy, wz
        motion[i, 3], motion[i, 4], motion[i, 5] = vx, vy, vz
        cx, cy, cz = _cross(wx, wy, wz, sx, sy, sz)
        motion[i, 6], motion[i, 7], motion[i, 8] = cx, cy, cz
        c1x, c1y, c1z = _cross(wx, wy, wz, ex, ey, ez)
        c2x, c2y, c2z = _cross(vx, vy, vz, sx, sy, sz)
        motion[i, 9], motion[i, 10], motion[i, 11] = c1x + c2x, c1y + c2y, c1z + c2z
        m, hx, hy, hz = pi[i, 0], pi[i, 1], pi[i, 2], pi[i, 3]
        for c in range(6):
            art[i, c] = pi[i, 4 + c]
        art[i, 6], art[i, 7], art[i, 8] = 0.0, -hz, hy
        art[i, 9], art[i, 10], art[i, 11] = hz, 0.0, -hx
        art[i, 12], art[i, 13], art[i, 14] = -hy, hx, 0.0
        art[i, 15], art[i, 16], art[i, 17] = m, 0.0, 0.0
        art[i, 18], art[i, 19], art[i, 20] = m, 0.0, m
        # momentum (I w + h x v, m v - h x w); bias v x* momentum = (w x n + v x f, w x f)
        iwx, iwy, iwz = _inertia_times(pi, i, wx, wy, wz)
        tx, ty, tz = _cross(hx, hy, hz, vx, vy, vz)
        nx, ny, nz = iwx + tx, iwy + ty, iwz + tz
        tx, ty, tz = _cross(hx, hy, hz, wx, wy, wz)
        fx, fy, fz = m * vx - tx, m * vy - ty, m * vz - tz
        t1x, t1y, t1z = _cross(wx, wy, wz, nx, ny, nz)
        t2x, t2y, t2z = _cross(vx, vy, vz, fx, fy, fz)
        force[i, 0], force[i, 1], force[i, 2] = t1x + t2x, t1y + t2y, t1z + t2z
        tx, ty, tz = _cross(wx, wy, wz, fx, fy, fz)
        force[i, 3], force[i, 4], force[i, 5] = tx, ty, tz
    definite = True
    for i in range(n - 1, -1, -1):  # articulated inertias and bias forces, tip to base
        zx, zy, zz = zeta[i, 0], zeta[i, 1], zeta[i, 2]
        ex, ey, ez = eta[i, 0], eta[i, 1], eta[i, 2]
        # U = IA S: (A zeta + B eta, B^T zeta + C eta)
        ax_, ay_, az_ = _inertia_times6(art[i, 0], art[i, 1], art[i, 2], art[i, 3], art[i, 4],
                                        art[i, 5], zx, zy, zz)
        un0 = ax_ + art[i, 6] * ex + art[i, 7] * ey + art[i, 8] * ez
        un1 = ay_ + art[i, 9] * ex + art[i, 10] * ey + art[i, 11] * ez
        un2 = az_ + art[i, 12] * ex + art[i, 13] * ey + art[i, 14] * ez
        cx_, cy_, cz_ = _inertia_times6(art[i, 15], art[i, 16], art[i, 17], art[i, 18],
                                        art[i, 19], art[i, 20], ex, ey, ez)
        uf0 = cx_ + art[i, 6] * zx + art[i, 9] * zy + art[i, 12] * zz
        uf1 = cy_ + art[i, 7] * zx + art[i, 10] * zy + art[i, 13] * zz
        uf2 = cz_ + art[i, 8] * zx + art[i, 11] * zy + art[i, 14] * zz
        d = zx * un0 + zy * un1 + zz * un2 + ex * uf0 + ey * uf1 + ez * uf2 + rotor[i]
        definite = definite and d > 0.0  # NaN fails too
        inverse = 1.0 / d if d > 0.0 else np.nan
        u = tau[k, i] - (zx * force[i, 0] + zy * force[i, 1] + zz * force[i, 2]
                         + ex * force[i, 3] + ey * force[i, 4] + ez * force[i, 5])
        gain[i, 0], gain[i, 1], gain[i, 2] = un0, un1, un2
        gain[i, 3], gain[i, 4], gain[i, 5] = uf0, uf1, uf2
        gain[i, 6], gain[i, 7] = inverse, u
        if i == 0:
            break
        # Ia = IA - U U^T / D, in place
        g0, g1, g2 = un0 * inverse, un1 * inverse, un2 * inverse
        art[i, 0] -= g0 * un0
        art[i, 1] -= g0 * un1
        art[i, 2] -= g0 * un2
        art[i, 3] -= g1 * un1
        art[i, 4] -= g1 * un2
        art[i, 5] -= g2 * un2
        art[i, 6] -= g0 * uf0
        art[i, 7] -= g0 * uf1
        art[i, 8] -= g0 * uf2
        art[i, 9] -= g1 * uf0
        art[i, 10] -= g1 * uf1
        art[i, 11] -= g1 * uf2
        art[i, 12] -= g2 * uf0
        art[i, 13] -= g2 * uf1
        art[i, 14] -= g2 * uf2
        h0, h1, h2 = uf0 * inverse, uf1 * inverse, uf2 * inverse
        art[i, 15] -= h0 * uf0
        art[i, 16] -= h0 * uf1
        art[i, 17] -= h0 * uf2
        art[i, 18] -= h1 * uf1
        art[i, 19] -= h1 * uf2
        art[i, 20] -= h2 * uf2
        # pa = pA + Ia c + U u / D
        cwx, cwy, cwz = motion[i, 6], motion[i, 7], motion[i, 8]
        cvx, cvy, cvz = motion[i, 9], motion[i, 10], motion[i, 11]
        ax_, ay_, az_ = _inertia_times6(art[i, 0], art[i, 1], art[i, 2], art[i, 3], art[i, 4],
                                        art[i, 5], cwx, cwy, cwz)
        cx_, cy_, cz_ = _inertia_times6(art[i, 15], art[i, 16], art[i, 17], art[i, 18],
                                        art[i, 19], art[i, 20], cvx, cvy, cvz)
        scale = u * inverse
        pn0 = force[i, 0] + ax_ + art[i, 6] * cvx + art[i, 7] * cvy + art[i, 8] * cvz
        pn1 = force[i, 1] + ay_ + art[i, 9] * cvx + art[i, 10] * cvy + art[i, 11] * cvz
        pn2 = force[i, 2] + az_ + art[i, 12] * cvx + art[i, 13] * cvy + art[i, 14] * cvz
        pf0 = force[i, 3] + cx_ + art[i, 6] * cwx + art[i, 9] * cwy + art[i, 12] * cwz
        pf1 = force[i, 4] + cy_ + art[i, 7] * cwx + art[i, 10] * cwy + art[i, 13] * cwz
        pf2 = force[i, 5] + cz_ + art[i, 8] * cwx + art[i, 11] * cwy + art[i, 14] * cwz
        pn0, pn1, pn2 = pn0 + un0 * scale, pn1 + un1 * scale, pn2 + un2 * scale
        pf0, pf1, pf2 = pf0 + uf0 * scale, pf1 + uf1 * scale, pf2 + uf2 * scale
        # carried to the parent
        px, py, pz = pos[i, 0], pos[i, 1], pos[i, 2]
        fx, fy, fz = _r(rot, i, pf0, pf1, pf2)
        nx, ny, nz = _r(rot, i, pn0, pn1, pn2)
        tx, ty, tz = _cross(px, py, pz, fx, fy, fz)
        force[i - 1, 0] += nx + tx
        force[i - 1, 1] += ny + ty
        force[i - 1, 2] += nz + tz
        force[i - 1, 3] += fx
        force[i - 1, 4] += fy
        force[i - 1, 5] += fz
        a00, a01, a02, a11, a12, a22 = _rotated_inertia(
            rot, i, art[i, 0], art[i, 1], art[i, 2], art[i, 3], art[i, 4], art[i, 5])
        c00, c01, c02, c11, c12, c22 = _rotated_inertia(
            rot, i, art[i, 15], art[i, 16], art[i, 17], art[i, 18], art[i, 19], art[i, 20])
        b00, b01, b02, b10, b11, b12, b20, b21, b22 = _rotated_general(
            rot, i, art[i, 6], art[i, 7], art[i, 8], art[i, 9], art[i, 10], art[i, 11],
            art[i, 12], art[i, 13], art[i, 14])
        # Q = P C (column c: p x C[:, c]); B + Q
        q00, q10, q20 = _cross(px, py, pz, c00, c01, c02)
        q01, q11, q21 = _cross(px, py, pz, c01, c11, c12)
        q02, q12, q22 = _cross(px, py, pz, c02, c12, c22)
        # (B P)[a, :] = -(p x B[a, :]) and (Q P)[a, :] = -(p x Q[a, :])
        s00, s01, s02 = _cross(px, py, pz, b00, b01, b02)
        s10, s11, s12 = _cross(px, py, pz, b10, b11, b12)
        s20, s21, s22 = _cross(px, py, pz, b20, b21, b22)
        r00, r01, r02 = _cross(px, py, pz, q00, q01, q02)
        _, r11, r12 = _cross(px, py, pz, q10, q11, q12)
        _, _, r22 = _cross(px, py, pz, q20, q21, q22)
        # A - (B P + (B P)^T) - Q P = A + (s + s^T) + r
        j = i - 1
        art[j, 0] += a00 + 2.0 * s00 + r00
        art[j, 1] += a01 + s01 + s10 + r01
        art[j, 2] += a02 + s02 + s20 + r02
        art[j, 3] += a11 + 2.0 * s11 + r11
        art[j, 4] += a12 + s12 + s21 + r12
        art[j, 5] += a22 + 2.0 * s22 + r22
        art[j, 6] += b00 + q00
        art[j, 7] += b01 + q01
        art[j, 8] += b02 + q02
        art[j, 9] += b10 + q10
        art[j, 10] += b11 + q11
        art[j, 11] += b12 + q12
        art[j, 12] += b20 + q20
        art[j, 13] += b21 + q21
        art[j, 14] += b22 + q22
        art[j, 15] += c00
        art[j, 16] += c01
        art[j, 17] += c02
        art[j, 18] += c11
        art[j, 19] += c12
        art[j, 20] += c22
    wx = wy = wz = 0.0  # accelerations, base to tip; gravity as a base acceleration -g
    ax, ay, az = -gravity[0], -gravity[1], -gravity[2]
    for i in range(n):
        px, py, pz = pos[i, 0], pos[i, 1], pos[i, 2]
        ux, uy, uz = _cross(wx, wy, wz, px, py, pz)
        ax, ay, az = _rt(rot, i, ax + ux, ay + uy, az + uz)
        wx, wy, wz = _rt(rot, i, wx, wy, wz)
        wx += motion[i, 6]
        wy += motion[i, 7]
        wz += motion[i, 8]
        ax += motion[i, 9]
        ay += motion[i, 10]
        az += motion[i, 11]
        acc = (gain[i, 7] - (gain[i, 0] * wx + gain[i, 1] * wy + gain[i, 2] * wz
                             + gain[i, 3] * ax + gain[i, 4] * ay + gain[i, 5] * az)) * gain[i, 6]
        ddq[k, i] = acc
        wx += zeta[i, 0] * acc
        wy += zeta[i, 1] * acc
        wz += zeta[i, 2] * acc
        ax += eta[i, 0] * acc
        ay += eta[i, 1] * acc
        az += eta[i, 2] * acc
    return definite


@kernel(parallel=True)
def forward_dynamics(rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, pi, rotor, q, qd, tau, gravity,
                     ddq):
    """Forward dynamics ``ddq[k]`` of every sample k (``_articulated_body``); False where some
    sample's ``M + diag(rotor)`` is not positive definite."""
    n_samples, n = q.shape
    n_chunks = (n_samples + CHUNK - 1) // CHUNK
    definite = np.ones(n_chunks, dtype=np.bool_)
    for chunk in prange(n_chunks):
        rot, pos, motion = np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((n, 12))
        art, force, gain = np.empty((n, 21)), np.empty((n, 6)), np.empty((n, 8))
        for k in range(chunk * CHUNK, min(n_samples, (chunk + 1) * CHUNK)):
            _poses(rev, k0, kc, ks, p0, pc, ps, pl, q, k, rot, pos)
            if not _articulated_body(zeta, eta, pi, rotor, gravity, rot, pos, qd, tau, k, ddq,
                                     motion, art, force, gain):
                definite[chunk] = False
    return definite.all()


@kernel
def forward_dynamics_serial(rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, pi, rotor, q, qd, tau,
                            gravity, ddq):
    """``forward_dynamics`` on the calling thread alone."""
    n_samples, n = q.shape
    rot, pos, motion = np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((n, 12))
    art, force, gain = np.empty((n, 21)), np.empty((n, 6)), np.empty((n, 8))
    definite = True
    for k in range(n_samples):
        _poses(rev, k0, kc, ks, p0, pc, ps, pl, q, k, rot, pos)
        definite &= _articulated_body(zeta, eta, pi, rotor, gravity, rot, pos, qd, tau, k, ddq,
                                      motion, art, force, gain)
    return definite

@kernel
def _motion_cross(ax, ay, az, bx, by, bz, cx, cy, cz, dx, dy, dz):
    """Spatial motion cross product ``(a, b) x (c, d) = (a x c, a x d + b x c)``."""
    wx, wy, wz = _cross(ax, ay, az, cx, cy, cz)
    ux, uy, uz = _cross(ax, ay, az, dx, dy, dz)
    vx, vy, vz = _cross(bx, by, bz, cx, cy, cz)
    return wx, wy, wz, ux + vx, uy + vy, uz + vz


@kernel
def _transport(rot, j, px, py, pz, vec, i):
    """Spatial motion vector ``vec[i] = (w, v)`` from link j-1 into link j coordinates, in place:
    ``w' = R^T w``, ``v' = R^T (v + w x p)``."""
    wx, wy, wz = vec[i, 0], vec[i, 1], vec[i, 2]
    cx, cy, cz = _cross(wx, wy, wz, px, py, pz)
    vx, vy, vz = _rt(rot, j, vec[i, 3] + cx, vec[i, 4] + cy, vec[i, 5] + cz)
    wx, wy, wz = _rt(rot, j, wx, wy, wz)
    vec[i, 0], vec[i, 1], vec[i, 2] = wx, wy, wz
    vec[i, 3], vec[i, 4], vec[i, 5] = vx, vy, vz


@kernel
def _regressor_vjp_sample(zeta, eta, qd, qdd, gravity, weight, k, rot, pos, axes, vel, acc,
                          wrench, value, g_q, g_dq, g_ddq):
    """``value[k] = <weight[k], Y_k>`` and its gradient in q, dq, ddq (``g_*[k]``), given the
    poses of sample k (``_poses``); one pass up the chain, O(n^2) like the regressor.

    Spatial algebra in the coordinates of link j (all vectors transported up with it): axes
    ``S_i`` (i <= j), link velocities ``V_i`` and accelerations ``A_i`` (``vel[i + 1]``,
    ``acc[i + 1]``; index 0 the base: ``V = 0``, ``A = (0, -g)``). With ``x`` the motion cross
    product, the derivatives of link j's motion and joint i's axis seen from link j are, for
    k <= j (Featherstone's ``dX/dq_k = S_k x X``):

        dV_j/ddq_k = S_k,   dA_j/dddq_k = S_k,   dA_j/ddq_k = S_k x (V_j - 2 V_{k-1})
        dV_j/dq_k = V_{k-1} x S_k
        dA_j/dq_k = A_{k-1} x S_k + (V_{k-1} x S_k) x (V_j - V_{k-1})
        dS_i/dq_k = S_i x S_k   (i < k; zero for i >= k)

    Entry ``Y[i, j] . p = S_i . F_j(p)`` (the wrench link j needs with parameters p, about its
    origin): its gradient in link j's (w, dw, ac) is analytic, chained to (V_j, A_j) through
    ``ac = a + w x v``; the axes' term uses ``F . (S_i x S_k) = -(S_i x* F) . S_k``.
    """
    n = zeta.shape[0]
    for c in range(6):
        vel[0, c] = 0.0
        acc[0, c] = 0.0
    acc[0, 3], acc[0, 4], acc[0, 5] = -gravity[0], -gravity[1], -gravity[2]
    total = 0.0
    for c in range(n):
        g_q[k, c] = 0.0
        g_dq[k, c] = 0.0
        g_ddq[k, c] = 0.0
    for j in range(n):
        px, py, pz = pos[j, 0], pos[j, 1], pos[j, 2]
        for i in range(j):
            _transport(rot, j, px, py, pz, axes, i)
        for i in range(j + 1):
            _transport(rot, j, px, py, pz, vel, i)
            _transport(rot, j, px, py, pz, acc, i)
        zx, zy, zz = zeta[j, 0], zeta[j, 1], zeta[j, 2]
        ex, ey, ez = eta[j, 0], eta[j, 1], eta[j, 2]
        axes[j, 0], axes[j, 1], axes[j, 2] = zx, zy, zz
        axes[j, 3], axes[j, 4], axes[j, 5] = ex, ey, ez
        rate, accel = qd[k, j], qdd[k, j]
        wx, wy, wz = vel[j, 0] + zx * rate, vel[j, 1] + zy * rate, vel[j, 2] + zz * rate
        vx, vy, vz = vel[j, 3] + ex * rate, vel[j, 4] + ey * rate, vel[j, 5] + ez * rate
        c0, c1, c2, c3, c4, c5 = _motion_cross(wx, wy, wz, vx, vy, vz, zx, zy, zz, ex, ey, ez)
        dwx = acc[j, 0] + zx * accel + c0 * rate
        dwy = acc[j, 1] + zy * accel + c1 * rate
        dwz = acc[j, 2] + zz * accel + c2 * rate
        lax = acc[j, 3] + ex * accel + c3 * rate
        lay = acc[j, 4] + ey * accel + c4 * rate
        laz = acc[j, 5] + ez * accel + c5 * rate
        vel[j + 1, 0], vel[j + 1, 1], vel[j + 1, 2] = wx, wy, wz
        vel[j + 1, 3], vel[j + 1, 4], vel[j + 1, 5] = vx, vy, vz
        acc[j + 1, 0], acc[j + 1, 1], acc[j + 1, 2] = dwx, dwy, dwz
        acc[j + 1, 3], acc[j + 1, 4], acc[j + 1, 5] = lax, lay, laz
        cx, cy, cz = _cross(wx, wy, wz, vx, vy, vz)
        acx, acy, acz = lax + cx, lay + cy, laz + cz
        # gradient of sum_i S_i . F_j(weight[i, j]) in (w, dw, ac), and every wrench
        gwx = gwy = gwz = 0.0
        gdx = gdy = gdz = 0.0
        gax = gay = gaz = 0.0
        col = 10 * j
        for i in range(j + 1):
            sx, sy, sz = axes[i, 0], axes[i, 1], axes[i, 2]
            tx, ty, tz = axes[i, 3], axes[i, 4], axes[i, 5]
            m = weight[k, i, col]
            hx, hy, hz = weight[k, i, col + 1], weight[k, i, col + 2], weight[k, i, col + 3]
            ixx, ixy, ixz = weight[k, i, col + 4], weight[k, i, col + 5], weight[k, i, col + 6]
            iyy, iyz, izz = weight[k, i, col + 7], weight[k, i, col + 8], weight[k, i, col + 9]
            whx, why, whz = _cross(wx, wy, wz, hx, hy, hz)
            t1x, t1y, t1z = _cross(dwx, dwy, dwz, hx, hy, hz)
            t2x, t2y, t2z = _cross(wx, wy, wz, whx, why, whz)
            fx, fy, fz = m * acx + t1x + t2x, m * acy + t1y + t2y, m * acz + t1z + t2z
            iwx, iwy, iwz = _inertia_times6(ixx, ixy, ixz, iyy, iyz, izz, wx, wy, wz)
            idx, idy, idz = _inertia_times6(ixx, ixy, ixz, iyy, iyz, izz, dwx, dwy, dwz)
            t3x, t3y, t3z = _cross(wx, wy, wz, iwx, iwy, iwz)
            t4x, t4y, t4z = _cross(hx, hy, hz, acx, acy, acz)
            nx, ny, nz = idx + t3x + t4x, idy + t3y + t4y, idz + t3z + t4z
            total += sx * nx + sy * ny + sz * nz + tx * fx + ty * fy + tz * fz
            wrench[i, 0], wrench[i, 1], wrench[i, 2] = nx, ny, nz
            wrench[i, 3], wrench[i, 4], wrench[i, 5] = fx, fy, fz
            # d/dac: m eta + zeta x h;  d/ddw: h x eta + I zeta
            cx, cy, cz = _cross(sx, sy, sz, hx, hy, hz)
            gax += m * tx + cx
            gay += m * ty + cy
            gaz += m * tz + cz
            cx, cy, cz = _cross(hx, hy, hz, tx, ty, tz)
            isx, isy, isz = _inertia_times6(ixx, ixy, ixz, iyy, iyz, izz, sx, sy, sz)
            gdx += cx + isx
            gdy += cy + isy
            gdz += cz + isz
            # d/dw of eta . (w x (w x h)) + zeta . (w x I w):
            # eta (w.h) + h (eta.w) - 2 (eta.h) w + (I w) x zeta + I (zeta x w)
            wh = wx * hx + wy * hy + wz * hz
            ew = tx * wx + ty * wy + tz * wz
            eh = tx * hx + ty * hy + tz * hz
            cx, cy, cz = _cross(iwx, iwy, iwz, sx, sy, sz)
            ux, uy, uz = _cross(sx, sy, sz, wx, wy, wz)
            iux, iuy, iuz = _inertia_times6(ixx, ixy, ixz, iyy, iyz, izz, ux, uy, uz)
            gwx += tx * wh + hx * ew - 2.0 * eh * wx + cx + iux
            gwy += ty * wh + hy * ew - 2.0 * eh * wy + cy + iuy
            gwz += tz * wh + hz * ew - 2.0 * eh * wz + cz + iuz
        # ac = a + w x v: gradient on V_j = (w, v) and A_j = (dw, a)
        cx, cy, cz = _cross(vx, vy, vz, gax, gay, gaz)
        gv0, gv1, gv2 = gwx + cx, gwy + cy, gwz + cz
        gv3, gv4, gv5 = _cross(gax, gay, gaz, wx, wy, wz)
        # G = sum_{i<k} S_i x* F_i, with (w, v) x* (n, f) = (w x n + v x f, w x f)
        gn0 = gn1 = gn2 = gn3 = gn4 = gn5 = 0.0
        for kk in range(j + 1):
            sx, sy, sz = axes[kk, 0], axes[kk, 1], axes[kk, 2]
            tx, ty, tz = axes[kk, 3], axes[kk, 4], axes[kk, 5]
            pwx, pwy, pwz = vel[kk, 0], vel[kk, 1], vel[kk, 2]
            pvx, pvy, pvz = vel[kk, 3], vel[kk, 4], vel[kk, 5]
            g_ddq[k, kk] += gdx * sx + gdy * sy + gdz * sz + gax * tx + gay * ty + gaz * tz
            d0, d1, d2, d3, d4, d5 = _motion_cross(
                sx, sy, sz, tx, ty, tz, wx - 2.0 * pwx, wy - 2.0 * pwy, wz - 2.0 * pwz,
                vx - 2.0 * pvx, vy - 2.0 * pvy, vz - 2.0 * pvz)
            g_dq[k, kk] += (gv0 * sx + gv1 * sy + gv2 * sz + gv3 * tx + gv4 * ty + gv5 * tz
                            + gdx * d0 + gdy * d1 + gdz * d2 + gax * d3 + gay * d4 + gaz * d5)
            b0, b1, b2, b3, b4, b5 = _motion_cross(pwx, pwy, pwz, pvx, pvy, pvz,
                                                   sx, sy, sz, tx, ty, tz)
            a0, a1, a2, a3, a4, a5 = _motion_cross(acc[kk, 0], acc[kk, 1], acc[kk, 2],
                                                   acc[kk, 3], acc[kk, 4], acc[kk, 5],
                                                   sx, sy, sz, tx, ty, tz)
            e0, e1, e2, e3, e4, e5 = _motion_cross(b0, b1, b2, b3, b4, b5, wx - pwx,
                                                   wy - pwy, wz - pwz, vx - pvx, vy - pvy,
                                                   vz - pvz)
            g_q[k, kk] += (gv0 * b0 + gv1 * b1 + gv2 * b2 + gv3 * b3 + gv4 * b4 + gv5 * b5
                           + gdx * (a0 + e0) + gdy * (a1 + e1) + gdz * (a2 + e2)
                           + gax * (a3 + e3) + gay * (a4 + e4) + gaz * (a5 + e5)
                           - (gn0 * sx + gn1 * sy + gn2 * sz + gn3 * tx + gn4 * ty + gn5 * tz))
            nx, ny, nz = wrench[kk, 0], wrench[kk, 1], wrench[kk, 2]
            fx, fy, fz = wrench[kk, 3], wrench[kk, 4], wrench[kk, 5]
            c0, c1, c2 = _cross(sx, sy, sz, nx, ny, nz)
            c3, c4, c5 = _cross(tx, ty, tz, fx, fy, fz)
            gn0 += c0 + c3
            gn1 += c1 + c4
            gn2 += c2 + c5
            c0, c1, c2 = _cross(sx, sy, sz, fx, fy, fz)
            gn3 += c0
            gn4 += c1
            gn5 += c2
    value[k] = total


@kernel(parallel=True)
def regressor_vjp(rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, q, qd, qdd, gravity, weight,
                  value, g_q, g_dq, g_ddq):
    """``value[k] = <weight[k], Y_k>`` (weight (N, n, 10 n)) and its gradient in q, dq, ddq
    (each (N, n)), per sample (``_regressor_vjp_sample``)."""
    n_samples, n = q.shape
    for chunk in prange((n_samples + CHUNK - 1) // CHUNK):
        rot, pos, axes = np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((n, 6))
        vel, acc, wrench = np.empty((n + 1, 6)), np.empty((n + 1, 6)), np.empty((n, 6))
        for k in range(chunk * CHUNK, min(n_samples, (chunk + 1) * CHUNK)):
            _poses(rev, k0, kc, ks, p0, pc, ps, pl, q, k, rot, pos)
            _regressor_vjp_sample(zeta, eta, qd, qdd, gravity, weight, k, rot, pos, axes, vel,
                                  acc, wrench, value, g_q, g_dq, g_ddq)


@kernel
def regressor_vjp_serial(rev, k0, kc, ks, p0, pc, ps, pl, zeta, eta, q, qd, qdd, gravity,
                         weight, value, g_q, g_dq, g_ddq):
    """``regressor_vjp`` on the calling thread alone."""
    n_samples, n = q.shape
    rot, pos, axes = np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((n, 6))
    vel, acc, wrench = np.empty((n + 1, 6)), np.empty((n + 1, 6)), np.empty((n, 6))
    for k in range(n_samples):
        _poses(rev, k0, kc, ks, p0, pc, ps, pl, q, k, rot, pos)
        _regressor_vjp_sample(zeta, eta, qd, qdd, gravity, weight, k, rot, pos, axes, vel, acc,
                              wrench, value, g_q, g_dq, g_ddq)
