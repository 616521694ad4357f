"""BLAS threads sized to the work: small and batched solves run on one thread, large ones keep the pool."""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_limits

from referee.models.threads import SMALL_ORDER, blas_limit, blas_threads, one_blas_thread


def test_small_work_runs_on_one_blas_thread_and_large_work_keeps_the_pool():
    with threadpool_limits(limits=2, user_api="blas"):  # a pool of two, as on the 2-core machine
        before = blas_threads()
        with blas_limit():
            assert blas_threads() == 1
        with blas_limit(order=SMALL_ORDER + 1):
            assert blas_threads() == before
        assert blas_threads() == before  # the limit ends with its block

        @one_blas_thread
        def solve(a: np.ndarray) -> int:
            """Solve and report the threads."""
            np.linalg.solve(a, np.ones(len(a)))
            return blas_threads()

        assert solve(np.eye(3)) == 1 and solve.__doc__ == "Solve and report the threads."
        assert blas_threads() == before
