"""Evaluation: validation of a model on a dataset (``validate``), what its residual says is
missing (``diagnostics``), figures (``plots``) and the HTML report (``report``). It reads
identified models (``dynid.model``) and runs no estimator: the comparison of methods, which
fits them, is ``dynid.identification.compare``.
"""

from dynid.evaluation.diagnostics import JointDiagnosis as JointDiagnosis
from dynid.evaluation.diagnostics import UnexplainedJointWarning as UnexplainedJointWarning
from dynid.evaluation.diagnostics import residual_diagnostics as residual_diagnostics
from dynid.evaluation.plots import comparison_figure as comparison_figure
from dynid.evaluation.plots import excitation_figure as excitation_figure
from dynid.evaluation.plots import figure_png as figure_png
from dynid.evaluation.plots import friction_figure as friction_figure
from dynid.evaluation.plots import parameters_figure as parameters_figure
from dynid.evaluation.plots import plot_torques as plot_torques
from dynid.evaluation.plots import save_figure as save_figure
from dynid.evaluation.plots import torques_figure as torques_figure
from dynid.evaluation.report import build_report as build_report
from dynid.evaluation.report import figure_html as figure_html
from dynid.evaluation.report import table_html as table_html
from dynid.evaluation.report import write_report as write_report
from dynid.evaluation.validate import ValidationReport as ValidationReport
from dynid.evaluation.validate import check_compatible as check_compatible
from dynid.evaluation.validate import mass_matrix_check as mass_matrix_check
from dynid.evaluation.validate import model_mass_matrix_check as model_mass_matrix_check
from dynid.evaluation.validate import validate_model as validate_model

__all__ = [
    "JointDiagnosis",
    "UnexplainedJointWarning",
    "ValidationReport",
    "build_report",
    "check_compatible",
    "comparison_figure",
    "excitation_figure",
    "figure_html",
    "figure_png",
    "friction_figure",
    "mass_matrix_check",
    "model_mass_matrix_check",
    "parameters_figure",
    "plot_torques",
    "residual_diagnostics",
    "save_figure",
    "table_html",
    "torques_figure",
    "validate_model",
    "write_report",
]
