"""`referee paper`: each seed paper's numbered figures and tables, made by the paper's own protocol.

One module per paper (`concordia`, `compact`, `aoa`) lists every numbered item of that paper and makes the
ones a store allows; `items` holds what they share: the manifest entry (`Item`) and its writer."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Paper:
    """A seed paper `referee paper NAME` reproduces: its title, its maker ('module:function', called as
    (store, writer, **options) -> (protocol, notes)) and the job options it reads (`referee.run.job_table`)."""

    name: str
    title: str
    make: str
    options: tuple[str, ...]


PAPERS: dict[str, Paper] = {p.name: p for p in (
    Paper("concordia", "the 2024 Concordia contest", "referee.papers.concordia:concordia_paper",
          ("finalists", "models", "sampling", "seed")),
    Paper("compact", "communicate-predict-act (COMPACT)", "referee.papers.compact:compact_paper", ("runner", "seed")),
    Paper("aoa", "Age of Agents EVAL 01", "referee.papers.aoa:aoa_paper", ("match", "seed")),
)}
