"""Generated code: an identified model's dynamics as dependency-free C99 (or header-only C++)
for a real-time loop — inverse dynamics with friction, M(q), g(q), c(q, dq), the Coriolis
matrix, friction and its state (``generate``; command line ``dynid codegen``)."""

from dynid.codegen.generate import LANGUAGES as LANGUAGES
from dynid.codegen.generate import SUFFIXES as SUFFIXES
from dynid.codegen.generate import GeneratedCode as GeneratedCode
from dynid.codegen.generate import generate as generate

__all__ = ["LANGUAGES", "SUFFIXES", "GeneratedCode", "generate"]
