"""referee analysis: ingestion, store, ratings, audits orchestration, figures, reports, CLI."""
