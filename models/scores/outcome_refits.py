"""How an outcome model's fit becomes one that converged (`referee.models.scores.outcome_glm.fit_outcomes`): a fit
that diverged is refitted with the other coding for the effects in the funnel only, each effect's coding and why
named in a note; a fit short of the ESS or R-hat limits with nothing diverging is continued with more draws on the
same compiled structure. `attempt(coding, draws)` is the caller's one fit under a coding (an `_Attempt`: idata,
diagnostics, notes)."""

from __future__ import annotations

import numpy as np


def converged_fit(attempt, coding: dict[str, bool], modelled: tuple[str, ...], draws: int, extend: bool = True):
    """(the fit that stands, its coding): `attempt(coding)`, then `refit_funnel` where it diverged, then, with
    `extend` (the caller's draws are at least the defaults: fewer were asked for on purpose, and stay), twice the
    draws where it is still short of the limits with no divergence (`fit.diagnostics['converged']` False)."""
    fit = attempt(coding)
    if fit.diagnostics["divergences"] > 0 and any(e in modelled for e in coding):
        fit, coding = refit_funnel(fit, coding, modelled, attempt)
    if extend and not fit.diagnostics.get("converged", True) and fit.diagnostics["divergences"] == 0:
        longer = attempt(coding, 2 * draws)
        d = fit.diagnostics
        longer.notes[:0] = [n for n in fit.notes if n.startswith(("refitted", "a refit"))]  # what was recoded stands
        longer.notes.append(f"continued with {2 * draws} draws per chain: the fit with {draws} ended short of the "
                            f"limits (min ESS bulk {d.get('min_ess_bulk', float('nan')):.0f}, tail "
                            f"{d.get('min_ess_tail', float('nan')):.0f}, max R-hat {d.get('max_r_hat', float('nan')):.3f}) "
                            "with no divergence")
        fit = longer
    return fit, coding


def funnel_effects(idata, coding: dict[str, bool], modelled: tuple[str, ...]) -> dict[str, float]:
    """{effect: how far its scale sits lower at the divergent draws}: for each coded, modelled effect, the mean of
    log sigma over the divergent draws minus its mean over all draws, in posterior standard deviations of log
    sigma (a funnel's signature: divergences where the scale is small). Empty without divergences."""
    stats = idata.sample_stats
    if "diverging" not in stats:
        return {}
    divergent = stats["diverging"].to_numpy().astype(bool)
    if not divergent.any():
        return {}
    out = {}
    for e in coding:
        name = f"sigma_{e}"
        if e not in modelled or name not in idata.posterior:
            continue
        log_sigma = np.log(idata.posterior[name].to_numpy())
        spread = float(log_sigma.std()) or 1.0
        out[e] = float((log_sigma[divergent].mean() - log_sigma.mean()) / spread)
    return out


FUNNEL_SHIFT = -0.25  # an effect whose log scale sits this many sds lower at the divergent draws is in the funnel


def refit_funnel(fit, coding: dict[str, bool], modelled: tuple[str, ...], attempt):
    """A fit that diverged refitted once with the other coding for the effects in the funnel only (`funnel_effects`:
    the effect whose scale sits lowest at the divergent draws, and any other past FUNNEL_SHIFT); every other effect
    keeps its coding. The note names each effect's coding and why. Returns (the fit that stands, its coding)."""
    shift = funnel_effects(fit.idata, coding, modelled)
    if shift:
        worst = min(shift, key=shift.get)
        flipped = {e for e, z in shift.items() if e == worst or z <= FUNNEL_SHIFT}
    else:  # the sampler counted divergences its draws do not mark: no effect can be told apart, every one recoded
        flipped = {e for e in coding if e in modelled}
        shift = {e: float("nan") for e in flipped}
    other = {e: (not c) if e in flipped else c for e, c in coding.items()}
    refit = attempt(other)
    why = "; ".join(f"{e} {'centred' if coding[e] else 'non-centred'} -> "
                    f"{'centred' if other[e] else 'non-centred'} (its log scale {shift[e]:+.2f} sd at the divergent "
                    "draws)" for e in sorted(flipped))
    kept = ", ".join(f"{e} {'centred' if c else 'non-centred'} (unchanged)" for e, c in coding.items() if e not in flipped)
    if refit.diagnostics["divergences"] < fit.diagnostics["divergences"]:
        refit.notes.append(f"refitted with the other coding of the effects in the funnel: {why}"
                           + (f"; {kept}" if kept else "") + f": {fit.diagnostics['divergences']} divergent "
                           f"transition(s) before, {refit.diagnostics['divergences']} now")
        return refit, other
    fit.notes.append(f"a refit recoding {why} diverged as often ({refit.diagnostics['divergences']} against "
                     f"{fit.diagnostics['divergences']}): the first fit is kept")
    return fit, coding
