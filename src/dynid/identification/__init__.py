"""Identification: from a robot and its data to a dynamic model, one sub-package per estimator
family behind one contract, on pieces shared by all.

The families (each sub-package's docstring lists its modules and papers):

- ``linear``: OLS, WLS, IV on the inverse dynamic model (IDIM), from a regressor or from logs;
  robust (IRLS), errors-in-variables (TLS, ML) and penalised (ridge, elastic net) forms; a
  controller's M(q), g(q) (Gaz et al. 2019 §IV-A).
- ``constrained``: CLS-1/2/3 by LMI-SDP and log-Cholesky (the Jaco2 comparison paper); the
  consistent forms of IRLS, ridge and elastic net (BIRDy's PC-IDIM).
- ``nonlinear``: NLS, physical parameters jointly with nonlinear friction (Gilbert et al. 2024).
- ``retrieval``: a feasible full parameter set behind base coefficients (Gaz §V).
- ``simulation``: DIDIM, PC-DIDIM, CLOE and CLIE on closed-loop logs, the loop re-simulated
  with each estimate (Gautier, Janot & Vandanjon 2013; Landau & Karimi 1997).
- ``recursive``: RLS with forgetting, EKF/UKF and their square-root forms, online objects fed
  one sample or a block at a time, and the online payload (``OnlinePayload``).

The contract (``estimate``): ``Problem`` in, ``Estimate`` out, each ``Method`` listed with its
family, its needs and its paper. What every method writes — base parameters, the identified
``LinearModel`` and its file, consistency checks — is ``dynid.model``, below every estimator.
Shared by all:

- ``drive_gains``: drive gains and dynamics from motor currents (Gautier & Briot 2014).
- ``payload``: the payload on the last link with the arm frozen (Gilbert eq. 22).
- ``bootstrap``: standard deviations and percentile intervals of any method's coefficients and
  predicted torques by a residual moving-block bootstrap (coloured noise, constraints).
- ``_stream``: the logs folded into triangular factors chunk by chunk, locally or on Dask.
- ``structure``: the model's structure chosen from the data — per joint, which rotor-inertia,
  friction and offset terms the held-out error over time blocks supports
  (``identify(..., structure="auto")``, the default of ``dynid identify``).
- ``compare``: methods compared over identification/validation log pairs (Jaco2 Table 5), each
  fit validated on the others.
"""

from dynid.identification._stream import Factors as Factors
from dynid.identification._stream import Layout as Layout
from dynid.identification._stream import Moments as Moments
from dynid.identification.bootstrap import BOOTSTRAP_METHODS as BOOTSTRAP_METHODS
from dynid.identification.bootstrap import MAX_REPLICATES as MAX_REPLICATES
from dynid.identification.bootstrap import Bootstrap as Bootstrap
from dynid.identification.bootstrap import BootstrapWarning as BootstrapWarning
from dynid.identification.bootstrap import bootstrap as bootstrap
from dynid.identification.compare import COMPARE_METHODS as COMPARE_METHODS
from dynid.identification.compare import DEFAULT_METHODS as DEFAULT_METHODS
from dynid.identification.compare import Comparison as Comparison
from dynid.identification.compare import compare_methods as compare_methods
from dynid.identification.compare import fit_method as fit_method
from dynid.identification.compare import write_table as write_table
from dynid.identification.constrained.cls import CONSTRAINED_METHODS as CONSTRAINED_METHODS
from dynid.identification.constrained.cls import ConstrainedResult as ConstrainedResult
from dynid.identification.constrained.cls import (
    InconsistentPriorWarning as InconsistentPriorWarning,
)
from dynid.identification.constrained.cls import PriorWeightEdgeWarning as PriorWeightEdgeWarning
from dynid.identification.constrained.cls import identify_constrained as identify_constrained
from dynid.identification.constrained.robust import identify_consistent as identify_consistent
from dynid.identification.drive_gains import KnownPayload as KnownPayload
from dynid.identification.drive_gains import identify_drive_gains as identify_drive_gains
from dynid.identification.estimate import FAMILIES as FAMILIES
from dynid.identification.estimate import Estimate as Estimate
from dynid.identification.estimate import Method as Method
from dynid.identification.estimate import Problem as Problem
from dynid.identification.linear.estimators import ESTIMATORS as ESTIMATORS
from dynid.identification.linear.estimators import ILL_CONDITIONED as ILL_CONDITIONED
from dynid.identification.linear.estimators import IV as IV
from dynid.identification.linear.estimators import OLS as OLS
from dynid.identification.linear.estimators import WLS as WLS
from dynid.identification.linear.estimators import IllConditionedWarning as IllConditionedWarning
from dynid.identification.linear.estimators import RankDeficiencyWarning as RankDeficiencyWarning
from dynid.identification.linear.idim import IVConvergenceWarning as IVConvergenceWarning
from dynid.identification.linear.idim import identify as identify
from dynid.identification.linear.idim import identify_iv as identify_iv
from dynid.identification.linear.idim import robot_model as robot_model
from dynid.identification.linear.regularised import ElasticNet as ElasticNet
from dynid.identification.linear.regularised import (
    ElasticNetConvergenceWarning as ElasticNetConvergenceWarning,
)
from dynid.identification.linear.regularised import Ridge as Ridge
from dynid.identification.linear.reverse_engineering import identify_static as identify_static
from dynid.identification.linear.robust import IRLS as IRLS
from dynid.identification.linear.robust import ML as ML
from dynid.identification.linear.robust import TLS as TLS
from dynid.identification.linear.robust import IRLSConvergenceWarning as IRLSConvergenceWarning
from dynid.identification.methods import IDENTIFICATION_METHODS as IDENTIFICATION_METHODS
from dynid.identification.methods import find_method as find_method
from dynid.identification.nonlinear.nls import NLS_FRICTION_MODELS as NLS_FRICTION_MODELS
from dynid.identification.nonlinear.nls import FrictionComparison as FrictionComparison
from dynid.identification.nonlinear.nls import NLSResult as NLSResult
from dynid.identification.nonlinear.nls import compare_friction as compare_friction
from dynid.identification.nonlinear.nls import identify_nls as identify_nls
from dynid.identification.payload import PayloadResult as PayloadResult
from dynid.identification.payload import arm_torque as arm_torque
from dynid.identification.payload import identify_payload as identify_payload
from dynid.identification.payload import in_tool_frame as in_tool_frame
from dynid.identification.recursive.kalman import KalmanDivergedError as KalmanDivergedError
from dynid.identification.recursive.kalman import KalmanFilter as KalmanFilter
from dynid.identification.recursive.kalman import identify_kalman as identify_kalman
from dynid.identification.recursive.payload import OnlinePayload as OnlinePayload
from dynid.identification.recursive.rls import OnlineRLS as OnlineRLS
from dynid.identification.recursive.rls import RecursiveLeastSquares as RecursiveLeastSquares
from dynid.identification.recursive.rls import identify_rls as identify_rls
from dynid.identification.retrieval.retrieve import RETRIEVAL_METHODS as RETRIEVAL_METHODS
from dynid.identification.retrieval.retrieve import RetrievalResult as RetrievalResult
from dynid.identification.retrieval.retrieve import check_bounds as check_bounds
from dynid.identification.retrieval.retrieve import (
    gaz2019_penalty_weights as gaz2019_penalty_weights,
)
from dynid.identification.retrieval.retrieve import parameter_scale as parameter_scale
from dynid.identification.retrieval.retrieve import retrieve_penalty as retrieve_penalty
from dynid.identification.retrieval.retrieve import retrieve_sdp as retrieve_sdp
from dynid.identification.simulation.didim import identify_didim as identify_didim
from dynid.identification.simulation.output_error import identify_clie as identify_clie
from dynid.identification.simulation.output_error import identify_cloe as identify_cloe
from dynid.identification.structure import Structure as Structure
from dynid.identification.structure import Term as Term
from dynid.identification.structure import choose_structure as choose_structure

__all__ = [
    "BOOTSTRAP_METHODS",
    "COMPARE_METHODS",
    "CONSTRAINED_METHODS",
    "DEFAULT_METHODS",
    "ESTIMATORS",
    "FAMILIES",
    "IDENTIFICATION_METHODS",
    "ILL_CONDITIONED",
    "IRLS",
    "IV",
    "MAX_REPLICATES",
    "ML",
    "NLS_FRICTION_MODELS",
    "OLS",
    "RETRIEVAL_METHODS",
    "TLS",
    "WLS",
    "Bootstrap",
    "BootstrapWarning",
    "Comparison",
    "ConstrainedResult",
    "ElasticNet",
    "ElasticNetConvergenceWarning",
    "Estimate",
    "Factors",
    "FrictionComparison",
    "IRLSConvergenceWarning",
    "IVConvergenceWarning",
    "IllConditionedWarning",
    "InconsistentPriorWarning",
    "KalmanDivergedError",
    "KalmanFilter",
    "KnownPayload",
    "Layout",
    "Method",
    "Moments",
    "NLSResult",
    "OnlinePayload",
    "OnlineRLS",
    "PayloadResult",
    "PriorWeightEdgeWarning",
    "Problem",
    "RankDeficiencyWarning",
    "RecursiveLeastSquares",
    "RetrievalResult",
    "Ridge",
    "Structure",
    "Term",
    "arm_torque",
    "bootstrap",
    "check_bounds",
    "choose_structure",
    "compare_friction",
    "compare_methods",
    "find_method",
    "fit_method",
    "gaz2019_penalty_weights",
    "identify",
    "identify_clie",
    "identify_cloe",
    "identify_consistent",
    "identify_constrained",
    "identify_didim",
    "identify_drive_gains",
    "identify_iv",
    "identify_kalman",
    "identify_nls",
    "identify_payload",
    "identify_rls",
    "identify_static",
    "in_tool_frame",
    "parameter_scale",
    "retrieve_penalty",
    "retrieve_sdp",
    "robot_model",
    "write_table",
]
