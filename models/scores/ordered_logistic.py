"""The ordered logistic's log-probability as a lean PyTensor graph (the graded outcome model's likelihood,
`referee.models.scores.outcome_glm`): about half the numba compile of PyMC's `OrderedLogistic`, which builds every
grade's probability, checks them and takes the log of the one observed; equal to it to 1e-9 and finite in the tails
where its difference of two sigmoids underflows (tests/test_outcome_models.py)."""

from __future__ import annotations


def ordered_logistic_logp(value, eta, cuts):
    """log P(y = value) of the ordered logistic with cutpoints `cuts` (K - 1,) at predictor `eta`: with a = eta -
    c[y - 1] and b = eta - c[y] (c[-1] = -inf, c[K - 1] = inf), sigmoid(a) - sigmoid(b) = sigmoid(a) sigmoid(-b)
    (1 - exp(b - a)), so log P = log sigmoid(a) + log sigmoid(-b) + log1mexp(b - a), stable where the difference of
    the two sigmoids underflows. The outer cutpoints are +-1e6 (finite, so that the gradient has no inf - inf)."""
    import pytensor.tensor as pt

    far = pt.constant([1e6])
    edges = pt.concatenate([-far, cuts, far])
    a, b = eta - edges[value], eta - edges[value + 1]
    return -pt.softplus(-a) - pt.softplus(b) + pt.log1mexp(b - a)  # log sigmoid(x) = -softplus(-x)
