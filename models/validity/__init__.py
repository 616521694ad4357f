"""Construct-validity checks of a scoring metric (`checks`), its formula (`formula`) and a season's own checks
(`season`). The checks' titles are here, light, so that the readings and the report name them without loading
the statistics."""

# the audit's checks in report order, with their titles (one vocabulary for the audit files and the report)
CHECK_TITLES = {"reproduction": "1. Reproduction", "counter_terms": "1b. Published counters in part",
                "decomposition": "2. Decomposition",
                "hold_outcome_constant": "3. Holding the outcome constant",
                "failure_at_top": "4. Outcome failure against rank", "rank_agreement": "5. Rank agreement",
                "assignment_luck": "6. Assignment luck", "two_scores": "7. Two scores, never summed",
                "events": "8. Event-log diagnostics", "mission_progress": "9. Mission progress",
                "spectators": "10. Spectator input"}
