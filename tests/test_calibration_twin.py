"""The calibration targets of issue 25 on the Panda twin (MDH, a tool point ~0.1 m off the
flange, errors ±5 mrad / ±1 mm, 0.1 mm mocap noise), measured by ``twin_study``."""

from __future__ import annotations

import pytest

from dynid.bench.calibration import twin_study
from dynid.robot import load_robot


@pytest.fixture(scope="module")
def study() -> dict:
    return twin_study(load_robot("panda"), poses=50, sigma=1e-4, seed=0, repeats=3)


def test_heldout_error_reaches_the_noise_floor(study):
    # before: tens of times the noise; after: the noise itself (1 = per-coordinate sigma)
    assert study["heldout_before_over_noise"] > 10
    assert study["heldout_error_over_noise"] < 1.2
    assert 0.7 < study["chi2_dof"] < 1.3 and study["converged"]


def test_errors_are_at_the_cramer_rao_bound(study):
    # the fit is efficient: its worst errors are a few of its own standard deviations
    assert study["offset_error_mrad"] < 4 * study["offset_std_mrad"]
    assert study["length_error_mm"] < 4 * study["length_std_mm"]
    assert study["offset_error_mrad"] < 1.0 and study["length_error_mm"] < 0.5


@pytest.mark.xfail(strict=True, reason="below the Cramér–Rao bound at 50 poses x 0.1 mm: the "
                   "wrist offsets' std is ~0.3 mrad and some lengths' ~0.05 mm (offset_std_mrad,"
                   " length_std_mm)")
def test_issue_target_offsets_and_lengths(study):
    assert study["offset_error_mrad"] <= 0.1 and study["length_error_mm"] <= 0.05


@pytest.mark.xfail(strict=True, reason="20 D-optimal poses give 60 equations for 31 parameters;"
                   " the Cramér–Rao ratio to 50 random poses is ~1.5 (no design reaches 1)")
def test_issue_target_twenty_optimised_poses(study):
    assert study["optimised20_over_random50"] <= 1.0


def test_twenty_optimised_poses_as_expected(study):
    # the measured ratio agrees with the Cramér–Rao one (3 noise draws: within 40 %)
    ratio = study["optimised20_over_random50"] / study["optimised20_over_random50_expected"]
    assert 0.6 < ratio < 1.4


def test_offsets_only_model_on_the_twin():
    result = twin_study(load_robot("panda"), parameters="offsets", repeats=2, seed=1)
    assert result["heldout_error_over_noise"] < 1.2
    assert result["offset_error_mrad"] < 4 * result["offset_std_mrad"]
