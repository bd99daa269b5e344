"""Friction: the models (linear in their parameters or nonlinear, one interface) and their fits.

Models (``dynid.friction.models``): viscous + Coulomb + offset (Gaz et al. 2019, eq. 24), sigmoid
(Gaz eq. 25), Stribeck and LuGre (Gilbert et al. 2024, eq. 12-13), arctan (Szabó 2021, eq. 7-9).
Fits on torque residuals per joint (``dynid.friction.fit``): Gaz's Nelder-Mead or bounded least
squares.
"""

from dynid.friction.fit import FIT_METHODS as FIT_METHODS
from dynid.friction.fit import FITTABLE_MODELS as FITTABLE_MODELS
from dynid.friction.fit import FrictionFit as FrictionFit
from dynid.friction.fit import fit_friction as fit_friction
from dynid.friction.fit import start_model as start_model
from dynid.friction.models import DEFAULT_ARCTAN_DELTA as DEFAULT_ARCTAN_DELTA
from dynid.friction.models import DEFAULT_ARCTAN_K_V as DEFAULT_ARCTAN_K_V
from dynid.friction.models import FRICTION_MODELS as FRICTION_MODELS
from dynid.friction.models import Arctan as Arctan
from dynid.friction.models import FrictionModel as FrictionModel
from dynid.friction.models import LuGre as LuGre
from dynid.friction.models import NoFriction as NoFriction
from dynid.friction.models import Sigmoid as Sigmoid
from dynid.friction.models import Stribeck as Stribeck
from dynid.friction.models import ViscousCoulomb as ViscousCoulomb
from dynid.friction.models import friction_from_dict as friction_from_dict

__all__ = [
    "DEFAULT_ARCTAN_DELTA",
    "DEFAULT_ARCTAN_K_V",
    "FITTABLE_MODELS",
    "FIT_METHODS",
    "FRICTION_MODELS",
    "Arctan",
    "FrictionFit",
    "FrictionModel",
    "LuGre",
    "NoFriction",
    "Sigmoid",
    "Stribeck",
    "ViscousCoulomb",
    "fit_friction",
    "friction_from_dict",
    "start_model",
]
