"""A job's options, typed once: `Option` (name, type, default, help, choices) and the checkers that turn a
command-line text or a notebook value into a checked value. Light (no pandas): the command line builds its
parsers from these before any heavy import.

Every checker takes a text (from the command line) or a value (from a notebook) and returns the value, or raises
ValueError saying what it must be.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from referee.models.registry import AUDIT_DRAWS, CHAINS, DRAWS, TUNE, suggest
from referee.run.scores.score_registry import SCORE_MODELS


@dataclass(frozen=True)
class Option:
    """One option of a job.

    name : its Python name (`referee.<job>(name=...)`; on the command line `--name-with-dashes`); default : its
    value when not given; help : one line for both; type : a checker (text or value -> value); choices : the
    values allowed; many : a list
    (repeatable on the command line); flag : on/off; required : no default; positional : a command-line
    positional (`nargs`: '?' one or none, '*' any); metavar : the command line's placeholder; group : the
    command line's option group it is listed under; cli : the command line's flag when it is not
    `--name-with-dashes`; nargs : a list given after one flag (e.g. 2: `--raters A B`).
    """

    name: str
    default: Any = None
    help: str = ""
    type: Callable[[Any], Any] | None = None
    choices: Sequence | None = None
    many: bool = False
    flag: bool = False
    required: bool = False
    positional: str | None = None
    metavar: str | None = None
    group: str | None = None
    cli: str | None = None
    nargs: int | str | None = None

    @property
    def flag_name(self) -> str:
        """The command line's flag: `cli` when given, else `--name-with-dashes`."""
        return self.cli or "--" + self.name.replace("_", "-")

    def check(self, value: Any, job: str) -> Any:
        """`value` checked: converted by `type` (each item of a list; one value of a list option becomes a list of
        one), within `choices`; ValueError naming the job, the option and what it must be."""
        if value is None or (self.flag and isinstance(value, bool)):
            return value
        try:
            if self.many:
                return [self._one(v) for v in (value if isinstance(value, (list, tuple)) else [value])]
            return self._one(value)
        except ValueError as exc:
            raise ValueError(f"{job}: {self.name}: {exc}") from None

    def _one(self, value: Any) -> Any:
        value = bounded(self.type(value)) if self.type is not None else value
        if self.choices is not None and value not in self.choices:
            raise ValueError(f"{value!r} is not one of {', '.join(map(str, self.choices))}"
                             f"{suggest(str(value), self.choices)}")
        return value


def _plain(value, what: str):
    """`value`, refused when it is text Python would read as a number but no command line means as one: digit
    separators ('1_0' is 10 to `int`), spaces inside, or text beyond the number."""
    if isinstance(value, str) and ("_" in value or value.strip() != value or not value):
        raise ValueError(f"expected {what}, got {value!r} (digits only: no separators or spaces)")
    return value


WHOLE_MAX = 2**32 - 1  # a whole-number option without a bound of its own takes no more (a seed's range)


def whole(value) -> int:
    """A whole number (text: digits only, no separators)."""
    _plain(value, "a whole number")
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise ValueError(f"expected a whole number, got {value!r}")
    try:
        found = int(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"expected a whole number, got {value!r}") from None
    return found


def bounded(found):
    """`found` (an option's checked value) where a whole number is at most WHOLE_MAX in size: the bound of every
    option with none of its own (10**30 refused at once); checked after the option's own checker, so that a bound
    of its own is the one named."""
    if isinstance(found, int) and not isinstance(found, bool) and abs(found) > WHOLE_MAX:
        raise ValueError(f"must be at most {WHOLE_MAX:,} in size, got {found:.3g}")
    return found


MAX_WORKERS = 256  # local worker processes: more than any machine's cores


def workers(value) -> int:
    """A number of local worker processes: a whole number from 1 to MAX_WORKERS."""
    found = positive_int(value)
    if found > MAX_WORKERS:
        raise ValueError(f"must be at most {MAX_WORKERS} (local worker processes), got {found:,}")
    return found


def positive_int(value) -> int:
    """A whole number from 1 to WHOLE_MAX."""
    found = whole(value)
    if found < 1:
        raise ValueError(f"must be at least 1, got {found}")
    return found


def folds(value) -> int:
    """A number of cross-validation folds: a whole number from 2 (one fold to test, the others to train)."""
    found = whole(value)
    if found < 2:
        raise ValueError(f"must be at least 2 (one fold to test, the others to train), got {found}")
    return found


def count(value) -> int:
    """A whole number from 0 to WHOLE_MAX."""
    found = whole(value)
    if found < 0:
        raise ValueError(f"must be 0 or more, got {found}")
    return found


SEED_MAX = 2**32 - 1  # numpy's RandomState (PyMC and nutpie seed through numpy) takes seeds 0 .. 2**32 - 1
MAX_DRAWS = 100_000  # draws or tuning steps per chain: 4 chains x 100,000 x 100 parameters is 320 MB of float64
MAX_CHAINS = 64
MAX_REPLICATES = 100_000  # bootstrap replicates: each holds a rating per agent (1,000 agents: 0.8 GB)


def _at_most(found: int, limit: int, why: str) -> int:
    if found > limit:
        raise ValueError(f"must be at most {limit:,} ({why}), got {found:,}")
    return found


def seed(value) -> int:
    """A seed: a whole number from 0 to 2**32 - 1 (numpy's RandomState, through which PyMC and nutpie seed)."""
    found = whole(value)
    if not 0 <= found <= SEED_MAX:
        raise ValueError(f"must be from 0 to {SEED_MAX:,} (numpy's seeds), got {str(found)[:30]}")
    return found


def draws(value) -> int:
    """Draws per chain: a whole number from 1 to MAX_DRAWS (the posterior is held in memory)."""
    return _at_most(positive_int(value), MAX_DRAWS, "the posterior is held in memory")


def tune(value) -> int:
    """Tuning steps per chain: a whole number from 1 to MAX_DRAWS (with none, NUTS samples with a step size never
    adapted: nutpie cannot start, PyMC's may crawl for hours)."""
    return _at_most(positive_int(value), MAX_DRAWS, "tuning steps per chain")


def chains(value) -> int:
    """Chains: a whole number from 1 to MAX_CHAINS."""
    return _at_most(positive_int(value), MAX_CHAINS, "chains")


def replicates(value) -> int:
    """Bootstrap replicates: a whole number from 0 to MAX_REPLICATES (each holds a rating per agent in memory)."""
    return _at_most(count(value), MAX_REPLICATES, "every replicate is held in memory")


def some_replicates(value) -> int:
    """Bootstrap replicates, at least 1."""
    return _at_most(positive_int(value), MAX_REPLICATES, "every replicate is held in memory")


MAX_K = 1_000.0  # Elo points a match may move a rating (the scale is 400 points a factor of 10 in the odds)
MAX_INTENSITY = 700.0  # alpha-Rank's exp(alpha x payoff difference) overflows float64 past about 709
MAX_BUDGET = 100_000  # matches a plan proposes: each is scored against every pair's covariance
MAX_SIMULATIONS = 100_000  # simulated tournaments of a power curve point
MAX_CALIBRATIONS = 10_000  # simulate-and-fit cycles of a calibration: each is a Bayesian fit
MAX_AGENTS = 100_000  # agents of a simulated runner: its matches and truth are built in memory
MAX_ANCHOR = 100_000.0  # |RATING| of --anchor, Elo points


def _float_at_most(value, limit: float, why: str) -> float:
    found = positive_float(value)
    if found > limit:
        raise ValueError(f"must be at most {limit:,g} ({why}), got {value}")
    return found


def elo_k(value) -> float:
    """Online Elo's K factor: a positive number of Elo points, at most MAX_K."""
    return _float_at_most(value, MAX_K, "Elo points: one match would move a rating by more than the whole scale")


def intensity(value) -> float:
    """alpha-Rank's ranking intensity: a positive number at most MAX_INTENSITY."""
    return _float_at_most(value, MAX_INTENSITY, "exp(alpha x a payoff difference) overflows past it")


def budget(value) -> int:
    """Matches a plan proposes: a whole number from 1 to MAX_BUDGET."""
    return _at_most(positive_int(value), MAX_BUDGET, "each match is scored against every pair's covariance")


def simulations(value) -> int:
    """Simulations of a power curve's point: a whole number from 1 to MAX_SIMULATIONS."""
    return _at_most(positive_int(value), MAX_SIMULATIONS, "each simulates and fits a tournament")


def calibrations(value) -> int:
    """Simulate-and-fit cycles of a calibration: a whole number from 1 to MAX_CALIBRATIONS."""
    return _at_most(positive_int(value), MAX_CALIBRATIONS, "each cycle is a Bayesian fit")


def agent_count(value) -> int:
    """Agents of a simulated runner: a whole number from 1 to MAX_AGENTS."""
    return _at_most(positive_int(value), MAX_AGENTS, "every agent's matches and truth are built in memory")


MAX_SIMULATED = 1_000_000  # games, judgments or matches a simulator writes: each is a record of its logs
MAX_REPEATS = 1_000  # repetitions (or test runs) per agent and scenario of a simulated run
MAX_EVENT_SCALE = 1_000.0  # a season's counters are Poisson draws whose mean grows with the scale


def simulated(value) -> int:
    """Games, judgments or matches a simulator writes: a whole number from 1 to MAX_SIMULATED."""
    return _at_most(positive_int(value), MAX_SIMULATED, "each is a record written to the logs")


def repeats(value) -> int:
    """Repetitions per agent and scenario of a simulated run: a whole number from 1 to MAX_REPEATS."""
    return _at_most(positive_int(value), MAX_REPEATS, "each is a match of every agent in every scenario")


def some_repeats(value) -> int:
    """Like `repeats`, 0 allowed (no test runs)."""
    return _at_most(count(value), MAX_REPEATS, "each is a match of every agent in every scenario")


def event_scale(value) -> float:
    """A season simulator's multiplier of every counter: a positive number at most MAX_EVENT_SCALE."""
    return _float_at_most(value, MAX_EVENT_SCALE, "the counters are Poisson draws whose mean grows with it")


def rare_agents(value) -> int:
    """Agents of a simulated tournament that play one game each: a whole number from 0 to MAX_AGENTS."""
    return _at_most(count(value), MAX_AGENTS, "every agent's matches and truth are built in memory")


def fraction(value) -> float:
    """A number from 0 to 1."""
    return _number_where(value, lambda v: 0 <= v <= 1, "a number from 0 to 1")


def price(value) -> float:
    """A price (USD per million tokens): a finite number, 0 or more."""
    return _number_where(value, lambda v: math.isfinite(v) and v >= 0, "a finite price, 0 or more")


def name_text(value) -> str:
    """A name (of a measure, a column): text that is not empty or only spaces, stripped."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected a name, got {value!r}")
    return value.strip()


def _number_where(value, ok, what: str) -> float:
    _plain(value, "a number")
    try:
        found = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"expected a number, got {value!r}") from None
    if not ok(found):
        raise ValueError(f"must be {what}, got {value}")
    return found


def number_or_nan(text: str) -> float:
    """`text` as a float, or NaN when it is not a number (for a form whose checks then name it)."""
    try:
        return float(text)
    except ValueError:
        return float("nan")


def positive_float(value) -> float:
    """A positive finite number."""
    return _number_where(value, lambda v: math.isfinite(v) and v > 0, "a positive finite number")


def probability(value) -> float:
    """A probability in [0, 1)."""
    return _number_where(value, lambda v: 0 <= v < 1, "a probability in [0, 1)")


def finite_float(value) -> float:
    """A finite number."""
    return _number_where(value, math.isfinite, "a finite number")


def prior_sd(value) -> float | None:
    """A positive number of Elo points, or 'none' (no prior)."""
    return None if value is None or str(value).strip().lower() == "none" else positive_float(value)


def dims_range(value) -> range:
    """'D' or 'LOW-HIGH' (1 <= LOW <= HIGH <= 7), or a range or list of dimensions: the range of dimensions."""
    if isinstance(value, (range, list, tuple)):
        found = list(value)
        if not found or not all(isinstance(d, int) and 1 <= d <= 7 for d in found):
            raise ValueError(f"dimensions must be whole numbers from 1 to 7, got {found}")
        return range(min(found), max(found) + 1)
    lo, sep, hi = str(value).partition("-")
    try:
        start, stop = int(lo), int(hi if sep else lo)
    except ValueError:
        raise ValueError(f"expected D or LOW-HIGH (e.g. 1-7), got {value!r}") from None
    if not 1 <= start <= stop <= 7:
        raise ValueError(f"dimensions must satisfy 1 <= LOW <= HIGH <= 7, got {value!r}")
    return range(start, stop + 1)


def scheduler(value) -> str:
    """'local:N' with N a whole number from 1, or a Dask address PROTOCOL://HOST:PORT (or HOST:PORT)."""
    text = str(value)
    if text.startswith("local:"):
        n = text.split(":", 1)[1]
        if not n.isdigit() or int(n) < 1:
            raise ValueError(f"{text!r}: local:N needs N, the number of worker processes, to be a whole number from "
                             "1 (e.g. local:2)")
        return text
    if not re.fullmatch(r"(?:[a-z][a-z0-9+.-]*://)?[^\s:/]+:\d{1,5}", text):
        raise ValueError(f"{text!r} is not a scheduler address: give tcp://HOST:PORT (an existing Dask scheduler) "
                         "or local:N (a local cluster of N processes)")
    _reachable(text)
    return text


SCHEDULER_PROBE = 3.0  # seconds a scheduler address has to accept a connection before any work starts


def _reachable(address: str) -> None:
    """ValueError in words when nothing accepts a TCP connection at a scheduler address within SCHEDULER_PROBE
    seconds (a closed port, an unroutable host), so that the command refuses before any work instead of failing
    after distributed's own long retries; whether what answers speaks Dask is checked when the client connects
    (`Executor.client`, with a timeout)."""
    import socket

    host, port = address.split("://", 1)[-1].rsplit(":", 1)
    if not 0 < int(port) < 65536:
        raise ValueError(f"{address!r}: the port must be from 1 to 65535")
    try:
        with socket.create_connection((host, int(port)), timeout=SCHEDULER_PROBE):
            pass
    except OSError as exc:
        why = "no answer" if isinstance(exc, TimeoutError) else exc.strerror or str(exc)
        raise ValueError(f"{address!r}: no Dask scheduler can be reached there ({why} within {SCHEDULER_PROBE:g} s); "
                         "start one (dask scheduler) or give local:N for a local cluster") from None


def path(value) -> Path:
    """A file or folder path; ValueError for an empty one (`Path('')` is the current folder, which nobody names
    by typing nothing)."""
    if not str(value).strip():
        raise ValueError("expected a path, got nothing")
    return Path(value)


def toml_path(value) -> Path:
    """A TOML file's path (a catalogue, mapping, formula): where something is there, it must be a regular file of
    at most `referee.io.toml_file.TOML_CAP` bytes (`referee.io.toml_file.unreadable`: a device, a FIFO or a
    folder would never be read to an end); a missing file is the reader's to say."""
    from referee.io.toml_file import TOML_CAP, unreadable

    found = path(value)
    why = unreadable(found, "TOML", TOML_CAP)
    if why:
        raise ValueError(why)
    return found


def folder(value) -> Path:
    """A folder's path: an existing folder, or a path where one can be made (nothing there yet); ValueError for a
    path that holds a file, a device or a FIFO."""
    found = Path(value)
    if not str(value).strip():
        raise ValueError("expected a folder's path, got nothing")
    if found.exists() and not found.is_dir():
        raise ValueError(f"{str(value)[:200]} is a file, not a folder: give a folder (or a new path)")
    return found


def agent_list(value) -> list[str]:
    """'A,B,...' or a list of names: the names, stripped; ValueError when it names no agent ('' or ',')."""
    items = value.split(",") if isinstance(value, str) else list(value)
    names = [str(a).strip() for a in items if str(a).strip()]
    if not names:
        raise ValueError(f"expected one or more agent names separated by commas, got {value!r}")
    return names


def pairs(items, option: str, form: str) -> dict[str, str]:
    """'KEY=VALUE' texts (or a dict) -> {key: value}; ValueError naming `option` and its `form` otherwise."""
    if isinstance(items, dict):
        return {str(k): str(v) for k, v in items.items()}
    out = {}
    for pair in items or []:
        key, sep, value = str(pair).partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ValueError(f"{option} takes {form}, got {pair!r}")
        out[key.strip()] = value.strip()
    return out


SAMPLING = "sampling (every Bayesian fit; the defaults converge at contest scale)"
SWEEP = "where the sweep runs (bootstrap blocks, folds, simulations; same results anywhere)"

SEED = Option("seed", 0, "seed of every random choice (default 0; 0 to 2**32 - 1)", type=seed)
RUNNER = Option("runner", None, "use this runner's matches (required when the store holds several)")
PHASE = Option("phase", None, "only matches of this contest phase (repeatable: several phases pooled; default every "
               "match)", many=True, metavar="NAME")
DATA = (RUNNER, PHASE,
        Option("parallel", False, "add COMPACT's parallel-game comparisons (same game, size, framing and "
               "communication, identical opponents)", flag=True),
        Option("where", None, "only matches with this value, e.g. communication=true (repeatable)", many=True,
               metavar="COLUMN=VALUE"),
        SEED)
def sampling_options(draws_default: str, tune_default: str) -> tuple[Option, ...]:
    """The sampling options (draws, tune, chains, sampler), their help stating `draws_default` and
    `tune_default` (the defaults that run when they are not given, in words: one model's or every model's)."""
    return (
        Option("draws", None, f"draws per chain after tuning (default {draws_default}; at most {MAX_DRAWS:,})",
               type=draws, group=SAMPLING),
        Option("tune", None, f"tuning steps per chain (default {tune_default}; at most {MAX_DRAWS:,})", type=tune,
               group=SAMPLING),
        Option("chains", None, f"chains (default {CHAINS}; R-hat needs several; at most {MAX_CHAINS})", type=chains,
               group=SAMPLING),
        Option("sampler", "auto", "auto (default): nutpie when installed, else PyMC's NUTS",
               choices=("auto", "pymc", "nutpie"), group=SAMPLING))


_MODEL_DEFAULTS = {k: ", ".join(f"{n} {getattr(m, k)}" for n, m in SCORE_MODELS.items()) for k in ("draws", "tune")}
SAMPLING_OPTIONS = sampling_options(
    f"{DRAWS}; `referee fit MODEL`: {_MODEL_DEFAULTS['draws']}; the audit's regression {AUDIT_DRAWS}",
    f"{TUNE}; `referee fit MODEL`: {_MODEL_DEFAULTS['tune']}")


def sampling_defaults_markdown() -> str:
    """The sampling defaults that run, per model, as a Markdown table (the manual, docs/journeys/contest.md, carries it between its
    `sampling-defaults` markers; tests/test_job_table.py holds the two together): each `referee fit MODEL`'s
    own (`ScoreModel.draws`, `.tune`), the audit's regression and every other Bayesian fit's."""
    rows = [f"| `referee fit {name}` | {m.draws:,} | {m.tune:,} | {CHAINS} |" for name, m in SCORE_MODELS.items()]
    rows.append(f"| the audit's Bayesian regression (`referee audit`) | {AUDIT_DRAWS:,} | {TUNE:,} | {CHAINS} |")
    rows.append(f"| every other fit (`referee ratings --method bayes-bt`, `referee calibrate`) | {DRAWS:,} | {TUNE:,} | "
                f"{CHAINS} |")
    return "\n".join(["| model | draws per chain | tuning steps | chains |", "|---|---|---|---|"] + rows)


SWEEP_OPTIONS = (
    Option("jobs", 1, "local worker processes (default 1: this process)", type=workers, group=SWEEP),
    Option("scheduler", None, "an existing Dask scheduler, or local:N for a Dask LocalCluster of N processes",
           type=scheduler, metavar="tcp://HOST:PORT|local:N", group=SWEEP),
    Option("exchange", None, "folder the sweep's inputs are written to as Parquet; every worker must reach it "
           "(default: a temporary folder; give a shared path for a remote cluster)", type=folder, metavar="DIR",
           group=SWEEP))


def sampling(options: dict) -> dict:
    """The sampling options given (draws, tune, chains, sampler); the ones left out are each model's default."""
    return {o.name: options[o.name] for o in SAMPLING_OPTIONS if options.get(o.name) is not None}
