"""The likelihood of normalised scores in [0, 1], computed per cell: the rows that share their mean (an agent's
repetitions of a scenario in the beta regressions, of a row of demands in the Measurement Layout) enter through
five sums (`ScoreCells`), so a cell of r repetitions costs one evaluation of the density, not r.

Likelihoods (`referee.models.scores.beta_regression`'s module docstring gives their sources):
- `ordered`: with mean eta (logit scale) and ordered cutpoints k1 < k2, P(y = 0) = 1 - sigmoid(eta - k1),
  P(y = 1) = sigmoid(eta - k2), and for 0 < y < 1 the density
  (sigmoid(eta - k1) - sigmoid(eta - k2)) Beta(y | sigmoid(eta) phi, (1 - sigmoid(eta)) phi).
- `squeeze`: y' = (y (N - 1) + 1/2) / N over all N rows, then Beta(y' | sigmoid(eta) phi, (1 - sigmoid(eta)) phi).

Summed over a cell's rows, the Beta's log density is (a - 1) sum log y + (b - 1) sum log(1 - y) + n (lgamma(phi) -
lgamma(a) - lgamma(b)) with a = sigmoid(eta) phi, b = sigmoid(-eta) phi and n the rows between 0 and 1; the ordered
beta adds each branch's log-probability times its count. tests/test_beta_regression.py checks a cell's value against
the sum of its rows' densities by scipy. On the bundled Concordia sample (1,440 rows in 101 cells) the tag effects'
sampling took 17 s instead of 34 (its compile on an empty cache is as long as before, about 50 s).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LIKELIHOODS = ("ordered", "squeeze")


@dataclass(frozen=True)
class ScoreCells:
    """Scores grouped into cells: the rows that share their mean (and precision), e.g. an agent's repetitions of
    one scenario. The likelihood of a cell's rows depends on them only through five sums (per cell, each (m,)):
    how many are exactly 0 (`zeros`), exactly 1 (`ones`) and between (`between`), and over those between, the sums
    of log y (`sum_log`) and of log(1 - y) (`sum_log1m`). `first` is each cell's first row in the data (cells
    in the order their first rows come); `squeezed` whether y was squeezed first (`score_cells`)."""

    first: np.ndarray
    zeros: np.ndarray
    ones: np.ndarray
    between: np.ndarray
    sum_log: np.ndarray
    sum_log1m: np.ndarray
    squeezed: bool = False

    SUMS = ("zeros", "ones", "between", "sum_log", "sum_log1m")


def score_cells(keys: np.ndarray, y_obs: np.ndarray, likelihood: str) -> ScoreCells:
    """The rows of normalised scores `y_obs` (n,) in [0, 1] grouped into cells by `keys` ((n,) or (n, k): the
    values that set a row's mean, e.g. agent and scenario indices), with each cell's sums (`ScoreCells`). For the
    'squeeze' likelihood the scores are squeezed first over all n rows (module docstring), so every row is
    between 0 and 1."""
    import pandas as pd

    y = np.asarray(y_obs, float)
    keys = np.asarray(keys).reshape(len(y), -1)
    cell, _ = pd.factorize(pd.MultiIndex.from_arrays(list(keys.T)))  # cells in the order of their first rows
    first = np.unique(cell, return_index=True)[1]
    squeezed = likelihood == "squeeze"
    if squeezed:
        y = (y * (len(y) - 1) + 0.5) / len(y)
    between = (y > 0) & (y < 1)
    inside = np.where(between, y, 0.5)  # log of the rows between only; the others add 0

    def per_cell(weights) -> np.ndarray:
        return np.bincount(cell, weights=np.asarray(weights, float), minlength=len(first))

    return ScoreCells(first, per_cell(y == 0), per_cell(y == 1), per_cell(between),
                      per_cell(np.where(between, np.log(inside), 0.0)),
                      per_cell(np.where(between, np.log1p(-inside), 0.0)), squeezed)


def score_likelihood(name: str, cells: ScoreCells, eta, priors, likelihood: str, phi=None):
    """Add the likelihood of normalised scores, grouped into `cells` (`score_cells`), given each cell's logit-scale
    mean `eta` (m,) to the current model, as the potential `name`: per cell, the sum over its rows of the ordered
    beta's (or the squeezed Beta's) log density (module docstring), computed from the cell's sums (a cell of r
    repetitions costs one evaluation, not r).

    `priors`: a `referee.models.scores.beta_regression.Priors` (phi's Gamma, the cutpoints' Normal). `likelihood` is
    'ordered' or 'squeeze'; `phi` is the Beta precision (a tensor, one value or one per cell),
    created as `phi ~ Gamma(priors.phi_alpha, priors.phi_beta)` when None. The cells' sums enter as `pm.Data`
    named after `name` (`name`_zeros, ...), so that the model's structure does not depend on them
    (`referee.models.compiled_structure`). Returns the potential: (m,) log-likelihoods, one per cell.
    """
    import pymc as pm

    if likelihood not in LIKELIHOODS:
        raise ValueError(f"likelihood must be one of {LIKELIHOODS}")
    if cells.squeezed != (likelihood == "squeeze"):
        raise ValueError(f"the cells were made for the {'squeeze' if cells.squeezed else 'ordered'} likelihood, "
                         f"not {likelihood!r} (score_cells)")
    if phi is None:
        phi = pm.Gamma("phi", alpha=priors.phi_alpha, beta=priors.phi_beta)
    sums = {part: pm.Data(f"{name}_{part}", getattr(cells, part)) for part in ScoreCells.SUMS}
    cuts = None if cells.squeezed else pm.Normal(
        "cutpoints", mu=np.array(priors.cutpoint_mu), sigma=priors.cutpoint_sd, shape=2,
        transform=pm.distributions.transforms.ordered, initval=np.array(priors.cutpoint_mu))
    return pm.Potential(name, cell_loglik(sums, eta, phi, cuts))


def cell_loglik(sums: dict, eta, phi, cuts=None):
    """Symbolic: each cell's log-likelihood from its sums (`ScoreCells.SUMS`), mean `eta` and precision `phi`; with
    cutpoints `cuts` (k1 < k2) the ordered beta, without them the Beta alone (the squeeze). The ordered beta's
    branches in their stable forms: log(1 - sigmoid(x)) = -softplus(x), log sigmoid(x) = -softplus(-x) and, between
    the cutpoints, `referee.models.scores.ordered_logistic.log_mass_between`."""
    import pytensor.tensor as pt

    from referee.models.scores.ordered_logistic import log_mass_between

    a, b = pt.sigmoid(eta) * phi, pt.sigmoid(-eta) * phi
    beta = ((a - 1) * sums["sum_log"] + (b - 1) * sums["sum_log1m"]
            + sums["between"] * (pt.gammaln(phi) - pt.gammaln(a) - pt.gammaln(b)))
    if cuts is None:
        return beta
    k1, k2 = cuts[0], cuts[1]
    return (sums["zeros"] * -pt.softplus(eta - k1) + sums["ones"] * -pt.softplus(k2 - eta)
            + sums["between"] * log_mass_between(eta, k1, k2) + beta)
