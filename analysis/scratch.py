"""One scratch folder per command, removed when it ends.

Libraries a fit calls write temporary files and never remove them (PyTensor writes each generated numba source
to `tempfile.NamedTemporaryFile(delete=False)`: 26 files a fit, and more in every worker), so a command runs with
its own folder as the temporary directory (`TMPDIR` for the worker processes it starts, `tempfile.tempdir` for
itself) and removes it, with everything written there, when it ends however it ends short of a SIGKILL.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator


@contextlib.contextmanager
def scratch_folder() -> Iterator[str]:
    """A new folder under the current temporary directory as the temporary directory while the block runs (this
    process and any process it starts); removed, with its contents, after; the previous settings restored."""
    import multiprocessing.util

    # multiprocessing's own folder (pymp-*) is made now, where the temporary directory was: its finalizer removes
    # it when the interpreter exits, after this block has removed ours, so it must not be inside ours
    multiprocessing.util.get_temp_dir()
    folder = tempfile.mkdtemp(prefix="referee-scratch-")
    before_env, before_dir = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"], tempfile.tempdir = folder, folder
    try:
        yield folder
    finally:
        if before_env is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = before_env
        tempfile.tempdir = before_dir
        shutil.rmtree(folder, ignore_errors=True)
