"""What a rating table says about itself: its anchor, the comparison graph's components, and which agents'
ratings are provisional. Pure functions on a rating table (agent, rating, lower, upper, rank, ...), the
comparisons it came from and, for anchors, the bootstrap replicates.

- Anchors (`anchor_shift`, `anchor_replicates`): `--anchor AGENT=RATING` fixes the free constant of a
  difference-scale method (Elo, Bradley-Terry, Davidson, Plackett-Luce) so that AGENT has exactly RATING, in
  the point fit and inside every bootstrap replicate alike (a replicate that drew none of AGENT's matches
  cannot be anchored and is left out, counted); the table's `anchor` column says so.
- Components (`components`): agents linked by any comparison form a component; ratings in different
  components share no evidence, so ranks are taken within each component (`component` 1 is the largest)
  and the note says so.
- Labels (`reference_status`, `label_status`): one rule for every table that ranks agents, whatever its
  method (Elo, the Bradley-Terry family, Plackett-Luce, TrueSkill, OpenSkill, voting): an agent is
  `established` when it played at least MIN_MATCHES matches (information, never strength: an unbeaten agent is
  established with its interval open above); otherwise `provisional`, with the reason. So the same agent has
  the same status in every table of a report.
- No information (`without_information`): an agent whose comparisons are all ties, or whose every decided
  comparison is against one scripted partner (`referee.prepare.comparisons.scripted_agents`), or who has no
  comparison at all, carries no information on its strength. It is never fitted, ranked, given a voting mass
  or called established: its status is `no information: why` (`NO_INFORMATION`), and the ratings say how many
  comparisons carried information (`information_note`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from referee.models.ratings.bootstrap import MIN_MATCHES
from referee.run.ratings.intervals import one_sided
from referee.run.options import MAX_ANCHOR, number_or_nan
from referee.models.registry import methods_with
from referee.prepare.membership import agents_in, is_in
from referee.models.codes import positions
from referee.names import NEVER_COMPARED, NO_INFORMATION

ESTABLISHED = "established"  # the status of an agent the one rule trusts (else "provisional: why")
ANCHORABLE = methods_with(anchorable=True)  # a free additive constant (`referee.models.registry`)


def parse_anchor(text: str) -> tuple[str, float]:
    """'AGENT=RATING' -> (agent, rating); ValueError naming the form."""
    agent, sep, value = text.rpartition("=")
    rating = number_or_nan(value)
    if not sep or not agent.strip() or not np.isfinite(rating):
        raise ValueError(f"--anchor takes AGENT=RATING (e.g. gpt-4=1500), got {text!r}")
    if abs(rating) > MAX_ANCHOR:
        raise ValueError(f"--anchor's RATING must be within +/-{MAX_ANCHOR:,.0f} Elo points, got {value.strip()}")
    return agent.strip(), rating


def anchor_shift(table: pd.DataFrame, anchor: tuple[str, float]) -> pd.DataFrame:
    """The table with rating, lower and upper moved so that the anchor agent's rating is exactly its value,
    and an `anchor` column 'AGENT=RATING'; ValueError when the agent has no rating."""
    agent, value = anchor
    found = table.loc[table["agent"] == agent, "rating"]
    if found.empty or not np.isfinite(found.iloc[0]):
        raise ValueError(f"--anchor: {agent!r} has no rating to anchor (rated agents: "
                         f"{', '.join(table['agent'].astype(str).head(8))} ...)")
    shift = value - float(found.iloc[0])
    out = table.copy()
    for col in ("rating", "lower", "upper"):
        if col in out.columns:
            out[col] = out[col] + shift
    return out.assign(anchor=f"{agent}={value:g}")


def anchor_replicates(ratings: np.ndarray, agents: list, anchor: tuple[str, float]) -> tuple[np.ndarray, int]:
    """Replicate ratings (r, n) each moved so the anchor agent has exactly its value; replicates without the
    anchor agent become all-NaN. Returns (anchored ratings, replicates dropped)."""
    agent, value = anchor
    k = list(agents).index(agent)
    shift = value - ratings[:, k]
    out = ratings + shift[:, None]
    missing = ~np.isfinite(shift)
    out[missing] = np.nan
    return out, int(missing.sum())


def components(comparisons: pd.DataFrame, agents: list[str]) -> pd.Series:
    """Component number per agent (1 = the component with the most agents), indexed by agent: agents are
    linked when any comparison pairs them. Agents of `agents` never compared are their own components."""
    index = pd.Index(list(agents))
    a, b = positions(comparisons["a"], index), positions(comparisons["b"], index)
    keep = (a >= 0) & (b >= 0)
    n = len(index)
    graph = csr_matrix((np.ones(int(keep.sum())), (a[keep], b[keep])), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    sizes = pd.Series(labels).value_counts()
    order = {lab: i + 1 for i, lab in enumerate(sorted(sizes.index, key=lambda lab: (-sizes[lab], lab)))}
    return pd.Series([order[lab] for lab in labels], index=index, name="component")


def rank_within(table: pd.DataFrame, component: pd.Series) -> pd.DataFrame:
    """The table with a `component` column and `rank` taken within each component (1 = best there)."""
    out = table.assign(component=table["agent"].map(component).astype("Int64"))
    values = out["rating"].round(6)
    out["rank"] = values.groupby(out["component"]).rank(method="min", ascending=False).astype("Int64")
    return out


def matches_per_agent(comparisons: pd.DataFrame) -> pd.Series:
    """Distinct matches (clusters) each agent was compared in, indexed by agent."""
    seen = pd.concat([comparisons[["a", "cluster"]].set_axis(["agent", "cluster"], axis=1),
                      comparisons[["b", "cluster"]].set_axis(["agent", "cluster"], axis=1)]).drop_duplicates()
    return seen.groupby("agent").size()


RULE = (f"established: at least {MIN_MATCHES} matches against agents of its own connected part of the comparison "
        "graph, whatever the method and whatever its results: one that never lost (or never won) in those matches is "
        "established as well, its interval open on that side; the status says how much the data hold on an agent, "
        "never how strong it is")


def reference_status(comparisons: pd.DataFrame, parts: pd.Series | None = None) -> pd.DataFrame:
    """matches, one_sided ('never won', 'never lost' or '') and status for every compared agent by the
    module's one rule (see RULE): an agent is established by the information the data hold on it (matches
    against connected opponents), never by the width of its interval, so that the strongest agent, whose
    interval is the widest, is ranked like any other. Indexed by agent. `parts` (component per agent) is
    accepted for the callers that have it; every comparison links two agents of one component."""
    agents = agents_in(comparisons)
    side = one_sided(comparisons).reindex(agents).fillna("")
    n = matches_per_agent(comparisons).reindex(agents).fillna(0).astype(int)
    status = [ESTABLISHED if n[agent] >= MIN_MATCHES else
              f"provisional: {n[agent]} match(es), fewer than {MIN_MATCHES}" for agent in agents]
    return pd.DataFrame({"matches": n.to_numpy(), "one_sided": side.to_numpy(), "status": status},
                        index=pd.Index(agents, name="agent"))


def _uninformed(comparisons: pd.DataFrame, scripted: set) -> dict[str, str]:
    """{agent: why} of the agents of `comparisons` without information (see `without_information`), one pass."""
    decided = comparisons[comparisons["outcome"].to_numpy(float) != 0.5]
    sides = pd.concat([decided[["a", "b"]].set_axis(["agent", "other"], axis=1),
                       decided[["b", "a"]].set_axis(["agent", "other"], axis=1)])
    opponents = sides.groupby("agent")["other"].unique()
    total = pd.concat([comparisons["a"], comparisons["b"]]).value_counts()
    out = {}
    for agent in agents_in(comparisons):
        if agent in scripted:
            continue
        met = opponents.get(agent)
        if met is None:
            out[agent] = f"{NO_INFORMATION}: all {int(total[agent])} comparison(s) are ties"
        elif len(met) == 1 and met[0] in scripted:
            out[agent] = f"{NO_INFORMATION}: every decided comparison is against the scripted partner {met[0]}"
    return out


def without_information(comparisons: pd.DataFrame, scripted=None) -> tuple[pd.DataFrame, dict[str, str]]:
    """(the comparisons without the agents that carry no information, {agent: status}).

    An agent carries no information when every comparison it is in is a tie (outcome 0.5), or when every decided
    comparison it is in is against one scripted partner (`scripted`: agent names; None, the comparisons' own
    `attrs['scripted']`, `referee.prepare.comparisons.scripted_agents`; scripted partners themselves are never
    labelled here). Its
    comparisons are dropped, and the rule applied again to what is left, until no such agent remains: a tie
    against an agent of unknown strength says nothing either."""
    scripted = set(comparisons.attrs.get("scripted", ()) if scripted is None else scripted)
    found: dict[str, str] = {}
    while len(comparisons):
        blind = _uninformed(comparisons, scripted)
        if not blind:
            break
        found.update(blind)
        comparisons = comparisons[~(is_in(comparisons["a"], blind) | is_in(comparisons["b"], blind))]
    return comparisons, found


def information_note(comparisons: pd.DataFrame, uninformed: dict[str, str]) -> str:
    """One sentence: how many comparisons carried information (were decided, not ties), which agents have
    none, and which scripted partners (the comparisons' `attrs['scripted']`) were left unrated."""
    decided = int((comparisons["outcome"].to_numpy(float) != 0.5).sum())
    text = (f"{decided:,} of {len(comparisons):,} comparison(s) carried information (a win or a loss; "
            f"{len(comparisons) - decided:,} tie(s))")
    if uninformed:
        names = sorted(uninformed)
        text += (f"; {len(names)} agent(s) have no information on their strength and are listed without a "
                 f"rating, a rank or a mass: {', '.join(names[:8])}{' ...' if len(names) > 8 else ''} (`status`)")
    apart = sorted(set(comparisons.attrs.get("scripted", ())) - set(agents_in(comparisons)))
    if apart:
        text += (f"; scripted partners, a role and not a rated agent: {', '.join(apart[:8])} (`--rate-scripted`, "
                 "`rate_scripted=True`, rates them)")
    return text


def apply_status(table: pd.DataFrame, status: pd.DataFrame, uninformed: dict[str, str] | None = None) -> pd.DataFrame:
    """The table (any method: a column `agent`) with `matches` and `status` from `reference_status`; an agent in
    `uninformed` ({agent: status}, `without_information`) gets that status, and one never compared gets 0
    matches and NEVER_COMPARED."""
    n = table["agent"].map(status["matches"]).fillna(0).astype(int)
    known = table["agent"].map(status["status"]).astype(object)
    blind = table["agent"].map(pd.Series(uninformed or {}, dtype=object)).astype(object)
    labels = blind.where(blind.notna(), known).where(lambda v: v.notna(), NEVER_COMPARED)
    return table.assign(matches=n.to_numpy(), status=labels.to_numpy())


def label_status(table: pd.DataFrame, comparisons: pd.DataFrame) -> pd.DataFrame:
    """`apply_status` with the `reference_status` of `comparisons` (the one rule, for tables rated elsewhere:
    votes, the report's), agents without information (`without_information`, scripted partners from the
    comparisons' `attrs['scripted']`) labelled so."""
    empty = pd.DataFrame(columns=["matches", "one_sided", "status"])
    informed, uninformed = without_information(comparisons)
    return apply_status(table, reference_status(informed) if len(informed) else empty, uninformed)


def status_note(table: pd.DataFrame) -> str:
    """One sentence: how many agents are established, provisional and without information, and the rule."""
    est = int((table["status"] == ESTABLISHED).sum())
    blind = int(table["status"].astype(str).str.startswith(NO_INFORMATION).sum())
    return (f"{est} agent(s) established, {len(table) - est - blind} provisional"
            + (f", {blind} without information" if blind else "") + f" ({RULE}; see the `status` column)")

