"""Checks at the public boundary: every user array passes through here once.

Errors name the argument and say what was expected and what was given.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray


def as_float_array(name: str, value: ArrayLike, *, allow_inf: bool = False) -> NDArray[np.float64]:
    """`value` as a float64 array (not a copy when it already is one).

    TypeError for non-real input (strings, objects, complex, booleans), ValueError for NaN/inf.
    """
    kind = np.asarray(value).dtype.kind if not isinstance(value, np.ndarray) else value.dtype.kind
    if kind not in "iuf":
        raise TypeError(f"`{name}` must be real numbers, got {np.asarray(value).dtype} values")
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise TypeError(f"`{name}` must be numeric, got {type(value).__name__}: {error}") from None
    bad = np.isnan(array) if allow_inf else ~np.isfinite(array)
    if bad.any():
        what = "NaN" if allow_inf else "NaN or inf"
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"`{name}` contains {what} (first at index {index})")
    return array


def frozen_copy(array: NDArray) -> NDArray:
    """A read-only copy: immutable objects never freeze (or alias) the caller's array."""
    out = np.array(array, dtype=np.float64)
    out.setflags(write=False)
    return out


def as_vector(name: str, value: ArrayLike, length: int, *, allow_inf: bool = False) -> NDArray:
    """A 1-D float array of exactly `length` entries (a scalar is broadcast)."""
    array = as_float_array(name, value, allow_inf=allow_inf)
    if array.ndim == 0:
        array = np.full(length, float(array))
    if array.shape != (length,):
        raise ValueError(f"`{name}` must have shape ({length},), got {array.shape}")
    return array


def as_batch(name: str, value: ArrayLike, n: int) -> tuple[NDArray[np.float64], tuple[int, ...]]:
    """Flatten a `(*, n)` array of joint values to `(N, n)`; also return the batch shape `*`."""
    array = as_float_array(name, value)
    if array.ndim == 0 or array.shape[-1] != n:
        raise ValueError(f"`{name}` must have shape (*, {n}) for {n} joints, got {array.shape}")
    batch_shape = array.shape[:-1]
    # C-contiguous and writeable: one array type for the compiled kernels (numba compiles a
    # separate specialisation for read-only arrays)
    return np.require(array.reshape(-1, n), requirements=["C", "W"]), batch_shape


def same_batch(names: tuple[str, ...], shapes: tuple[tuple[int, ...], ...]) -> None:
    """All joint-value arrays of one call must share their batch shape."""
    if any(shape != shapes[0] for shape in shapes[1:]):
        got = ", ".join(f"`{n}` {s}" for n, s in zip(names, shapes, strict=True))
        raise ValueError(f"batch shapes must agree, got {got}")


def strictly_increasing(name: str, t: NDArray) -> None:
    """Time stamps: 1-D and strictly increasing."""
    if t.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D (N,), got shape {t.shape}")
    steps = np.diff(t)
    if (steps <= 0).any():
        k = int(np.argmax(steps <= 0))
        raise ValueError(
            f"`{name}` must be strictly increasing; "
            f"{name}[{k + 1}] = {float(t[k + 1])!r} follows {name}[{k}] = {float(t[k])!r}"
        )


def as_link_table(name: str, value: ArrayLike, n_links: int) -> NDArray:
    """``(n_links, 10)`` link parameters (a flat ``10 n`` vector is accepted), finite."""
    table = as_float_array(name, value)
    if table.size != 10 * n_links or table.ndim not in (1, 2) or (
            table.ndim == 2 and table.shape != (n_links, 10)):
        raise ValueError(f"`{name}` must be ({n_links}, 10) link parameters, got shape "
                         f"{table.shape}")
    return table.reshape(n_links, 10)


def is_index(text: str) -> bool:
    """Whether ``text`` is a whole number in ASCII digits (a joint or link number): ``str.isdigit``
    also takes ``²``, ``１`` and ``١``, which ``int`` reads as 2, 1, 1 (a column ``q²`` is not
    joint 2)."""
    return text.isascii() and text.isdigit()
