"""Simulators: each writes one runner's log format from known parameters, plus `truth.json`."""

from analysis.simulate.concordia import simulate_concordia, write_concordia

__all__ = ["simulate_concordia", "write_concordia"]
