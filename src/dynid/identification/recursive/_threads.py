"""One BLAS thread for the filters' small matrices.

The recursions multiply and factorise matrices of a few tens to a hundred rows per sample
(numba's ``np.linalg`` calls scipy's LAPACK, its ``@`` BLAS). With the CPUs busy, OpenBLAS's
waiting threads made them up to 30x slower (a QR of 163 x 78: 7.3 ms against 0.23 ms on one
thread, the workplace's 2-core machine under a load of 3), as the excitation design saw
(``dynid.excitation.optimize``). ``threadpool_limits`` scans the loaded libraries on every
call (0.3 ms: a third of a 1 kHz period); one controller, made once, limits them in 6 us.
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def _controller():
    import scipy.linalg.cython_lapack  # noqa: F401  (numba's LAPACK: loaded before the scan)
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def one_blas_thread():
    """A context in which the BLAS libraries run on one thread."""
    return _controller().limit(limits=1, user_api="blas")
