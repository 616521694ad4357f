"""What every loader owes: an empty file, another runner's file and garbage are set aside, never dropped."""

import pytest

from analysis.io.loaders import RUNNERS
from analysis.io.loaders.base import LoadOptions, file_hash
from analysis.present.pipeline import SAMPLE

SAMPLES = {
    "concordia": SAMPLE / "concordia" / "logs" / "rational_agent__gemma-2-9b-it__all-mpnet-base-v2.json",
    "aoa": SAMPLE / "aoa_eval01" / "season.json",
    "aoa-events": SAMPLE / "aoa_sim" / "logs" / "events.jsonl",
    "compact": SAMPLE / "compact" / "logs" / "games.jsonl",
    "arena": SAMPLE / "arena" / "logs" / "judgments.csv",
    "ranked": SAMPLE / "ranked" / "logs" / "games.jsonl",
    "ranked-turns": SAMPLE / "ranked" / "logs" / "turns.jsonl",
}
SUFFIX = {"concordia": ".json", "records": ".json", "aoa": ".json", "compact": ".jsonl", "arena": ".csv",
          "ranked": ".jsonl", "table": ".csv"}


def _load(runner, path):
    return RUNNERS[runner].load(path, file_hash(path), LoadOptions())


@pytest.mark.parametrize("runner", sorted(RUNNERS))
def test_empty_file(tmp_path, runner):
    path = tmp_path / f"empty{SUFFIX[runner]}"
    path.write_text("")
    result = _load(runner, path)
    assert (result.read, result.accepted, result.quarantined) == (1, 0, 1)
    assert result.quarantine.iloc[0].reason == "empty file" and str(path) in result.quarantine.iloc[0].message


@pytest.mark.parametrize("runner, sample", [(r, s) for r in sorted(RUNNERS) for s in sorted(SAMPLES)
                                             if s.split("-")[0] != r])
def test_another_runners_file_is_set_aside_whole(runner, sample):
    result = _load(runner, SAMPLES[sample])
    assert result.accepted == 0, result.tables["matches"].head()
    assert result.read == result.quarantined >= 1
    assert all(m.startswith(str(SAMPLES[sample])) for m in result.quarantine.message)


@pytest.mark.parametrize("runner", sorted(RUNNERS))
def test_binary_garbage(tmp_path, runner):
    path = tmp_path / f"garbage{SUFFIX[runner]}"
    path.write_bytes(bytes(range(256)) * 4)
    result = _load(runner, path)
    assert result.accepted == 0 and result.read == result.quarantined >= 1
