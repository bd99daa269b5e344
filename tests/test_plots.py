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


def test_every_figure_renders_without_a_display(tmp_path, rng):
    from dynid.friction import Sigmoid
    from dynid.plots import (
        comparison_figure,
        excitation_figure,
        figure_png,
        friction_figure,
        parameters_figure,
        save_figure,
        torques_figure,
    )
    from dynid.robot import JointLimits

    t = np.linspace(0, 2, 300)
    y = np.sin(np.outer(t, [1.0, 2.0, 3.0]))
    figures = [
        torques_figure(t, y, 0.9 * y, rigid=0.8 * y),
        friction_figure(y, 0.1 * np.sign(y), {"sigmoid": Sigmoid([0.2] * 3, [10.0] * 3,
                                                                 [0.0] * 3).torque}),
        parameters_figure(["a", "b", "c"], [1.0, -0.01, 1e-4], [0.1, 0.001, 1e-3]),
        comparison_figure(["cad", "ols", "cls3"], rng.uniform(0.1, 1.0, (3, 6))),
        excitation_figure(t, 0.5 * y[:, :2], y[:, :2], -y[:, :2],
                          JointLimits(*(np.full(2, v) for v in (-1.0, 1.0, 2.0, 2.0, 10.0))),
                          condition_number=42.0),
    ]
    for k, figure in enumerate(figures):
        assert figure_png(figure)[:4] == b"\x89PNG"
        assert save_figure(figure, tmp_path / f"{k}.svg").read_text().lstrip().startswith("<")
    with pytest.raises(ValueError, match="`errors` must be"):
        comparison_figure(["a", "b"], np.zeros((3, 2)))
