"""The real Panda log end to end (Gaz et al.'s rbt_log_exciting_traj1): resample, filter,
differentiate, identify on the first 70 %, validate on the last 30 %; against Gaz's published
model (reverse-engineered controller coefficients + sigmoid friction) on the same samples."""

from __future__ import annotations

import json

import numpy as np
from conftest import gaz_reverse_engineered_model, reference_path

from dynid.cli import main
from dynid.data.io import read_dataset
from dynid.data.preprocess import prepare, split
from dynid.metrics import rmse
from dynid.robot import load_robot


def test_identify_the_real_panda_log_beats_the_published_model(capsys, tmp_path):
    from dynid.model import load_model

    folder = reference_path("panda-gaz2019", "rbt_log_exciting_traj1")
    assert main(["identify", "panda", str(folder), "--validate", "0.3", "--json",
                 "--structure", "fixed", "-o", str(tmp_path / "ours.yaml")]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["rank"] == 64  # 43 rigid-body + 21 viscous/Coulomb/offset
    ours = np.array(payload["validation"]["rmse"])
    # the published model on the same held-out, identically preprocessed samples
    _, check = split(prepare(read_dataset(folder)), 0.7)
    model, sigmoid = gaz_reverse_engineered_model()
    published = rmse(check.tau, model.predict(check.q, check.dq, check.ddq)
                     + sigmoid.torque(check.dq))
    # better on joints 1-6; on joint 7, where friction dominates, the published sigmoid beats
    # our linear Coulomb + viscous + offset by a few mN m. The torques are as logged (prepare
    # filters the states only): their 10-100 Hz content, 0.25-0.4 N m on joints 1-4 that no
    # rigid-body model explains, is in every RMSE here
    assert (ours[:6] < published[:6]).all(), (ours, published)
    assert ours[6] < 1.15 * published[6]
    assert ours.max() < 0.45  # N m, against RMS torques up to 19 N m
    # on the held-out torques filtered as the states are (the literature's figure): as before
    held = split(_filtered_alike(folder), 0.7)[1]
    fitted = load_model(tmp_path / "ours.yaml")
    filtered = rmse(held.tau, fitted.predict(held.q, held.dq, held.ddq))
    assert filtered.max() < 0.2, filtered
    # the default, the structure chosen on the first 70 %: on this real arm (sigmoid-like,
    # drifting friction) it leaves out viscous terms the last 30 % needs a little of
    assert main(["identify", "panda", str(folder), "--validate", "0.3", "--json"]) == 0
    auto = np.array(json.loads(capsys.readouterr().out)["validation"]["rmse"])
    assert (auto[:6] < published[:6]).all() and auto.max() < 0.45, (auto, published)


def _filtered_alike(folder):
    """The real log prepared as Gaz et al. prepare theirs: every channel, the torques too,
    low-passed at the cutoff prepare chooses for the states (prepare leaves the torques as
    logged; their 10-100 Hz content would otherwise dominate these comparisons)."""
    from dynid.data import data_cutoff, lowpass, resample

    raw = resample(read_dataset(folder))
    return prepare(lowpass(raw, float(data_cutoff(raw)), fields=("tau",)))


def test_nls_with_sigmoid_friction_on_the_real_panda_log():
    """Gilbert's joint identification on Gaz's real log: physical parameters (consistent,
    within Table VIII's bounds and 16-20 kg) and a sigmoid per joint, validated on the held-out
    30 %: within 0.15 N m on every joint, a third of the no-friction error."""
    from dynid.identification.nonlinear.nls import identify_nls

    folder = reference_path("panda-gaz2019", "rbt_log_exciting_traj1")
    data, check = split(_filtered_alike(folder), 0.7)
    result = identify_nls(load_robot("panda"), data, friction="sigmoid", max_samples=3000)
    assert result.consistency.consistent and result.consistency.within_bounds
    held_out = rmse(check.tau, result.model.predict(check.q, check.dq, check.ddq, check.t))
    assert held_out.max() < 0.15, held_out
    rigid_only = identify_nls(load_robot("panda"), data, friction="none", max_samples=3000)
    without = rmse(check.tau, rigid_only.model.predict(check.q, check.dq, check.ddq))
    assert held_out.mean() < 0.4 * without.mean()


def test_gaz2019_sigmoid_refitted_on_the_residual_of_the_controller_model():
    """Gaz's friction procedure on their own log: the reverse-engineered controller model
    (Table III) frozen, a sigmoid per joint fitted by Nelder-Mead on Delta tau = tau - tau^ of
    the first 70 %. On the held-out 30 % it beats their published sigmoid (Table I of the
    supplement), fitted on other motions."""
    from dynid.identification.nonlinear.nls import compare_friction

    folder = reference_path("panda-gaz2019", "rbt_log_exciting_traj1")
    data, check = split(_filtered_alike(folder), 0.7)
    model, sigmoid = gaz_reverse_engineered_model()
    published = rmse(check.tau, model.predict(check.q, check.dq, check.ddq)
                     + sigmoid.torque(check.dq))
    table = compare_friction(load_robot("panda"), data, check, models=("none", "sigmoid"),
                             method="residual", rigid=model, optimizer="nelder-mead")
    none, refitted = table.rmse_validation
    assert refitted.mean() < 0.85 * published.mean(), (refitted, published)
    assert refitted.mean() < 0.5 * none.mean()
    assert table.fitted[1].fitted_friction.name == "sigmoid"
