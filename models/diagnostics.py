"""Convergence diagnostics for every PyMC fit: R-hat, bulk and tail ESS, divergences, and a loud warning.

`diagnose(idata, var_names)` returns a small dict and warns (`ConvergenceWarning`) when any R-hat exceeds
1.01 or any transition diverged, so that no fit's numbers are printed without it being said.
`summary_table(idata, var_names, hdi_prob)` is the tidy summary every fit writes: parameter, mean, sd,
hdi_low, hdi_high, r_hat, ess_bulk, ess_tail.
"""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
import pandas as pd

RHAT_LIMIT = 1.01


class ConvergenceWarning(UserWarning):
    """A posterior fit has R-hat above 1.01 or divergent transitions: its numbers are not to be trusted."""


def diagnose(idata: az.InferenceData, var_names: list[str]) -> dict:
    """Max R-hat, min bulk and tail ESS over `var_names`, divergences, draws; warns when not converged."""
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
    out["converged"] = out["max_r_hat"] <= RHAT_LIMIT and divergent == 0
    if not out["converged"]:
        warnings.warn(
            f"NOT CONVERGED: max R-hat {out['max_r_hat']:.3f} (limit {RHAT_LIMIT}), {divergent} divergent "
            f"transitions, min bulk ESS {out['min_ess_bulk']:.0f}; run longer chains (--draws/--tune) or "
            "reparameterise before reading these numbers", ConvergenceWarning, stacklevel=2)
    return out


def summary_table(idata: az.InferenceData, var_names: list[str], hdi_prob: float = 0.94) -> pd.DataFrame:
    """parameter, mean, sd, hdi_low, hdi_high, r_hat, ess_bulk, ess_tail for every element of `var_names`.

    Parameters are named like ArviZ does, e.g. `beta[persuasion]`, `slope[agent_01, negotiation]`.
    """
    table = az.summary(idata, var_names=var_names, hdi_prob=hdi_prob, round_to="none")
    low, high = [c for c in table.columns if c.startswith("hdi_")][:2]
    out = pd.DataFrame({
        "parameter": table.index, "mean": table["mean"].to_numpy(), "sd": table["sd"].to_numpy(),
        "hdi_low": table[low].to_numpy(), "hdi_high": table[high].to_numpy(), "r_hat": table["r_hat"].to_numpy(),
        "ess_bulk": table["ess_bulk"].to_numpy(), "ess_tail": table["ess_tail"].to_numpy(),
    })
    return out.reset_index(drop=True)
