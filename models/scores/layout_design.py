"""Which scenarios to run next to learn the Measurement Layout's capabilities best.

In the layout (`referee.models.scores.measurement_layout`) an agent's expected score in a scenario with demand
profile x is E[y] = m(mu) with mu = b + (1 - b) prod_d c_d ^ x_d, m the ordered-beta mean (cutpoints k1 < k2,
precision nu). One more episode of that scenario tells the agent's capabilities c (D,) about as much as its
Fisher information about its log-capabilities l_d = log c_d, linearised on the response scale: g g' / Var[y],
with the gradient

    g_d = dE[y]/dl_d = m'(mu) (1 - b) x_d prod_e c_e ^ x_e,

and Var[y] the ordered-beta variance (`ordered_beta_moments`). The information is averaged over the posterior
draws (expected Fisher information, the pseudo-Bayesian design criterion of Chaloner & Verdinelli 1995,
"Bayesian experimental design: a review", Statistical Science 10(3)), so it does not hinge on one point
estimate. The agent's current posterior is approximated by a normal with the draws' covariance of log c. On that
scale the ridge of two demands only ever seen together (c_1 c_2 known, each alone not) is a straight line the
covariance keeps, so another scenario with both tells nothing of either (as it should) and one with a single
one of them breaks the ridge; on the capability scale the ridge is curved and a normal approximation would
credit the first. `repeats` more episodes add repeats x information to the precision; the variance of c_d is
reported as its posterior variance scaled by the fall of the variance of l_d.

`next_layout_scenarios` picks scenarios one at a time, each for the demand whose capabilities are then least
known (largest root-mean-square posterior sd over the agents), by the variance it removes from that demand's
capabilities summed over every agent (each scenario is played by every agent), and adds its information as if
it were played. A scenario may be picked again: in the layout a replay is more data. Demands that no played
scenario exercises (a substrate not yet played) enter with prior draws of their capabilities (`with_prior_demands`),
and demands the fit merged because they were always seen together are split back (`split_merged`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit

from referee.models.scores.measurement_layout import LayoutPriors, success_mean
from referee.models.scores.scenario_design import hypothetical_profiles

MAX_DRAWS = 400  # posterior draws the expected information averages over (evenly thinned)


@dataclass
class LayoutDraws:
    """Posterior draws of a Measurement Layout, as arrays: capability (S, A, D) in (0, 1), base (S, A),
    nu (S, A) the Beta precision, cutpoints (S, 2); with the agent and demand names."""

    agents: list[str]
    demands: list[str]
    capability: np.ndarray
    base: np.ndarray
    nu: np.ndarray
    cutpoints: np.ndarray

    def sd(self) -> pd.DataFrame:
        """Posterior sd of every capability: a table (agent x demand)."""
        return pd.DataFrame(self.capability.std(axis=0), index=self.agents, columns=self.demands)


def layout_draws(idata, max_draws: int = MAX_DRAWS) -> LayoutDraws:
    """The draws of a layout fit's InferenceData (`LayoutFit.idata`, or the `idata.nc` that `referee fit
    measurement-layout` writes), thinned evenly to at most `max_draws`."""
    post = idata.posterior
    for name in ("capability", "base_chance", "sample_size", "cutpoints"):
        if name not in post:
            raise ValueError(f"not a Measurement Layout posterior: it has no '{name}' (variables: {list(post.data_vars)})")
    stack = lambda name, *dims: post[name].stack(s=("chain", "draw")).transpose("s", *dims).values  # noqa: E731
    cap = stack("capability", "agent", "demand")
    keep = np.unique(np.linspace(0, cap.shape[0] - 1, min(max_draws, cap.shape[0])).round().astype(int))
    cut_dim = [d for d in post["cutpoints"].dims if d not in ("chain", "draw")][0]
    return LayoutDraws(agents=[str(a) for a in post["agent"].values], demands=[str(d) for d in post["demand"].values],
                       capability=cap[keep], base=stack("base_chance", "agent")[keep],
                       nu=stack("sample_size", "agent")[keep], cutpoints=stack("cutpoints", cut_dim)[keep])


def with_prior_demands(draws: LayoutDraws, names: list[str], priors: LayoutPriors = LayoutPriors(),
                       seed: int = 0) -> LayoutDraws:
    """`draws` with demands `names` added, their capabilities drawn from the layout's prior (demand mean
    m ~ Normal, spread s ~ HalfNormal, theta = m + s z per agent, z zero-sum over the agents as in
    `measurement_layout.build_layout`): for demands no observation has exercised."""
    if not names:
        return draws
    rng = np.random.default_rng(seed)
    S, A = draws.base.shape
    m = rng.normal(priors.capability_mean_mu, priors.capability_mean_sd, size=(S, 1, len(names)))
    s = np.abs(rng.normal(0.0, priors.capability_spread_sd, size=(S, 1, len(names))))
    w = rng.standard_normal((S, A, len(names)))
    theta = m + s * (w - w.mean(axis=1, keepdims=True))  # iid normals less their mean: the zero-sum normal
    cap = np.concatenate([draws.capability, 1.0 / (1.0 + np.exp(-theta))], axis=2)
    return LayoutDraws(draws.agents, draws.demands + list(names), cap, draws.base, draws.nu, draws.cutpoints)


def split_merged(draws: LayoutDraws, seed: int = 0) -> LayoutDraws:
    """`draws` with each merged demand ('a + b', fitted as one because the data only ever showed them together)
    split back into its members, so a scenario with one of them alone can be planned for.

    Only the product of the members' capabilities is known: log c_a + log c_b = log c_(a+b) in every draw. How it
    splits is unknown; each draw and agent gets shares from a flat Dirichlet (log c_a = w_a log c_(a+b)), a
    stated assumption that puts the members on a straight ridge in log-capability, which the plan's normal
    approximation keeps: another scenario with all members teaches none of them apart, one with some breaks it.
    """
    rng = np.random.default_rng(seed)
    names, columns = [], []
    for d, name in enumerate(draws.demands):
        members = name.split(" + ")
        if len(members) == 1:
            names.append(name)
            columns.append(draws.capability[:, :, d])
            continue
        shares = rng.dirichlet(np.ones(len(members)), size=draws.base.shape)  # (S, A, members)
        log_c = np.log(np.clip(draws.capability[:, :, d], 1e-12, 1.0))
        names += members
        columns += [np.exp(shares[:, :, k] * log_c) for k in range(len(members))]
    return LayoutDraws(draws.agents, names, np.stack(columns, axis=2), draws.base, draws.nu, draws.cutpoints)


def ordered_beta_moments(mu: np.ndarray, k1, k2, nu) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, variance and d(mean)/d(mu) of an ordered-beta score with Beta mean `mu` in (0, 1), cutpoints
    k1 < k2 (on the logit scale of mu) and Beta precision `nu`; every argument broadcast elementwise.

    P(y = 1) = sigmoid(eta - k2), P(0 < y < 1) = sigmoid(eta - k1) - sigmoid(eta - k2) with eta = logit(mu);
    the middle is Beta(mu nu, (1 - mu) nu), variance mu (1 - mu) / (1 + nu).
    """
    mu = np.clip(mu, 1e-9, 1 - 1e-9)
    eta = np.log(mu) - np.log1p(-mu)
    top, low = expit(eta - k2), expit(eta - k1)
    middle = low - top
    mean = top + middle * mu
    second = top + middle * (mu**2 + mu * (1 - mu) / (1 + nu))
    d_eta = top * (1 - top) * (1 - mu) + low * (1 - low) * mu  # d mean / d eta at fixed mu, plus mu's own term below
    return mean, np.maximum(second - mean**2, 1e-12), d_eta / (mu * (1 - mu)) + middle


def expected_information(draws: LayoutDraws, X: np.ndarray) -> np.ndarray:
    """Expected Fisher information one episode of each candidate profile gives each agent's capabilities.

    X : (C, D) profiles in {0, 1} over `draws.demands`. Returns (A, C, D, D): for agent a and candidate c,
    the posterior average of g g' / Var[y] (module docstring), about the log-capabilities."""
    X = np.asarray(X, float)
    cap = np.clip(draws.capability, 1e-6, 1 - 1e-6)
    out = np.empty((len(draws.agents), X.shape[0], X.shape[1], X.shape[1]))
    k1, k2 = draws.cutpoints[:, 0, None], draws.cutpoints[:, 1, None]
    for a in range(len(draws.agents)):
        log_c = np.log(cap[:, a, :])  # (S, D)
        log_success = log_c @ X.T  # (S, C)
        b, nu = draws.base[:, a, None], draws.nu[:, a, None]
        mu, success = success_mean(log_success, b), np.exp(log_success)
        _, var, slope = ordered_beta_moments(mu, k1, k2, nu)
        weight = (slope * (1 - b) * success) ** 2 / var  # (S, C)
        out[a] = np.einsum("sc,cd,ce->cde", weight, X, X) / cap.shape[0]
    return out


def layout_profiles(demands: list[str], size: int = 3) -> pd.DataFrame:
    """Hypothetical demand profiles: every combination of up to `size` demands with at most one substrate
    (a scenario has one substrate; a demand naming 'substrate: ' counts as one). Returns a 0/1 table
    (index 'profile: a + b', columns `demands`; `scenario_design.hypothetical_profiles`)."""
    return hypothetical_profiles(demands, size, exclusive=[("substrate: " in d) for d in demands])


def next_layout_scenarios(draws: LayoutDraws, candidates: pd.DataFrame, budget: int, repeats: int = 1,
                          target: str | None = None) -> pd.DataFrame:
    """Up to `budget` scenarios to run next (each by every agent, `repeats` episodes each), in order.

    draws : the layout's posterior (`layout_draws`, `with_prior_demands`); candidates : 0/1 table, index the
    scenario (or profile) names, columns `draws.demands`; target : serve this demand in every pick (default: the
    one least known at each pick). Returns pick, scenario, demands (present), target (the
    demand whose capabilities the pick serves), sd_before, sd_after (root-mean-square over agents of that
    demand's capability sd, capability scale 0-1), agents_gaining (agents whose sd of it falls by >= 10 %).
    """
    if list(candidates.columns) != list(draws.demands):
        raise ValueError(f"candidate columns {list(candidates.columns)} are not the layout's demands {draws.demands}")
    if candidates.empty:
        raise ValueError("no candidate scenario to choose from")
    if target is not None and target not in draws.demands:
        raise ValueError(f"no demand {target!r} in the layout; its demands are {draws.demands}")
    X = candidates.to_numpy(float)
    info = expected_information(draws, X) * repeats  # (A, C, D, D)
    D = len(draws.demands)
    logs = np.log(np.clip(draws.capability, 1e-6, 1 - 1e-6))
    cov = np.stack([np.cov(logs[:, a, :], rowvar=False).reshape(D, D) for a in range(len(draws.agents))])
    cov = cov + np.eye(D) * 1e-9 * np.trace(cov, axis1=1, axis2=2)[:, None, None] / D
    precision = np.linalg.inv(cov)  # (A, D, D)
    scale = draws.capability.var(axis=0) / np.diagonal(cov, axis1=1, axis2=2)  # capability variance per log variance
    rows = []
    for pick in range(1, budget + 1):
        var = np.diagonal(cov, axis1=1, axis2=2) * scale  # (A, D), capability scale
        serve = int(np.argmax(var.mean(axis=0))) if target is None else draws.demands.index(target)
        after = np.linalg.inv(precision[:, None] + info)  # (A, C, D, D)
        removed = (var[:, None, serve] - after[:, :, serve, serve] * scale[:, None, serve]).sum(axis=0)  # (C,)
        best = int(np.argmax(removed))
        new_var = after[:, best, serve, serve] * scale[:, serve]
        rows.append({"pick": pick, "scenario": candidates.index[best],
                     "demands": "; ".join(d for d, x in zip(draws.demands, X[best]) if x),
                     "target": draws.demands[serve], "sd_before": float(np.sqrt(var[:, serve].mean())),
                     "sd_after": float(np.sqrt(new_var.mean())),
                     "agents_gaining": int((np.sqrt(new_var) <= 0.9 * np.sqrt(var[:, serve])).sum())})
        precision = precision + info[:, best]
        cov = after[:, best]
    return pd.DataFrame(rows)
