"""The rigid-body algorithms written out over a model's numbers: RNEA, CRBA and the Coriolis
matrix, as straight-line code (``_expressions.Body``).

They mirror the compiled kernels of ``dynid.dynamics._kernels`` step by step (the same
recursions, the same link-frame quantities: see that module's notation), with the joint
kinematics of ``dynid.dynamics._chain.chain_arrays`` (``R = K0 + cos q Kc + sin q Ks``,
``p = p0 + cos q pc + sin q ps + q pl``, motion subspace ``(zeta, eta)``), so MDH, DH, URDF
and prismatic joints are one code path. Entries that are exactly zero drop out as the code is
built (an MDH rotation has five of nine; an equivalent parameter vector is zero off its
representatives), which is where the generated code gains on a loop over arrays.

The Coriolis matrix is Echeandia & Wensing's (2021, "Numerical methods to compute the Coriolis
matrix and Christoffel symbols for rigid-body systems", J. Comput. Nonlinear Dyn. 16(9)):
``C = sum_j J_j^T (I_j Jdot_j + B(I_j, V_j) J_j)`` over the links j, in link-j coordinates,
with ``B(I, v) = (v x* I - I v x + (I v) xbar) / 2`` (``(f xbar) m = m x* f``). Column i of
``Jdot_j`` is ``V_i x S_i`` (joint i's axis moves with link i), carried to link j. Then
``C dq = c(q, dq)`` and ``dM/dt - 2 C`` is skew-symmetric: C is the Christoffel-symbol matrix.
"""

from __future__ import annotations

import numpy as np

from dynid.codegen._expressions import Body, Value
from dynid.dynamics._chain import ChainArrays

__all__ = ["coriolis_matrix", "mass_matrix", "poses", "rnea"]

Vec = tuple[Value, Value, Value]
Rot = tuple[Vec, Vec, Vec]  # rows
Pose = tuple[Rot, Vec]
ZERO: Vec = (0.0, 0.0, 0.0)


def _floats(values) -> tuple[float, ...]:
    return tuple(float(v) for v in np.asarray(values, dtype=float).ravel())


def cross(body: Body, a: Vec, b: Vec) -> Vec:
    return (body.sum((a[1], b[2]), (-1.0, a[2], b[1])),
            body.sum((a[2], b[0]), (-1.0, a[0], b[2])),
            body.sum((a[0], b[1]), (-1.0, a[1], b[0])))


def add(body: Body, *vectors: Vec) -> Vec:
    return tuple(body.sum(*[(v[c],) for v in vectors]) for c in range(3))  # type: ignore


def rotate_back(body: Body, rot: Rot, x: Vec) -> Vec:
    """``R^T x``: parent coordinates -> child coordinates."""
    return tuple(body.sum(*[(rot[r][c], x[r]) for r in range(3)])  # type: ignore
                 for c in range(3))


def rotate(body: Body, rot: Rot, x: Vec) -> Vec:
    """``R x``: child coordinates -> parent coordinates."""
    return tuple(body.sum(*[(rot[r][c], x[c]) for c in range(3)])  # type: ignore
                 for r in range(3))


def poses(body: Body, chain: ChainArrays, q: list[Value]) -> list[Pose]:
    """Every link's pose in its parent (``x_parent = R x + p``)."""
    out = []
    for i in range(len(q)):
        k0, kc, ks = (np.asarray(a[i], dtype=float) for a in (chain.k0, chain.kc, chain.ks))
        p0, pc, ps, pl = (np.asarray(a[i], dtype=float)
                          for a in (chain.p0, chain.pc, chain.ps, chain.pl))
        if chain.revolute[i] != 0.0:
            c, s, lin = body.call("cos", q[i]), body.call("sin", q[i]), 0.0
        else:
            c, s, lin = 0.0, 0.0, q[i]
        rot = tuple(tuple(body.sum((float(k0[r, col]),), (float(kc[r, col]), c),
                                   (float(ks[r, col]), s)) for col in range(3))
                    for r in range(3))
        pos = tuple(body.sum((float(p0[r]),), (float(pc[r]), c), (float(ps[r]), s),
                             (float(pl[r]), lin)) for r in range(3))
        out.append((rot, pos))  # type: ignore[arg-type]
    return out


def _inertia_times(body: Body, inertia: tuple[Value, ...], x: Vec) -> Vec:
    """``I x`` for the symmetric I with entries (xx, xy, xz, yy, yz, zz)."""
    ixx, ixy, ixz, iyy, iyz, izz = inertia
    return (body.sum((ixx, x[0]), (ixy, x[1]), (ixz, x[2])),
            body.sum((ixy, x[0]), (iyy, x[1]), (iyz, x[2])),
            body.sum((ixz, x[0]), (iyz, x[1]), (izz, x[2])))


def rnea(body: Body, chain: ChainArrays, pose: list[Pose], pi: np.ndarray, dq: list[Value],
         ddq: list[Value], gravity: np.ndarray) -> list[Value]:
    """Joint torques of the rigid bodies ``pi`` (n, 10) at ``(q, dq, ddq)`` (``_motion``,
    ``_link_forces`` and ``_joint_torques`` of the kernels); a zero ``dq``, ``ddq`` or
    ``gravity`` drops its terms (g(q), c(q, dq))."""
    n = len(pose)
    w: Vec = ZERO
    v: Vec = ZERO
    dw: Vec = ZERO
    a: Vec = tuple(-float(g) for g in gravity)  # type: ignore[assignment]
    forces, moments = [], []
    for i in range(n):
        rot, p = pose[i]
        zeta, eta = _floats(chain.zeta[i]), _floats(chain.eta[i])
        rate, acc = dq[i], ddq[i]
        u = cross(body, w, p)
        g = cross(body, dw, p)
        v = rotate_back(body, rot, add(body, v, u))
        a = rotate_back(body, rot, add(body, a, g))
        w = rotate_back(body, rot, w)
        dw = rotate_back(body, rot, dw)
        w = tuple(body.sum((w[c],), (zeta[c], rate)) for c in range(3))  # type: ignore
        v = tuple(body.sum((v[c],), (eta[c], rate)) for c in range(3))  # type: ignore
        cw = cross(body, w, zeta)
        dw = tuple(body.sum((dw[c],), (zeta[c], acc), (cw[c], rate))  # type: ignore
                   for c in range(3))
        c1 = cross(body, w, eta)
        c2 = cross(body, v, zeta)
        a = tuple(body.sum((a[c],), (eta[c], acc), (c1[c], rate), (c2[c], rate))  # type: ignore
                  for c in range(3))
        wv = cross(body, w, v)
        ac = tuple(body.sum((a[c],), (wv[c],)) for c in range(3))
        # the force and moment link i needs: f = m ac + dw x h + w x (w x h),
        # n = I dw + w x (I w) + h x ac
        m, h, inertia = float(pi[i, 0]), _floats(pi[i, 1:4]), _floats(pi[i, 4:10])
        wh = cross(body, w, h)
        forces.append(tuple(
            body.sum((m, ac[c]), (dw[(c + 1) % 3], h[(c + 2) % 3]),
                     (-1.0, dw[(c + 2) % 3], h[(c + 1) % 3]),
                     (w[(c + 1) % 3], wh[(c + 2) % 3]), (-1.0, w[(c + 2) % 3], wh[(c + 1) % 3]))
            for c in range(3)))
        iw = _inertia_times(body, inertia, w)
        idw = _inertia_times(body, inertia, dw)
        moments.append(tuple(
            body.sum((idw[c],), (w[(c + 1) % 3], iw[(c + 2) % 3]),
                     (-1.0, w[(c + 2) % 3], iw[(c + 1) % 3]),
                     (h[(c + 1) % 3], ac[(c + 2) % 3]), (-1.0, h[(c + 2) % 3], ac[(c + 1) % 3]))
            for c in range(3)))
    tau: list[Value] = [0.0] * n
    for i in range(n - 1, -1, -1):
        zeta, eta = _floats(chain.zeta[i]), _floats(chain.eta[i])
        f, moment = forces[i], moments[i]
        tau[i] = body.sum(*[(zeta[c], moment[c]) for c in range(3)],
                          *[(eta[c], f[c]) for c in range(3)])
        if i > 0:
            rot, p = pose[i]
            fp = rotate(body, rot, f)
            np_ = rotate(body, rot, moment)
            pf = cross(body, p, fp)
            forces[i - 1] = add(body, forces[i - 1], fp)
            moments[i - 1] = add(body, moments[i - 1], np_, pf)
    return tau


def _rotated_inertia(body: Body, rot: Rot, inertia: tuple[Value, ...]) -> tuple[Value, ...]:
    """``R I R^T`` for the symmetric I: entries (xx, xy, xz, yy, yz, zz)."""
    u = _inertia_times(body, inertia, rot[0])
    v = _inertia_times(body, inertia, rot[1])
    w = _inertia_times(body, inertia, rot[2])

    def dot(row: Vec, x: Vec) -> Value:
        return body.sum(*[(row[c], x[c]) for c in range(3)])

    return (dot(rot[0], u), dot(rot[0], v), dot(rot[0], w), dot(rot[1], v), dot(rot[1], w),
            dot(rot[2], w))


def _carry_inertia(body: Body, pose: Pose, c: tuple[Value, ...],
                   own: tuple[Value, ...]) -> tuple[Value, ...]:
    """``own`` plus the 10-vector ``c`` of link j carried into link j-1 coordinates
    (``x_parent = R x + p``, ``b = R h``): ``I' = R I R^T + m (p.p E - p p^T) + 2 (p.b) E -
    p b^T - b p^T``, ``h' = b + m p``, ``m' = m``."""
    rot, (px, py, pz) = pose
    m = c[0]
    bx, by, bz = rotate(body, rot, c[1:4])  # type: ignore[arg-type]
    sxx, sxy, sxz, syy, syz, szz = _rotated_inertia(body, rot, c[4:10])
    pp = body.sum((px, px), (py, py), (pz, pz))
    pb2 = body.sum((2.0, px, bx), (2.0, py, by), (2.0, pz, bz))
    return (
        body.sum((own[0],), (m,)),
        body.sum((own[1],), (bx,), (m, px)),
        body.sum((own[2],), (by,), (m, py)),
        body.sum((own[3],), (bz,), (m, pz)),
        body.sum((own[4],), (sxx,), (m, pp), (-1.0, m, px, px), (pb2,), (-2.0, px, bx)),
        body.sum((own[5],), (sxy,), (-1.0, m, px, py), (-1.0, px, by), (-1.0, bx, py)),
        body.sum((own[6],), (sxz,), (-1.0, m, px, pz), (-1.0, px, bz), (-1.0, bx, pz)),
        body.sum((own[7],), (syy,), (m, pp), (-1.0, m, py, py), (pb2,), (-2.0, py, by)),
        body.sum((own[8],), (syz,), (-1.0, m, py, pz), (-1.0, py, bz), (-1.0, by, pz)),
        body.sum((own[9],), (szz,), (m, pp), (-1.0, m, pz, pz), (pb2,), (-2.0, pz, bz)),
    )


def _composites(body: Body, pose: list[Pose], links: list[tuple[Value, ...]],
                ) -> list[tuple[Value, ...]]:
    """``out[j]``: the 10-vector of links j..n-1 in link-j coordinates, from the tip down."""
    n = len(pose)
    out: list[tuple[Value, ...]] = [()] * n
    out[n - 1] = links[n - 1]
    for j in range(n - 1, 0, -1):
        out[j - 1] = _carry_inertia(body, pose[j], out[j], links[j - 1])
    return out


def mass_matrix(body: Body, chain: ChainArrays, pose: list[Pose],
                pi: np.ndarray) -> list[list[Value]]:
    """``M(q)`` of the rigid bodies (the composite-rigid-body algorithm of
    ``_mass_matrix_given_poses``)."""
    n = len(pose)
    composite = _composites(body, pose, [_floats(pi[j]) for j in range(n)])
    out: list[list[Value]] = [[0.0] * n for _ in range(n)]
    for i in range(n):
        zeta, eta = _floats(chain.zeta[i]), _floats(chain.eta[i])
        m, h, inertia = composite[i][0], composite[i][1:4], composite[i][4:10]
        iz = _inertia_times(body, inertia, zeta)
        he = cross(body, h, eta)  # type: ignore[arg-type]
        moment = add(body, iz, he)
        zh = cross(body, zeta, h)  # type: ignore[arg-type]
        force = tuple(body.sum((m, eta[c]), (zh[c],)) for c in range(3))
        out[i][i] = body.sum(*[(zeta[c], moment[c]) for c in range(3)],
                             *[(eta[c], force[c]) for c in range(3)])
        for j in range(i - 1, -1, -1):
            rot, p = pose[j + 1]
            force = rotate(body, rot, force)  # type: ignore[arg-type]
            moment = add(body, rotate(body, rot, moment), cross(body, p, force))
            zj, ej = _floats(chain.zeta[j]), _floats(chain.eta[j])
            value = body.sum(*[(zj[c], moment[c]) for c in range(3)],
                             *[(ej[c], force[c]) for c in range(3)])
            out[j][i] = out[i][j] = value
    return out


# -- spatial algebra (link coordinates, about the link origin) ---------------------------------
Spatial = tuple[Value, Value, Value, Value, Value, Value]  # motion (w, v) or force (n, f)


def _transport(body: Body, pose: Pose, x: Spatial) -> Spatial:
    """A motion vector from link j-1 into link j coordinates: ``w' = R^T w``,
    ``v' = R^T (v + w x p)``."""
    rot, p = pose
    w, v = x[:3], x[3:]
    wp = cross(body, w, p)  # type: ignore[arg-type]
    return (*rotate_back(body, rot, w), *rotate_back(body, rot, add(body, v, wp)))  # type: ignore


def _motion_cross(body: Body, x: Spatial, y: Spatial) -> Spatial:
    """``(a, b) x (c, d) = (a x c, a x d + b x c)``."""
    a, b, c, d = x[:3], x[3:], y[:3], y[3:]
    return (*cross(body, a, c), *add(body, cross(body, a, d), cross(body, b, c)))  # type: ignore


def _force_cross(body: Body, x: Spatial, y: Spatial) -> Spatial:
    """``(w, v) x* (n, f) = (w x n + v x f, w x f)``."""
    w, v, n, f = x[:3], x[3:], y[:3], y[3:]
    return (*add(body, cross(body, w, n), cross(body, v, f)), *cross(body, w, f))  # type: ignore


def _inertia_apply(body: Body, parameters: tuple[Value, ...], x: Spatial) -> Spatial:
    """A spatial inertia (a 10-vector) times a motion vector: ``(I w + h x v, m v - h x w)``."""
    m, h, inertia = parameters[0], parameters[1:4], parameters[4:10]
    w, v = x[:3], x[3:]
    iw = _inertia_times(body, inertia, w)  # type: ignore[arg-type]
    hv = cross(body, h, v)  # type: ignore[arg-type]
    hw = cross(body, h, w)  # type: ignore[arg-type]
    return (*add(body, iw, hv), *(body.sum((m, v[c]), (-1.0, hw[c])) for c in range(3)))


def _inertia_rate(body: Body, parameters: tuple[float, ...], velocity: Spatial,
                  ) -> tuple[Value, ...]:
    """The rate of a link's spatial inertia seen from a fixed frame at the link's, as a
    10-vector: ``dI/dt = V x* I - I V x`` is ``(0, m v + w x h, [w] I - I [w] + 2 (h.v) E -
    v h^T - h v^T)`` for ``V = (w, v)``."""
    m, h, inertia = parameters[0], parameters[1:4], parameters[4:10]
    w, v = velocity[:3], velocity[3:]
    wh = cross(body, w, h)  # type: ignore[arg-type]
    dh = tuple(body.sum((m, v[c]), (wh[c],)) for c in range(3))
    full = ((inertia[0], inertia[1], inertia[2]), (inertia[1], inertia[3], inertia[4]),
            (inertia[2], inertia[4], inertia[5]))
    # column b of [w] I is w x I[:, b]; [w] I - I [w] = A + A^T (I symmetric, [w] skew)
    columns = [cross(body, w, tuple(full[r][b] for r in range(3))) for b in range(3)]  # type: ignore
    hv2 = body.sum(*[(2.0, h[c], v[c]) for c in range(3)])
    entries = []
    for a, b in ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)):
        entries.append(body.sum((columns[b][a],), (columns[a][b],), *([(hv2,)] if a == b else []),
                                (-1.0, v[a], h[b]), (-1.0, h[a], v[b])))
    return (0.0, *dh, *entries)


def _carry_force(body: Body, pose: Pose, x: Spatial) -> Spatial:
    """A force vector from link j into link j-1 coordinates: ``f' = R f``,
    ``n' = R n + p x f'``."""
    rot, p = pose
    f = rotate(body, rot, x[3:])  # type: ignore[arg-type]
    moment = add(body, rotate(body, rot, x[:3]), cross(body, p, f))  # type: ignore[arg-type]
    return (*moment, *f)  # type: ignore[return-value]


def _dot(x: Spatial, y: Spatial, body: Body) -> Value:
    return body.sum(*[(x[c], y[c]) for c in range(6)])


def coriolis_matrix(body: Body, chain: ChainArrays, pose: list[Pose], pi: np.ndarray,
                    dq: list[Value]) -> list[list[Value]]:
    """``C(q, dq)`` with ``C dq = c`` and ``dM/dt - 2 C`` skew-symmetric (see the module).

    With the composites of links k..n-1 in link-k coordinates — inertia ``I^C``, inertia rate
    ``dI^C`` and momentum ``H^C`` — and ``m = max(i, k)``:
    ``C[i, k] = S_i . (I^C_m D_k + (dI^C_m S_k + S_k x* H^C_m) / 2)`` in link-m coordinates
    (``D_k = V_k x S_k``); for ``i <= k`` that is ``S_i . G_k``, for ``i > k``
    ``a_i . D_k + e_i . S_k`` with ``a_i = I^C_i S_i`` and ``e_i = (dI^C_i S_i - S_i x* H^C_i)
    / 2`` (``u . (v x* f) = (u x v) . f``).
    """
    n = len(pose)
    axes_at: list[list[Spatial]] = []  # axes_at[k][i]: S_i in link-k coordinates (i <= k)
    rates_at: list[list[Spatial]] = []  # rates_at[k][i]: V_i x S_i, likewise
    velocities: list[Spatial] = []
    axes: list[Spatial] = []
    rates: list[Spatial] = []
    velocity: Spatial = (0.0,) * 6  # type: ignore[assignment]
    for k in range(n):
        axes = [_transport(body, pose[k], s) for s in axes]
        rates = [_transport(body, pose[k], d) for d in rates]
        velocity = _transport(body, pose[k], velocity)
        axis: Spatial = (*_floats(chain.zeta[k]), *_floats(chain.eta[k]))  # type: ignore
        velocity = tuple(body.sum((velocity[c],), (axis[c], dq[k]))  # type: ignore
                         for c in range(6))
        axes.append(axis)
        rates.append(_motion_cross(body, velocity, axis))
        axes_at.append(list(axes))
        rates_at.append(list(rates))
        velocities.append(velocity)
    links = [_floats(pi[k]) for k in range(n)]
    inertia = _composites(body, pose, links)  # type: ignore[arg-type]
    rate = _composites(body, pose, [_inertia_rate(body, links[k], velocities[k])
                                    for k in range(n)])
    momentum: list[Spatial] = [_inertia_apply(body, links[k], velocities[k]) for k in range(n)]
    for k in range(n - 1, 0, -1):
        carried = _carry_force(body, pose[k], momentum[k])
        momentum[k - 1] = tuple(body.sum((momentum[k - 1][c],), (carried[c],))  # type: ignore
                                for c in range(6))
    out: list[list[Value]] = [[0.0] * n for _ in range(n)]
    for k in range(n):
        s, d = axes_at[k][k], rates_at[k][k]
        turning = _inertia_apply(body, rate[k], s)
        crossed = _force_cross(body, s, momentum[k])
        moved = _inertia_apply(body, inertia[k], d)
        column = tuple(body.sum((moved[c],), (0.5, turning[c]), (0.5, crossed[c]))
                       for c in range(6))
        a = _inertia_apply(body, inertia[k], s)
        e = tuple(body.sum((0.5, turning[c]), (-0.5, crossed[c])) for c in range(6))
        for i in range(k + 1):
            out[i][k] = _dot(axes_at[k][i], column, body)  # type: ignore[arg-type]
        for i in range(k):
            out[k][i] = body.sum((_dot(a, rates_at[k][i], body),),  # type: ignore[arg-type]
                                 (_dot(e, axes_at[k][i], body),))  # type: ignore[arg-type]
    return out
