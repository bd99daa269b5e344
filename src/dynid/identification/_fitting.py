"""What the linear fits share: the equation count check, the fit that names the base parameters
the data leave undetermined, and the figures that go to a model's report."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from dynid.identification._stream import Factors
from dynid.identification.linear.estimators import RankDeficiencyWarning
from dynid.model.base_parameters import base_parameters


def check_rows(n_equations: int, n_unknowns: int, what: str) -> None:
    if n_equations <= n_unknowns:
        raise ValueError(
            f"{what}: {n_equations} equations for {n_unknowns} "
            "unknowns (base parameters and offsets); record more samples"
        )


def fit_base(estimator, factors: Factors, names: Sequence[str], what: str, hint: str,
             **options) -> None:
    """Fit the unknowns ``names`` (the base parameters, then any per-log terms) to the
    compressed rows ``factors``; if the data leave some undetermined, a ValueError that names
    them — unless the estimator's penalty determines them (``regularises``: ridge, the elastic
    net with alpha > 0), which it then does with a ``RankDeficiencyWarning`` naming them, and
    ``details_["undetermined"]`` listing them. ``options`` go to ``fit_factors``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankDeficiencyWarning)
        estimator.fit_factors(factors, **options)
    if estimator.rank_ == len(names) - estimator.dropped_.size:
        return
    missing = _undetermined(estimator, names)
    named = f"; not excited: {', '.join(missing)}" if missing else ""
    found = f"{what} determine only {estimator.rank_} of {len(names)} unknowns{named}"
    if getattr(estimator, "regularises", False):
        estimator.details_ = {**getattr(estimator, "details_", {}), "undetermined": missing}
        warnings.warn(f"{found}: {estimator.name}'s penalty alone sets "
                      f"{'them' if missing else 'the unexcited directions'} (towards 0; "
                      f"their std 0 is the penalty's, not the data's) ({hint})",
                      RankDeficiencyWarning, stacklevel=3)
        return
    raise ValueError(f"{found} ({hint})")


def _undetermined(estimator, names: Sequence[str]) -> list[str]:
    """The unknowns the data leave undetermined, by rref on the estimator's factor (its rank
    decision stands: this only names them); [] where no clean set can be named."""
    for rtol in (1e-10, 1e-6):
        try:
            found = base_parameters(estimator.factor_, names=names, rtol=rtol)
        except ValueError:  # singular values crowd this tolerance: no clean set to name
            continue
        missing = [name for k, name in enumerate(names) if k not in set(found.independent)]
        if missing:
            return missing
    return []


def fit_report(estimator, **extra) -> dict:
    return {
        "method": estimator.name, "rank": estimator.rank_,
        "condition_number": estimator.condition_number_,
        "relative_error_percent": estimator.relative_error_percent_,
        "sigma2": estimator.sigma2_, "n_equations": estimator.n_samples_,
        "dropped": estimator.dropped_.tolist(),
        # what the std is (LinearModel.std_kind); an estimator of the caller's may not say
        **({"std_kind": estimator.std_kind} if hasattr(estimator, "std_kind") else {}),
        **({"noise_std": estimator.noise_std_.tolist()} if hasattr(estimator, "noise_std_")
           else {}),
        **extra,
    }
