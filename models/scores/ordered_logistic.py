"""Ordered-category log-probabilities as lean PyTensor graphs: `log_mass_between`, the log of the probability a
logistic puts between two cutpoints in its stable form (the ordered beta's middle mass,
`referee.models.scores.score_cells.cell_loglik`, and every grade of the ordered logistic), and
`ordered_logistic_logp`, the graded outcome model's likelihood (`referee.models.scores.outcome_glm`): about half the
numba compile of PyMC's `OrderedLogistic`, which builds every grade's probability, checks them and takes the log of
the one observed; equal to it to 1e-9 and finite in the tails where its difference of two sigmoids underflows
(tests/test_outcome_models.py)."""

from __future__ import annotations


def log_mass_between(x, lower, upper):
    """log(sigmoid(x - lower) - sigmoid(x - upper)) for lower < upper, in the stable form: sigmoid(a) - sigmoid(b) =
    sigmoid(a) sigmoid(-b) (1 - exp(b - a)), so it is -softplus(lower - x) - softplus(x - upper) +
    log1mexp(lower - upper), finite where the difference of the two sigmoids underflows. Tensors or numbers."""
    import pytensor.tensor as pt

    return -pt.softplus(lower - x) - pt.softplus(x - upper) + pt.log1mexp(lower - upper)


def ordered_logistic_logp(value, eta, cuts):
    """log P(y = value) of the ordered logistic with cutpoints `cuts` (K - 1,) at predictor `eta`: the mass between
    the grade's cutpoints c[y - 1] and c[y] (`log_mass_between`), with c[-1] = -1e6 and c[K - 1] = 1e6 (finite, so
    that the gradient has no inf - inf)."""
    import pytensor.tensor as pt

    far = pt.constant([1e6])
    edges = pt.concatenate([-far, cuts, far])
    return log_mass_between(eta, edges[value], edges[value + 1])
