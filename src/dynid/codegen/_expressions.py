"""Straight-line C code from numeric constants: the generated functions' expression builder.

A value is a Python float (a constant, known when the code is generated) or a ``Var`` (a C
name: an input entry such as ``q[2]``, or a temporary ``t17``). ``Body.sum`` takes a sum of
monomials, folds the constants (a monomial with a zero factor is dropped, ``1 *`` and
``-1 *`` vanish, constant terms add up) and binds what is left to one new ``const double``
temporary; a sum that is a constant or a single variable binds nothing. Only the numbers of
the model enter the code, each printed exactly (``repr``: the shortest text that reads back
as the same double), so the generated functions compute what dynid's compiled kernels compute
up to the order of the roundings. ``Body.lines`` drops the temporaries no output needs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

__all__ = ["Body", "Value", "Var", "literal"]


class Var(str):
    """A C expression that names a value: an input entry (``q[2]``) or a temporary."""


Value = float | Var
Monomial = Sequence[float | Var]


def literal(value: float, what: str) -> str:
    """``value`` as an exact C double literal; ValueError (naming ``what``) for NaN or inf."""
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"`model`: {what} is {value!r}; generated code would compute NaN "
                         "(a model with NaN or inf numbers is refused)")
    text = repr(value)
    return f"({text})" if value < 0 else text


class Body:
    """The statements of one generated function, built value by value.

    ``math_prefix`` is the prefix of the mathematical functions (``""`` in C, ``"std::"`` in C++);
    ``what`` names the numbers in errors (``"a link parameter"``...).
    """

    def __init__(self, math_prefix: str = "") -> None:
        self.math = math_prefix
        self._statements: list[tuple[str, str, tuple[str, ...]]] = []  # name, text, uses
        self._outputs: list[tuple[str, Value]] = []
        self._count = 0
        self.what = "a number of the model"

    # -- building --------------------------------------------------------------------------
    def _bind(self, text: str, uses: Iterable[Var]) -> Var:
        name = Var(f"t{self._count}")
        self._count += 1
        self._statements.append((name, text, tuple(uses)))
        return name

    def call(self, function: str, argument: Value) -> Value:
        """``function(argument)`` (sin, cos, ...): folded for a constant argument."""
        if not isinstance(argument, Var):
            return float(getattr(math, function)(argument))
        return self._bind(f"{self.math}{function}({argument})", (argument,))

    def sum(self, *monomials: Monomial) -> Value:
        """``sum(prod(monomial))``, constants folded, bound to one temporary if need be."""
        constant = 0.0
        terms: list[tuple[float, list[Var]]] = []
        for monomial in monomials:
            coefficient, names = 1.0, []
            for factor in monomial:
                if isinstance(factor, Var):
                    names.append(factor)
                else:
                    literal(factor, self.what)  # refuse NaN and inf before folding them away
                    coefficient *= float(factor)
            if coefficient == 0.0:
                continue
            if names:
                terms.append((coefficient, names))
            else:
                constant += coefficient
        if not terms:
            return constant
        if constant == 0.0 and len(terms) == 1 and terms[0][0] == 1.0 and len(terms[0][1]) == 1:
            return terms[0][1][0]
        parts = []
        for k, (coefficient, names) in enumerate(terms):
            sign = "-" if coefficient < 0 else "+"
            magnitude = abs(coefficient)
            factors = ([] if magnitude == 1.0 else [repr(magnitude)]) + list(names)
            product = " * ".join(factors)
            parts.append((f"-{product}" if sign == "-" else product) if k == 0
                         else f" {sign} {product}")
        if constant != 0.0:
            parts.append(f" {'-' if constant < 0 else '+'} {abs(constant)!r}")
        return self._bind("".join(parts), (name for _, names in terms for name in names))

    def output(self, target: str, value: Value) -> None:
        """``target = value;`` at the end of the function (``target`` e.g. ``tau[3]``)."""
        self._outputs.append((target, value))

    # -- rendering -------------------------------------------------------------------------
    def lines(self) -> list[str]:
        """The C statements that the outputs need (the rest dropped), then the outputs."""
        needed = {value for _, value in self._outputs if isinstance(value, Var)}
        kept = []
        for name, text, uses in reversed(self._statements):
            if name in needed:
                kept.append((name, text))
                needed.update(uses)
        kept.reverse()
        out = [f"const double {name} = {text};" for name, text in kept]
        out += [f"{target} = {value if isinstance(value, Var) else literal(value, self.what)};"
                for target, value in self._outputs]
        return out
