"""Simulators: each writes one runner's log format from known parameters, plus `truth.json`.

`simulate_X(...)` draws (pure, seeded); `write_X(sim, out)` writes `out/logs/...` and `out/truth.json`.
"""

from referee.simulators.aoa import simulate_aoa, write_aoa
from referee.simulators.arena import simulate_arena, write_arena
from referee.simulators.compact import simulate_compact, write_compact
from referee.simulators.concordia import simulate_concordia, simulate_contest_phases, write_concordia
from referee.simulators.ranked import simulate_ranked, write_ranked
from referee.simulators.tavern import simulate_tavern, write_tavern

__all__ = ["simulate_aoa", "write_aoa", "simulate_arena", "write_arena", "simulate_compact", "write_compact",
           "simulate_concordia", "simulate_contest_phases", "write_concordia", "simulate_ranked", "write_ranked",
           "simulate_tavern", "write_tavern"]
