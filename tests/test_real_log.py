"""The real Panda log end to end (Gaz et al.'s rbt_log_exciting_traj1): resample, filter,
differentiate, identify on the first 70 %, validate on the last 30 %; against Gaz's published
model (reverse-engineered controller coefficients + sigmoid friction) on the same samples."""

from __future__ import annotations

import json

import numpy as np
from conftest import gaz_reverse_engineered_model, reference_path

from dynid.cli import main
from dynid.data import read_dataset
from dynid.preprocess import prepare, split
from dynid.validate import rmse


def test_identify_the_real_panda_log_beats_the_published_model(capsys):
    folder = reference_path("panda-gaz2019", "rbt_log_exciting_traj1")
    assert main(["identify", "panda", str(folder), "--validate", "0.3", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["rank"] == 64  # 43 rigid-body + 21 viscous/Coulomb/offset
    ours = np.array(payload["validation"]["rmse"])
    # the published model on the same held-out, identically preprocessed samples
    _, check = split(prepare(read_dataset(folder)), 0.7)
    model, sigmoid = gaz_reverse_engineered_model()
    published = rmse(check.tau, model.predict(check.q, check.dq, check.ddq)
                     + sigmoid.torque(check.dq))
    # better on joints 1-6 (joint 2: 0.10 vs 0.62 N m); on joint 7, where friction dominates,
    # the published sigmoid beats our linear Coulomb + viscous + offset by a few mN m
    assert (ours[:6] < published[:6]).all(), (ours, published)
    assert ours[6] < 1.15 * published[6]
    assert ours.max() < 0.2  # N m, against RMS torques up to 19 N m
