"""Generated code: an identified model's dynamics as dependency-free C99 (or header-only C++)
for a real-time loop — inverse dynamics with the model's friction (none for a model without),
M(q), g(q), c(q, dq), the Coriolis matrix, friction and its state, current conversions for a
model with drive gains, and with ``effort="current"`` the inverse dynamics in motor currents
(``generate``; command line ``dynid codegen``)."""

from dynid.codegen.generate import EFFORTS as EFFORTS
from dynid.codegen.generate import LANGUAGES as LANGUAGES
from dynid.codegen.generate import SUFFIXES as SUFFIXES
from dynid.codegen.generate import GeneratedCode as GeneratedCode
from dynid.codegen.generate import generate as generate
from dynid.codegen.generate import output_files as output_files

__all__ = ["EFFORTS", "LANGUAGES", "SUFFIXES", "GeneratedCode", "generate", "output_files"]
