"""Datasets: time series of joint positions, velocities, accelerations and torques."""

from __future__ import annotations

from dataclasses import dataclass, field

from numpy.typing import ArrayLike, NDArray

from dynid._validation import as_float_array, frozen_copy, strictly_increasing

__all__ = ["Dataset"]


@dataclass(frozen=True)
class Dataset:
    """``t`` (N,) [s], strictly increasing; ``q``, ``dq``, ``tau`` (N, n); ``ddq`` (N, n) or None.

    SI units (rad, rad/s, rad/s^2, N m). ``metadata`` says where the data come from (robot name,
    rate, noise, ...).
    """

    t: NDArray
    q: NDArray
    dq: NDArray
    tau: NDArray
    ddq: NDArray | None = None
    metadata: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        t = as_float_array("t", self.t)
        strictly_increasing("t", t)
        arrays = {"t": t}
        for name in ("q", "dq", "tau", "ddq"):
            value = getattr(self, name)
            if value is None:
                if name == "ddq":
                    continue
                raise ValueError(f"`{name}` is required")
            array = as_float_array(name, value)
            if array.ndim != 2 or array.shape[0] != t.size:
                raise ValueError(f"`{name}` must have shape ({t.size}, n), got {array.shape}")
            arrays[name] = array
        n = arrays["q"].shape[1]
        for name, array in arrays.items():
            if name != "t" and array.shape[1] != n:
                raise ValueError(f"`{name}` must have {n} joints like `q`, got {array.shape[1]}")
        for name, array in arrays.items():
            object.__setattr__(self, name, frozen_copy(array))

    @property
    def n_samples(self) -> int:
        return self.t.size

    @property
    def n_joints(self) -> int:
        return self.q.shape[1]

    @property
    def duration(self) -> float:
        return float(self.t[-1] - self.t[0])

    def select(self, index: ArrayLike) -> Dataset:
        """The samples at ``index`` (a slice, boolean mask or increasing integer indices)."""
        pick = {name: getattr(self, name) for name in ("t", "q", "dq", "tau", "ddq")}
        return Dataset(**{k: (v[index] if v is not None else None) for k, v in pick.items()},
                       metadata=dict(self.metadata))
