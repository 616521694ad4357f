"""A job's `Result` (`referee.result`) written to a results folder: each table as NAME.csv, each figure as
NAME.png and .svg, each document (text as it is, anything else as JSON), the posterior as idata.nc, the notes,
the diagnostics, then the manifest and provenance."""

from __future__ import annotations

from referee.result import Result
from referee.present.outputs import ResultsFolder


def write_result(result: Result, folder: ResultsFolder) -> dict:
    """Write `result` into `folder` and close it; returns the manifest."""
    for name, table in result.tables.items():
        folder.table(name, table)
    for name, draw in result.figures.items():
        folder.figure(name, draw())
    for name, document in result.documents.items():
        if isinstance(document, str):
            folder.text(name, document)
        else:
            folder.json(name.removesuffix(".json"), document)
    if result.idata is not None:
        folder.idata(result.idata)
    folder.notes(result.notes)
    folder.diagnostics(result.diagnostics)
    return folder.close()
