"""Plots render without a display and refuse mismatched arrays."""

from __future__ import annotations

import numpy as np
import pytest

from dynid.plots import plot_torques


def test_torque_plot_is_a_png(tmp_path, rng):
    t = np.linspace(0, 1, 200)
    measured = rng.standard_normal((200, 3))
    path = plot_torques(t, measured, measured * 0.9, tmp_path / "torques.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(tmp_path.glob("*.tmp*"))


def test_format_follows_the_suffix(tmp_path, rng):
    t = np.linspace(0, 1, 50)
    y = rng.standard_normal((50, 2))
    assert plot_torques(t, y, y, tmp_path / "t.pdf").read_bytes()[:5] == b"%PDF-"
    with pytest.raises(ValueError, match="does not exist"):
        plot_torques(t, y, y, tmp_path / "absent" / "t.png")


def test_mismatched_arrays(tmp_path):
    with pytest.raises(ValueError, match="must be \\(N, n\\)"):
        plot_torques(np.arange(3.0), np.zeros((3, 2)), np.zeros((2, 2)), tmp_path / "x.png")
