"""The one contract every estimator in `models` keeps: a typed result, and one way to sample.

Every fitting function returns a `FitResult` (or a subclass that adds what its family needs):

- `.table()`: the tidy result (a DataFrame; one row per agent, parameter, tag ... as the family states);
- `.diagnostics`: a dict that always holds `converged` (bool) and, for iterative point fits, `iterations`,
  for Bayesian fits `max_r_hat`, `min_ess_bulk`, `min_ess_tail`, `divergences`, `chains`, `draws`;
- `.notes`: every warning raised while fitting, in plain words, plus the family's own remarks
  (identifiability, fallbacks);
- `.idata`: the ArviZ InferenceData where the fit is Bayesian, else None.

`collect_notes()` is how a fit gathers its warnings: they are recorded into the notes and then raised
again to the caller, so a warning inside a fit reaches the user as a warning *and* in the result.
`sample()` is the only place that calls `pm.sample` (or nutpie, through `referee.models.compiled`): it resolves the sampler, samples, and runs the
convergence diagnostics, so no Bayesian model skips them.
"""

from __future__ import annotations

import contextlib
import re
import warnings
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np
import pandas as pd

# the sampling defaults, with their reasons, live in the registry (light, read by the command line)
from referee.models import progress
from referee.models.registry import CHAINS, DRAWS, TUNE
from referee.models.registry import LAYOUT_DRAWS, LAYOUT_TUNE  # noqa: F401  (re-exported for the fits)

RHAT_LIMIT = 1.01
# the standard every Bayesian fit is held to (issue 15): R-hat <= 1.01, bulk and tail ESS >= 400 (100 per
# chain with 4 chains, Vehtari et al. 2021), no divergent transition
ESS_LIMIT = 400
SAMPLERS = ("auto", "pymc", "nutpie")


class ConvergenceWarning(UserWarning):
    """A fit did not converge (R-hat above 1.01, ESS below 400, divergences, or an optimiser that stopped early):
    its numbers are not to be trusted as they stand."""


@dataclass
class FitResult:
    """The result of any fit: what was fitted, its diagnostics, its notes and (if Bayesian) its posterior.

    model : the family's name ('bt', 'tag-effects', ...).
    diagnostics : see the module docstring; `converged` is always present.
    notes : plain-words warnings and remarks, in the order raised.
    idata : arviz.InferenceData for Bayesian fits, else None.
    """

    model: str = ""
    diagnostics: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    idata: object | None = None

    def table(self) -> pd.DataFrame:
        """The tidy result table; each family documents its columns."""
        raise NotImplementedError(f"{type(self).__name__} does not define table()")

    @property
    def converged(self) -> bool:
        """True when the diagnostics say the fit converged; False when they do not say (a fit that reports no
        convergence is never taken as converged)."""
        return bool(self.diagnostics.get("converged", False))


class ReadsAsMapping:
    """Mixin for a result that also reads as the mapping held in the attribute named by `MAPPING`:
    `result["key"]`, `"key" in result`, `result.get("key", default)`."""

    MAPPING = "values"

    def __getitem__(self, key):
        return getattr(self, self.MAPPING)[key]

    def __contains__(self, key) -> bool:
        return key in getattr(self, self.MAPPING)

    def get(self, key, default=None):
        return getattr(self, self.MAPPING).get(key, default)


# warnings about a library's own code, not the user's data or the fit, each with why it says nothing to the user
LIBRARY_NOISE = {
    "NumbaPerformanceWarning": "numba on the code PyTensor generates for nutpie ('np.dot() is faster on contiguous "
                               "arrays'): a matter of PyTensor's generated code, the same for every model and data",
}


def heard(caught: list) -> list:
    """The recorded warnings a user should hear: all but `LIBRARY_NOISE`. Every place that records warnings
    raised inside a fit passes them through here."""
    return [w for w in caught if w.category.__name__ not in LIBRARY_NOISE]


@contextlib.contextmanager
def collect_notes(notes: list[str]) -> Iterator[list[str]]:
    """Record every warning raised inside the block into `notes` (as 'Category: message'), then re-raise
    each one to the caller's warning filters, so nothing is silenced. Yields `notes`."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield notes
    caught = heard(caught)
    for w in caught:
        text = f"{w.category.__name__}: {w.message}"
        if text not in notes:
            notes.append(text)
    for w in caught:  # re-raised as referee's own, so that a display prints the message, not a source line
        warnings.warn_explicit(w.message, w.category, "referee", 0, module="referee")


def iterative_diagnostics(iterations: int, max_iter: int, converged: bool, what: str) -> dict:
    """Diagnostics of an iterative point fit; warns (ConvergenceWarning) when it did not converge.

    iterations : steps taken; max_iter : the cap; converged : whether the stopping rule was met;
    what : the fit's name, used in the warning. Returns {'converged', 'iterations', 'max_iter'}.
    """
    if not converged:
        warnings.warn(f"NOT CONVERGED: {what} stopped after {iterations} iterations (cap {max_iter}) without "
                      "meeting its tolerance; the estimates are the last iterate, not an optimum",
                      ConvergenceWarning, stacklevel=3)
    return {"converged": bool(converged), "iterations": int(iterations), "max_iter": int(max_iter)}


def lbfgs_converged(res) -> bool:
    """Whether a scipy L-BFGS-B result converged: its own `success`, or its 'abnormal termination in line
    search' at a gradient already below 1e-5 (machine precision reached: an optimum in all but name)."""
    if res.success:
        return True
    return bool(np.abs(res.jac).max() < 1e-5) if getattr(res, "jac", None) is not None else False


def resolve_sampler(sampler: str) -> str:
    """'auto' means nutpie when it is installed (it adapts a low-rank mass matrix, which these correlated
    posteriors need), else PyMC's NUTS; 'pymc' and 'nutpie' force one."""
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
    if sampler != "auto":
        return sampler
    try:
        import nutpie  # noqa: F401
    except ImportError:
        return "pymc"
    return "nutpie"


def progress_enabled() -> bool:
    """Whether samplers draw their own progress display: a terminal's bar or a notebook's widget
    (`referee.models.progress`: the command line sets it when stderr is a terminal and neither --json nor --quiet
    is given; a notebook call with progress=True; library calls stay quiet)."""
    return progress.mode() in ("bar", "notebook")


def sample(model, var_names: list[str], draws: int = DRAWS, tune: int = TUNE, chains: int = CHAINS, seed: int = 0,
           sampler: str = "auto", target_accept: float | None = None, low_rank: bool = False, reuse: bool = False,
           density=None):
    """Sample a PyMC model with NUTS and diagnose it: the one way referee draws from a posterior.

    Parameters
    ----------
    model : a pymc.Model. var_names : the parameters the diagnostics cover.
    draws, tune, chains : per chain; seed : the sampler's seed (the same seed gives the same draws).
    sampler : 'auto' | 'pymc' | 'nutpie' (see `resolve_sampler`). target_accept : the step size's target
        acceptance rate (None: each sampler's default, nutpie's 0.8 and PyMC's 0.9 as referee sets it); a model
        whose default fits diverge at the default passes a higher one.
    low_rank : nutpie adapts a low-rank modified mass matrix (for posteriors with a few strongly correlated
        directions, such as an intercept shared by every contrast); PyMC's NUTS has none and ignores it.
    reuse : nutpie samples through the model's structure compiled once per process for any data
        (`referee.models.compiled_structure`; the model's data must be `pm.Data`), so a second fit of the same
        kind on other data starts at once; PyMC's NUTS ignores it.
    density : the model's log-density written out by hand (`referee.models.scores.outcome_density`), which nutpie
        samples in place of compiling the model; PyMC's NUTS samples the model itself.

    Returns
    -------
    (idata, diagnostics): arviz.InferenceData and the dict of `diagnose` (which warns when not converged),
    plus the sampler, `compile_seconds` and `sampling_seconds` apart and `compiled_model_reused`.
    """
    from referee.models.compiled import sample_nutpie, sample_pymc

    for name, value in (("draws", draws), ("tune", tune), ("chains", chains)):
        if int(value) < (0 if name == "tune" else 1):
            raise ValueError(f"{name} must be at least {0 if name == 'tune' else 1}, got {value}")
    which = resolve_sampler(sampler)
    if which == "nutpie" and tune < 1:  # nutpie's adaptation panics (a Rust panic, no Python error) at 0 steps
        if sampler == "nutpie":
            raise ValueError("--tune 0 with --sampler nutpie: nutpie's adaptation needs at least one tuning step; "
                             "give --tune 1 or more, or --sampler pymc")
        which = "pymc"  # 'auto': PyMC's NUTS samples with no tuning, as asked
    shown = progress_enabled()
    if which == "nutpie":  # the compiled model is kept per structure (`referee.models.compiled`)
        idata, timings = sample_nutpie(model, draws, tune, chains, seed, shown, low_rank, target_accept or 0.8,
                                       reuse=reuse, density=density)
    else:
        idata, timings = sample_pymc(model, draws, tune, chains, seed, shown, target_accept or 0.9)
    diagnostics = diagnose(idata, var_names)
    diagnostics["sampler"] = which
    diagnostics.update(timings)
    if progress.mode() == "lines" and timings["sampling_seconds"] >= progress.LINE_SECONDS:
        progress.say(f"sampling: {chains * (draws + tune):,} steps in {progress.seconds(timings['sampling_seconds'])}, "
                     f"{diagnostics['divergences']} divergent after tuning")
    return idata, diagnostics


def diagnose(idata, var_names: list[str]) -> dict:
    """Max R-hat, min bulk and tail ESS over `var_names`, divergences, chains, draws, `converged`.

    `converged` is the standard: R-hat <= 1.01, bulk and tail ESS >= 400, no divergence. Warns
    (ConvergenceWarning) when it is not met, so that no fit's numbers are printed without it being said.
    """
    import arviz as az

    rhat = az.rhat(idata, var_names=var_names)
    ess_bulk = az.ess(idata, var_names=var_names, method="bulk")
    ess_tail = az.ess(idata, var_names=var_names, method="tail")
    divergent = int(idata.sample_stats["diverging"].sum()) if "diverging" in idata.sample_stats else 0
    out = {
        "max_r_hat": float(max(np.nanmax(rhat[v].values) for v in var_names)),
        "min_ess_bulk": float(min(np.nanmin(ess_bulk[v].values) for v in var_names)),
        "min_ess_tail": float(min(np.nanmin(ess_tail[v].values) for v in var_names)),
        "divergences": divergent,
        "chains": int(idata.posterior.sizes["chain"]),
        "draws": int(idata.posterior.sizes["draw"]),
    }
    low_ess = min(out["min_ess_bulk"], out["min_ess_tail"])
    out["converged"] = bool(out["max_r_hat"] <= RHAT_LIMIT and divergent == 0 and low_ess >= ESS_LIMIT)
    if not out["converged"]:
        warnings.warn(
            f"NOT CONVERGED: max R-hat {out['max_r_hat']:.3f} (limit {RHAT_LIMIT}), {divergent} divergent "
            f"transitions, min bulk ESS {out['min_ess_bulk']:.0f} and tail ESS {out['min_ess_tail']:.0f} (limit "
            f"{ESS_LIMIT}); run longer chains (--draws/--tune) or reparameterise before reading these numbers",
            ConvergenceWarning, stacklevel=2)
    return out


def summary_table(idata, var_names: list[str], hdi_prob: float = 0.94) -> pd.DataFrame:
    """parameter, mean, sd, hdi_low, hdi_high, r_hat, ess_bulk, ess_tail for every element of `var_names`.

    Parameters are named like ArviZ does, e.g. `beta[persuasion]`, `slope[agent_01, negotiation]`.
    """
    import arviz as az

    table = az.summary(idata, var_names=var_names, hdi_prob=hdi_prob, round_to="none")
    low, high = [c for c in table.columns if c.startswith("hdi_")][:2]
    out = pd.DataFrame({
        "parameter": table.index, "mean": table["mean"].to_numpy(), "sd": table["sd"].to_numpy(),
        "hdi_low": table[low].to_numpy(), "hdi_high": table[high].to_numpy(), "r_hat": table["r_hat"].to_numpy(),
        "ess_bulk": table["ess_bulk"].to_numpy(), "ess_tail": table["ess_tail"].to_numpy(),
    })
    return out.reset_index(drop=True)


_NUMBER = re.compile(r"\d+(?:\.\d+)?")  # warnings alike but for their numbers are one kind
_ASIDE = re.compile(r" \((?=[a-z])")


@contextlib.contextmanager
def summarised_warnings(what: str, notes: list[str] | None = None) -> Iterator[None]:
    """For loops of many fits (bootstrap replicates, folds): record the warnings raised inside, then raise
    each distinct one once more to the caller, saying how often it arose ('in 37 fits of <what>: ...'),
    and append that sentence to `notes` when given. Nothing is silenced; repeats are counted, not repeated."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    counts: dict[tuple[type, str], list] = {}  # one entry per message shape: its numbers may vary by fit
    for w in heard(caught):
        message = _ASIDE.split(str(w.message), 1)[0]  # without its first parenthetical aside, e.g. "(the agent won"
        entry = counts.setdefault((w.category, _NUMBER.sub("#", message)), [0, message, False])
        entry[0] += 1
        entry[2] |= message != entry[1]
    for (category, _), (count, message, varied) in counts.items():
        text = f"{count} time(s) during {what}: {message}" + (" (first of them; the numbers vary)" if varied else "")
        if notes is not None:
            notes.append(f"{category.__name__}: {text}")
        warnings.warn(text, category, stacklevel=3)
