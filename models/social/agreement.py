"""Agreement between two LLM judges rating the same items on an integer scale (COMPACT paper, section 3.1).

The paper validated its judge against a second one on 25,847 paired ratings (0-3): mean absolute difference
0.69, 13,961 exact matches, 20,939 within one point. Krippendorff's alpha (Krippendorff 2004) adds the
chance-corrected agreement, computed by the `krippendorff` package.
"""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd

ITEM = ["match_id", "player", "other", "round", "name"]


def paired_ratings(measures: pd.DataFrame, first: str, second: str) -> pd.DataFrame:
    """The items both judges rated: ITEM columns plus `first` and `second` (their ratings).

    measures : canonical measures (kind 'judge', rater = the judge); first, second : the two raters' names.
    Raises ValueError naming the raters present when either is missing.
    """
    judged = measures[measures["kind"] == "judge"]
    raters = sorted(judged["rater"].dropna().unique())
    for name in (first, second):
        if name not in raters:
            raise ValueError(f"no judge ratings by {name!r}; raters in the store: {raters}")
    key = judged.assign(other=judged["other"].fillna(""), round=judged["round"].fillna(-1))
    wide = key[key["rater"].isin([first, second])].pivot_table(index=ITEM, columns="rater", values="value",
                                                               aggfunc="mean")
    return wide.dropna().reset_index().rename_axis(columns=None)


def judge_agreement(a: np.ndarray, b: np.ndarray, level: str = "ordinal") -> dict:
    """Agreement of two raters' paired ratings a, b (shape (n,), same items in the same order).

    Returns n, mean_abs_diff, exact (count), within_one (count), exact_share, within_one_share and
    krippendorff_alpha at `level` ('nominal', 'ordinal', 'interval' or 'ratio'; ordinal for a 0-3 scale).
    """
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired ratings must be two vectors of one length, got {a.shape} and {b.shape}")
    n = len(a)
    if n == 0:
        raise ValueError("no paired ratings: the two judges rated no item in common")
    diff = np.abs(a - b)
    exact, within = int((diff == 0).sum()), int((diff <= 1).sum())
    alpha = (float(krippendorff.alpha(reliability_data=np.vstack([a, b]), level_of_measurement=level))
             if len(np.unique(np.r_[a, b])) > 1 else float("nan"))
    return {"n": n, "mean_abs_diff": float(diff.mean()), "exact": exact, "within_one": within,
            "exact_share": exact / n, "within_one_share": within / n, "krippendorff_alpha": alpha, "level": level}


def agreement_intervals(a: np.ndarray, b: np.ndarray, n_boot: int = 1000, seed: int = 0, level: str = "ordinal",
                        coverage: float = 0.95) -> pd.DataFrame:
    """`judge_agreement` with percentile bootstrap intervals over items (resampled with replacement).

    Returns one row per statistic (mean_abs_diff, exact_share, within_one_share, krippendorff_alpha): statistic,
    value (on all items), lower, upper (`coverage` percentile interval of `n_boot` replicates)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    point = judge_agreement(a, b, level)
    names = ["mean_abs_diff", "exact_share", "within_one_share", "krippendorff_alpha"]
    rng = np.random.default_rng(seed)
    draws = np.full((n_boot, len(names)), np.nan)
    for r in range(n_boot):
        pick = rng.integers(0, len(a), len(a))
        found = judge_agreement(a[pick], b[pick], level)
        draws[r] = [found[n] for n in names]
    tail = 100 * (1 - coverage) / 2
    with np.errstate(all="ignore"):
        lower = np.nanpercentile(draws, tail, axis=0) if n_boot else np.full(len(names), np.nan)
        upper = np.nanpercentile(draws, 100 - tail, axis=0) if n_boot else np.full(len(names), np.nan)
    return pd.DataFrame({"statistic": names, "value": [point[n] for n in names], "lower": lower, "upper": upper})
