"""The identified model, apart from how it was estimated: what every later stage reads.

- ``base_parameters``: the identifiable combinations of a robot's parameters (and its friction
  and rotor columns) by rref or pivoted QR (Szabó 2021 §4.1; Gaz et al. 2019 eq. 5-8), with the
  regrouping of every base parameter;
- ``symbolic``: the regroupings as expressions in the table lengths (Jaco2 paper Table 3,
  Szabó 2021 Table 2);
- ``identifiability``: which physical parameters (link masses, CoMs, inertias, rotor
  inertias, friction) the data determine, only in combination, or not at all (held by a
  prior or a bound);
- ``linear_model``: the identified ``LinearModel`` (base coefficients, their standard
  deviations, friction, drive gains, the fit report) and its file (``save_model`` /
  ``load_model``);
- ``consistency``: physical consistency of link parameters (Jaco2 paper eq. 3-6).

No estimator lives here: ``dynid.identification`` writes these objects, ``evaluation``,
``export``, ``codegen`` and ``monitor`` read them.
"""

from dynid.model.base_parameters import LINK_ORDER as LINK_ORDER
from dynid.model.base_parameters import METHODS as METHODS
from dynid.model.base_parameters import AmbiguousRankError as AmbiguousRankError
from dynid.model.base_parameters import BaseParameters as BaseParameters
from dynid.model.base_parameters import base_parameters as base_parameters
from dynid.model.base_parameters import default_friction as default_friction
from dynid.model.base_parameters import joint1_gravity_is_zero as joint1_gravity_is_zero
from dynid.model.base_parameters import model_columns as model_columns
from dynid.model.base_parameters import model_names as model_names
from dynid.model.base_parameters import processing_order as processing_order
from dynid.model.base_parameters import regrouping_for as regrouping_for
from dynid.model.base_parameters import robot_base_parameters as robot_base_parameters
from dynid.model.base_parameters import structural_regressor as structural_regressor
from dynid.model.consistency import ConsistencyReport as ConsistencyReport
from dynid.model.consistency import check_consistency as check_consistency
from dynid.model.identifiability import Identifiability as Identifiability
from dynid.model.identifiability import Quantity as Quantity
from dynid.model.identifiability import physical_identifiability as physical_identifiability
from dynid.model.linear_model import MODEL_SCHEMA as MODEL_SCHEMA
from dynid.model.linear_model import STD_KINDS as STD_KINDS
from dynid.model.linear_model import LinearModel as LinearModel
from dynid.model.linear_model import bootstrap_table as bootstrap_table
from dynid.model.linear_model import load_model as load_model
from dynid.model.linear_model import relative_std_percent as relative_std_percent
from dynid.model.linear_model import save_model as save_model
from dynid.model.symbolic import SymbolicRegrouping as SymbolicRegrouping
from dynid.model.symbolic import symbolic_regrouping as symbolic_regrouping

__all__ = [
    "LINK_ORDER",
    "METHODS",
    "MODEL_SCHEMA",
    "STD_KINDS",
    "AmbiguousRankError",
    "BaseParameters",
    "ConsistencyReport",
    "Identifiability",
    "LinearModel",
    "Quantity",
    "SymbolicRegrouping",
    "base_parameters",
    "bootstrap_table",
    "check_consistency",
    "default_friction",
    "joint1_gravity_is_zero",
    "load_model",
    "model_columns",
    "model_names",
    "physical_identifiability",
    "processing_order",
    "regrouping_for",
    "relative_std_percent",
    "robot_base_parameters",
    "save_model",
    "structural_regressor",
    "symbolic_regrouping",
]
