"""Base parameters as symbolic expressions in the DH/MDH lengths (like the papers' tables).

The regrouping coefficients of a serial chain are polynomials of degree <= 2 in its lengths
(``a_i``, ``d_i``: parallel-axis terms such as ``d3**2 m4`` or ``2 d3 mz3``), with the twist
angles entering only through their (fixed) sines and cosines. dynid stays numeric: it evaluates
the regrouping for the chain with its lengths perturbed at random, fits every coefficient with
the monomials of degree <= 2, snaps the fitted weights to small rationals, and keeps a symbolic
coefficient only if it reproduces every evaluation to 1e-9 — otherwise the coefficient stays the
robot's number (reported in ``SymbolicRegrouping.numeric_terms``).

Symbols are named after the table row they come from: ``a4``, ``d3`` are row 4's ``a`` and row
3's ``d`` (Gaz Fig. 1 and the Jaco2 paper's Table 1 name them this way).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from dynid._progress import Progress
from dynid.friction.models import FrictionModel
from dynid.model._compress import triangular_factor
from dynid.model.base_parameters import (
    BaseParameters,
    clean_tolerance,
    regrouping_for,
    structural_regressor,
)
from dynid.robot import Robot

if TYPE_CHECKING:
    import sympy

__all__ = ["SymbolicRegrouping", "symbolic_regrouping"]

_FIT_RTOL = 1e-9


@dataclass(frozen=True)
class SymbolicRegrouping:
    expressions: list[sympy.Expr]  # one per base parameter
    lengths: dict[str, float]  # symbol name -> the robot's value
    numeric_terms: list[tuple[int, str]]  # (base index, parameter name) kept numeric

    def strings(self) -> list[str]:
        return [str(e) for e in self.expressions]


def _length_fields(robot: Robot) -> list[tuple[int, str, float]]:
    """(row index, field, value) of every nonzero constant length in the kinematic table."""
    out = []
    for i, row in enumerate(robot.table):
        for name in ("a", "d"):
            if name in {f.name for f in dataclasses.fields(row)}:
                value = float(getattr(row, name))
                if value != 0.0:
                    out.append((i, name, value))
    return out


def _with_lengths(robot: Robot, fields: list[tuple[int, str, float]], values) -> Robot:
    rows = list(robot.table)
    for (i, name, _), value in zip(fields, values, strict=True):
        rows[i] = dataclasses.replace(rows[i], **{name: float(value)})
    build = Robot.from_mdh if robot.convention == "mdh" else Robot.from_dh
    return build(robot.name, rows, robot.parameters, limits=robot.limits,
                 gravity=robot.gravity, joint_names=robot.joint_names)


def _snap(weight: float) -> Fraction:
    return Fraction(weight).limit_denominator(4)


def _monomials(n_lengths: int, laurent: bool) -> list[tuple[int, ...]]:
    """Exponent vectors of total degree <= 2 (in |exponent| when ``laurent``)."""
    powers = (-2, -1, 0, 1, 2) if laurent else (0, 1, 2)
    out = []
    for exponents in np.ndindex(*(len(powers),) * n_lengths):
        e = tuple(powers[k] for k in exponents)
        if sum(abs(x) for x in e) <= 2:
            out.append(e)
    return out


def _design(samples: NDArray, monomials) -> NDArray:
    """(samples, monomials): each monomial evaluated at each sample of the lengths."""
    return np.prod(samples[:, None, :] ** np.array(monomials)[None, :, :], axis=2)


def _fit(values: NDArray, design: NDArray, monomials, symbols) -> sympy.Expr | None:
    """A polynomial (or Laurent polynomial) in the lengths reproducing ``values``, or None."""
    import sympy

    weights = np.linalg.lstsq(design, values, rcond=None)[0]
    snapped = [_snap(w) for w in weights]
    fitted = design @ np.array([float(w) for w in snapped])
    if np.abs(fitted - values).max() > _FIT_RTOL * max(1.0, np.abs(values).max()):
        return None
    return sympy.Add(*[
        sympy.Rational(w.numerator, w.denominator)
        * sympy.Mul(*[symbol**power for symbol, power in zip(symbols, m, strict=True)])
        for w, m in zip(snapped, monomials, strict=True) if w != 0
    ])


def symbolic_regrouping(robot: Robot, base: BaseParameters, *,
                        friction: FrictionModel | None = None, kind: str = "torque",
                        drop_joint1_gravity: bool = False, seed: int = 0,
                        progress: Callable[[str], None] | None = None) -> SymbolicRegrouping:
    """The base parameters of ``base`` (computed for ``robot`` with the same options) as sympy
    expressions in the robot's table lengths.

    Coefficients are fitted as polynomials of degree <= 2 in the lengths; those that are not
    (a standard-DH chain whose representative is a mass regroups first moments with 1/a) are
    fitted again with Laurent monomials (powers -2..2, total degree <= 2). ``progress``
    receives a line every few seconds while the perturbed chains are evaluated.
    """
    if robot.table is None:
        raise ValueError(
            f"`robot`: {robot.name!r} has no DH/MDH table ({robot.convention}); symbolic "
            "regroupings need table lengths"
        )
    import sympy  # loads here: the rest of dynid never needs it

    fields = _length_fields(robot)
    symbols = [sympy.Symbol(f"{name}{i + 1}") for i, name, _ in fields]
    nominal = np.array([value for _, _, value in fields])
    rng = np.random.default_rng(seed)

    def evaluate(n_samples: int) -> tuple[NDArray, NDArray]:
        samples = nominal * rng.uniform(0.6, 1.4, size=(n_samples, len(fields)))
        meter = Progress(progress, "symbolic regrouping: perturbed chains", n_samples)
        values = []
        for done, lengths in enumerate(samples, start=1):
            values.append(regrouping_for(triangular_factor(structural_regressor(
                _with_lengths(robot, fields, lengths), friction=friction, kind=kind,
                drop_joint1_gravity=drop_joint1_gravity, seed=seed)), base.independent,
                clean=clean_tolerance(base.rtol)))
            meter.update(done)
        return samples, np.array(values)  # (samples, r, p)

    polynomial = _monomials(len(fields), laurent=False)
    samples, values = evaluate(2 * len(polynomial) + 8)
    design = _design(samples, polynomial)
    laurent: tuple | None = None
    names = [sympy.Symbol(name) for name in base.names]
    expressions, numeric = [], []
    for k in range(base.rank):
        terms = []
        for j in np.flatnonzero(np.abs(values[:, k, :]).max(axis=0) > 0):
            coefficient = _fit(values[:, k, j], design, polynomial, symbols)
            if coefficient is None:
                if laurent is None:
                    monomials = _monomials(len(fields), laurent=True)
                    more_samples, more_values = evaluate(2 * len(monomials) + 8)
                    laurent = (monomials, _design(more_samples, monomials), more_values)
                monomials, more_design, more_values = laurent
                coefficient = _fit(more_values[:, k, j], more_design, monomials, symbols)
            if coefficient is None:
                coefficient = sympy.Float(base.regrouping[k, j], 6)
                numeric.append((k, base.names[j]))
            terms.append(coefficient * names[j])
        expressions.append(sympy.Add(*terms))
    return SymbolicRegrouping(
        expressions=expressions,
        lengths={str(s): float(v) for s, v in zip(symbols, nominal, strict=True)},
        numeric_terms=numeric,
    )
