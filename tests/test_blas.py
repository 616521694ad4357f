"""PyTensor linked to the bundled OpenBLAS (issue 53): no "could not link to a BLAS" warning, C-compiled BLAS ops
in the graph, and their results equal to numpy's."""

from __future__ import annotations

import subprocess
import sys

CHECK = """
import warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    import referee.models
    import numpy as np, pytensor, pytensor.tensor as pt
    A, B, v = pt.matrix("A"), pt.matrix("B"), pt.vector("v")
    f = pytensor.function([A, B, v], [A @ B, A @ v, pt.outer(v, v) + A])
    rng = np.random.default_rng(0)
    a, b, x = rng.random((40, 40)), rng.random((40, 40)), rng.random(40)
    ab, av, outer = f(a, b, x)
assert np.allclose(ab, a @ b) and np.allclose(av, a @ x) and np.allclose(outer, np.outer(x, x) + a)
ops = {type(n.op).__name__ for n in f.maker.fgraph.toposort()}
print(sorted(ops))
print([str(w.message).splitlines()[0] for w in caught if "BLAS" in str(w.message)])
print("scipy_openblas" in pytensor.config.blas__ldflags)
"""


def _run(env: dict) -> list[str]:
    """CHECK's lines in a fresh process, its PYTENSOR_FLAGS without the BLAS flags this process's own import of
    `referee.models` added (a child inherits them: the way worker processes get the same link)."""
    import os

    flags = ",".join(f for f in os.environ.get("PYTENSOR_FLAGS", "").split(",") if not f.startswith("blas__"))
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTENSOR_FLAGS": flags, **env})
    return done.stdout.strip().splitlines()


def test_pytensor_links_to_the_bundled_openblas_and_its_c_ops_agree_with_numpy():
    ops, warned, linked = _run({})
    assert linked == "True" and warned == "[]"
    assert "CGemv" in ops  # PyTensor's C op calling the BLAS routine (without a BLAS it falls back to numpy's Gemv)


def test_a_users_own_choice_is_kept():
    _, _, bundled = _run({"REFEREE_BLAS": "system"})
    assert bundled == "False"  # left to PyTensor's own search
