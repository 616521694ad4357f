"""The outcome model's structure as plain arrays, read alike by the PyMC model (`outcome_glm.build_model`) and by its
hand-written density (`outcome_density`): which effects the model holds and how each is coded (`effect_blocks`), and
the pass/fail samples counted per cell (`pass_fail_cells`)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def effect_blocks(d, effects: tuple[str, ...], interaction: bool, coding: dict[str, bool]
                  ) -> list[tuple[str, str, int]]:
    """(effect, kind, levels) of each effect the model holds for `d` (an `outcome_glm.Design`), in its order: the agent and task effects 'centred'
    (a ZeroSumNormal with the effect's scale) or 'zero-sum' (the scale times a standard ZeroSumNormal) as `coding`
    says, the item and pair effects 'normal' (the scale times a standard Normal). An agent or task effect over one
    level is left out: its scale is not identified, and readers take a missing effect as 0 (the ladder's step adding
    it is the step before's)."""
    sizes = {"agent": len(d.agents), "task": len(d.tasks), "item": len(d.items), "pair": len(d.pairs)}
    out = []
    for e in effects + (("pair",) if interaction else ()):
        if e in ("agent", "task") and sizes[e] < 2:
            continue
        kind = ("centred" if coding.get(e, False) else "zero-sum") if e in ("agent", "task") else "normal"
        out.append((e, kind, sizes[e]))
    return out


def pass_fail_cells(d) -> dict[str, np.ndarray]:
    """The pass/fail samples of `d` (an `outcome_glm.Design`) counted per cell (agent, task, item, pair): {'agent', 'task', 'item', 'pair': each
    cell's level codes, 'passes', 'trials'} (int64 arrays): one binomial count per cell has the same posterior as
    one Bernoulli per sample."""
    cells = pd.DataFrame({"agent": d.agent, "task": d.task, "item": d.item, "pair": d.pair, "y": d.y})
    cells = cells.groupby(["agent", "task", "item", "pair"])["y"].agg(["sum", "count"]).reset_index()
    out = {c: cells[c].to_numpy().astype(np.int64) for c in ("agent", "task", "item", "pair")}
    return {**out, "passes": cells["sum"].to_numpy().astype(np.int64),
            "trials": cells["count"].to_numpy().astype(np.int64)}


def pass_fail_density(d, effects: tuple[str, ...], interaction: bool, priors,
                      coding: dict[str, bool]):
    """The pass/fail model `outcome_glm.build_model` builds for these arguments (`d` a Design, `priors` its Priors),
    as its log-density written out (`referee.models.scores.outcome_density.PassFailDensity`: the same parameters in
    the same order)."""
    from referee.models.scores.outcome_density import PassFailDensity

    return PassFailDensity(pass_fail_cells(d), effect_blocks(d, effects, interaction, coding), priors.intercept_sd,
                           priors.group_sd)
