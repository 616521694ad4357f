"""BLAS threads sized to the work: small and batched linear algebra runs on one BLAS thread.

OpenBLAS starts one thread per core in every process. For the small systems referee solves (Newton steps
on 100 x 100 Hessians, batches of them in a bootstrap, Wald and design information matrices) the threads
cost more than they give, and on a machine whose cores are busy with other work (a laptop, a CI runner,
two pytest workers) they wait on each other: eight batched solves of (100, 100, 100) took 29 s with two
threads on two busy cores and 2.4 s with one. Large solves (order above `SMALL_ORDER`) keep the pool.

`one_blas_thread` decorates a function whose linear algebra is small: while it runs, every BLAS library the
process has loaded (numpy's and scipy's OpenBLAS, MKL) is limited to one thread (threadpoolctl, about 1 ms a
call, so it wraps whole fits, never a step inside a loop). `blas_limit(order)` is the same as a context
manager that lets large problems (order > SMALL_ORDER) keep every thread.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager
from typing import Callable, Iterator, TypeVar

SMALL_ORDER = 500  # matrices of at most this order are solved on one BLAS thread

F = TypeVar("F", bound=Callable)


@contextmanager
def blas_limit(order: int | None = None) -> Iterator[None]:
    """Within the block, BLAS runs on one thread when the problem's matrices are of order <= SMALL_ORDER (or
    `order` is None: the caller knows they are small); a larger `order` leaves the pool as it is."""
    if order is not None and order > SMALL_ORDER:
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def one_blas_thread(fn: F) -> F:
    """Decorator: `fn` runs under `blas_limit()` (one BLAS thread); its signature and docstring are kept."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with blas_limit():
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def blas_threads() -> int:
    """The largest thread count any loaded BLAS library would use now (1 inside `blas_limit()`)."""
    from threadpoolctl import threadpool_info

    return max((int(i["num_threads"]) for i in threadpool_info() if i.get("user_api") == "blas"), default=1)
