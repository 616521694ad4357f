"""PyTensor linked to a BLAS: the OpenBLAS of the `scipy-openblas32` wheel (the build numpy and scipy ship), so
that a pip install needs no system BLAS and PyTensor never warns that it "could not link to a BLAS
installation".

That OpenBLAS names its routines with a `scipy_` prefix (`scipy_dgemm_`); PyTensor's C code calls the standard
names (`dgemm_`), so the link flags carry one `-D` per routine PyTensor calls (`ROUTINES`), renaming each call
to the prefixed symbol. The flags hold no comma (PyTensor's flag string splits on commas): the library is found
at run time because it is loaded first (`ctypes`, global symbols), and its own threads are set to one: the
models' matrices are small, and a thread per core in every worker process only contends on busy cores.

`link()` runs when `referee.models` is imported: before PyTensor is, it adds the flags to `PYTENSOR_FLAGS`;
after, it sets `pytensor.config.blas__ldflags`. A user's own `blas__ldflags` (in `PYTENSOR_FLAGS`) is kept, as
is everything when `REFEREE_BLAS=system` or the wheel is missing (PyTensor then looks for a BLAS itself).
"""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

ROUTINES = tuple(p + f for f in ("gemm", "gemv", "ger", "dot", "axpy", "scal", "copy", "swap") for p in "sd")
_LOADED: list = []  # the library, kept loaded for the process


def flags() -> str | None:
    """PyTensor's `blas__ldflags` for the bundled OpenBLAS (library folder, library, one rename per routine), or
    None when `scipy-openblas32` is not installed."""
    try:
        import scipy_openblas32
    except ImportError:
        return None
    folder = Path(scipy_openblas32.get_lib_dir())
    renames = " ".join(f"-D{r}_=scipy_{r}_" for r in ROUTINES)
    return f"-L{folder} -l{scipy_openblas32.get_library()} {renames}"


def _load() -> None:
    """Load the bundled OpenBLAS with global symbols (the compiled modules then find it by name) and set its own
    threads to one."""
    if _LOADED:
        return
    import scipy_openblas32

    folder = Path(scipy_openblas32.get_lib_dir())
    library = ctypes.CDLL(str(folder / f"lib{scipy_openblas32.get_library()}.so"), mode=ctypes.RTLD_GLOBAL)
    library.scipy_openblas_set_num_threads(1)
    _LOADED.append(library)


def link() -> bool:
    """Point PyTensor at the bundled OpenBLAS (see the module docstring); True when it was, False when the user's
    own choice (or a missing wheel, or another platform) leaves PyTensor to find a BLAS itself."""
    if os.environ.get("REFEREE_BLAS") == "system" or not sys.platform.startswith("linux"):
        return False
    current, given = os.environ.get("PYTENSOR_FLAGS", ""), flags()
    if given is None:
        return False
    if "blas__ldflags" in current:  # the user's own, or ours inherited by a worker process (which loads it too)
        if "scipy_openblas" not in current:
            return False
        _load()
        return True
    _load()
    if "pytensor" in sys.modules:
        import pytensor

        pytensor.config.blas__ldflags = given
    else:
        os.environ["PYTENSOR_FLAGS"] = ",".join(p for p in (current, f"blas__ldflags={given}") if p)
    return True
