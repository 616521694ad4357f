"""How much a request asks of a job, estimated from its options before any work, and refused above the job's
stated limit: each option is bounded on its own (`referee.run.options`), and a job whose options multiply (a power
curve's points x simulations, a calibration's cycles x chains x steps) declares its estimate here, checked by
`Job.bind` with the options. A refusal says the estimate, how it is made, the limit, which options lower it and
that `--allow-long` runs it anyway. Light: no pandas, no numpy (the job table imports it).
"""

from __future__ import annotations

from dataclasses import dataclass

from referee.models.registry import CHAINS, DRAWS, TUNE

POWER_POINTS = 14  # the power curve's numbers of matches (`referee.run.ratings.plan.power_curve`'s grid)
MAX_POWER_FITS = 100_000  # Bradley-Terry fits of a power curve (default 14 x 200 = 2,800; ~1-10 ms each)
MAX_POSTERIOR_STEPS = 20_000_000  # a calibration's NUTS steps over all cycles and chains (default 700,000)


@dataclass(frozen=True)
class Work:
    """A request's estimated work: `units` of `what`, as `how` multiplies it, against the job's `limit`;
    `lower` names the options that lower it."""

    units: float
    what: str
    how: str
    limit: float
    lower: str

    def refusal(self, job: str) -> str | None:
        """Why `job` refuses this request before it starts (None when it is within the limit)."""
        if self.units <= self.limit:
            return None
        return (f"this {job} request is about {self.units:,.0f} {self.what} ({self.how}), above the limit of "
                f"{self.limit:,.0f}; lower {self.lower}, or pass --allow-long to run it anyway")


def plan_work(options: dict) -> Work | None:
    """`plan --power`: POWER_POINTS x --sims Bradley-Terry fits (a plan of matches is bounded by --budget alone)."""
    if not options.get("power"):
        return None
    sims = int(options.get("sims") or 0)
    return Work(POWER_POINTS * sims, "Bradley-Terry fits", f"{POWER_POINTS} points of the power curve x {sims:,} "
                f"simulations each", MAX_POWER_FITS, "--sims")


def calibrate_work(options: dict) -> Work:
    """`calibrate`: cycles x chains x (draws + tuning steps) NUTS steps (the sampling defaults where not given)."""
    sims, chains = int(options.get("sims") or 0), int(options.get("chains") or CHAINS)
    draws, tune = int(options.get("draws") or DRAWS), int(options.get("tune") if options.get("tune") is not None else TUNE)
    return Work(sims * chains * (draws + tune), "NUTS steps", f"{sims:,} cycles x {chains} chains x ({draws:,} draws "
                f"+ {tune:,} tuning steps)", MAX_POSTERIOR_STEPS, "--sims, --draws, --tune or --chains")
