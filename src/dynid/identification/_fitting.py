"""What the linear fits share: the equation count check, the fit that names the base parameters
the data leave undetermined (and the same word for a constrained fit, whose prior and bounds then
decide them), and the figures that go to a model's report."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from dynid.identification._stream import Factors
from dynid.identification.linear.estimators import RankDeficiencyError, RankDeficiencyWarning
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
    ``details_["undetermined"]`` listing them. ``options`` go to ``fit_factors``. An
    estimator with no answer for an undetermined fit (``RankDeficiencyError``: TLS, ML) gets
    the same named ValueError, with its own reason."""
    refused = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankDeficiencyWarning)
        try:
            estimator.fit_factors(factors, **options)
        except RankDeficiencyError as error:
            refused = error
    if refused is None and estimator.rank_ == len(names) - estimator.dropped_.size:
        return
    if refused is not None and estimator.rank_ == len(names) - estimator.dropped_.size:
        raise ValueError(f"{what}: {refused} ({hint}; `--method {estimator.name}`)") from None
    missing = undetermined(estimator.factor_, names)
    named = f"; not excited: {', '.join(missing)}" if missing else ""
    found = f"{what} determine only {estimator.rank_} of {len(names)} unknowns{named}"
    if refused is not None:
        raise ValueError(f"{found} ({hint}); `{estimator.name}` (`--method "
                         f"{estimator.name}`) needs them all: errors in variables has no "
                         "estimate otherwise") from None
    if getattr(estimator, "regularises", False):
        estimator.details_ = {**getattr(estimator, "details_", {}), "undetermined": missing}
        warnings.warn(f"{found}: {estimator.name}'s penalty alone sets "
                      f"{'them' if missing else 'the unexcited directions'} (towards 0; "
                      f"their std 0 is the penalty's, not the data's) ({hint})",
                      RankDeficiencyWarning, stacklevel=3)
        return
    raise ValueError(f"{found} ({hint})")


def undetermined(factor: NDArray, names: Sequence[str]) -> list[str]:
    """The unknowns the data leave undetermined, by rref on the triangular factor of their
    regressor (the caller's rank decision stands: this only names them); [] where no clean
    set can be named."""
    for rtol in (1e-10, 1e-6):
        try:
            found = base_parameters(factor, names=names, rtol=rtol)
        except ValueError:  # singular values crowd this tolerance: no clean set to name
            continue
        missing = [name for k, name in enumerate(names) if k not in set(found.independent)]
        if missing:
            return missing
    return []


def data_rank(factor: NDArray, n_rows: int) -> int:
    """The numerical rank of a regressor of ``n_rows`` rows from its triangular factor
    ``(p, p)``: singular values above ``max(n_rows, p) eps sigma_max`` (numpy's
    ``matrix_rank`` rule, the linear estimators' ``rank_``)."""
    singular = np.linalg.svd(factor, compute_uv=False)
    if not singular.size or singular[0] == 0:
        return 0
    tolerance = max(n_rows, factor.shape[0]) * np.finfo(float).eps * singular[0]
    return int((singular > tolerance).sum())


def warn_prior_decides(method: str, factor: NDArray, n_rows: int, names: Sequence[str],
                       hint: str) -> dict:
    """A constrained (or otherwise regularised) fit on data that determine fewer unknowns than
    ``names`` (the base parameters and offsets, the columns of ``factor``): a
    ``RankDeficiencyWarning`` naming them, because the prior and the bounds, not the data, set
    them. The estimate stands (a prior is information: a short log may only update what it
    excites), but nothing in it says so otherwise. Returns the report's entries:
    ``data_rank`` and ``undetermined`` (the unknowns named, [] where no clean set is)."""
    rank = data_rank(factor, n_rows)
    if rank >= len(names):
        return {"data_rank": rank}
    missing = undetermined(factor, names)
    if len(missing) != len(names) - rank:  # rref's set at its tolerances is not this rank's
        missing = []
    named = f"; not excited: {', '.join(missing)}" if missing else ""
    warnings.warn(
        f"{method}: the data determine only {rank} of {len(names)} unknowns ({n_rows} "
        f"equations){named}: the prior and the bounds, not the data, set "
        f"{'them' if missing else 'the unexcited directions'}, and the relative std of those "
        f"is not the data's ({hint})", RankDeficiencyWarning, stacklevel=3)
    return {"data_rank": rank, "undetermined": missing}


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
