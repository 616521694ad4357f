import pytest

from referee.io.catalogue import CatalogueError, load_catalogue, write_catalogue


def test_contest_catalogue_matches_published_list(contest):
    # ../shared/data/concordia/contest-scenarios.md: 12 scenarios, 5 substrates (+ haggling_multi_item)
    assert len(contest.scenarios) == 12
    s = contest.scenarios.set_index("scenario")
    assert s.loc["haggling_multi_item_0", "game"] == "haggling_multi_item"
    assert s.loc["pub_coordination_mini", "mode"] == "resident"
    assert s.loc["pub_coordination_0", "mode"] == "visitor"
    assert (s["mode"] == "resident").sum() == 6
    tags = contest.tags.groupby("scenario")["tag"].apply(set)
    assert tags["state_formation_0"] == {"negotiation", "persuasion", "division of labor"}
    assert tags["labor_collective_action__paranoid_boss_0"] == {
        "convention following", "leadership", "persuasion", "role playing"}
    assert len(contest.tags) == 1 + 4 + 2 + 2 + 3 + 1 + 1 + 2 + 2 + 2 + 3 + 3  # per the published table
    assert s["score_min"].isna().all()


def test_round_trip(tmp_path, contest):
    path = write_catalogue(contest, tmp_path / "c.toml", header="copy")
    again = load_catalogue(path)
    assert again.scenarios.equals(contest.scenarios)
    assert again.tags.sort_values(["scenario", "tag"]).reset_index(drop=True).equals(
        contest.tags.sort_values(["scenario", "tag"]).reset_index(drop=True))


@pytest.mark.parametrize("body, needle", [
    ('[scenarios.a]\nmode = "tourist"\n', "key 'mode'"),
    ('[scenarios.a]\nscore_min = 1.0\n', "both score_min and score_max"),
    ('[scenarios.a]\nscore_min = 2.0\nscore_max = 1.0\n', "not below"),
    ('[scenarios.a]\ncolour = "red"\n', "unknown keys ['colour']"),
    ('[scenarios.a\n', "invalid TOML"),
])
def test_bad_catalogue_names_file_scenario_and_key(tmp_path, body, needle):
    path = tmp_path / "bad.toml"
    path.write_text(body)
    with pytest.raises(CatalogueError) as err:
        load_catalogue(path)
    assert str(path) in str(err.value) and needle in str(err.value)


def test_a_catalogue_naming_none_of_the_ingested_scenarios_is_said(tmp_path):
    """Issue 51: a catalogue of other logs was taken without a word (its tags then apply to nothing)."""
    from referee.io.resources import shipped
    from referee.io.store import Store

    sample = shipped("sample")
    other = Store(tmp_path / "a.duckdb").ingest([str(sample / "meltingpot")],
                                                catalogue=sample / "concordia" / "catalogue.toml")
    assert any("names none of the 6 scenario(s)" in w for w in other.warnings)
    unused = Store(tmp_path / "b.duckdb").ingest([str(sample / "gtbench" / "logs")],
                                                 catalogue=sample / "meltingpot" / "catalogue.toml")
    assert any("catalogue was not used" in w for w in unused.warnings)
    own = Store(tmp_path / "c.duckdb").ingest([str(sample / "meltingpot")],
                                              catalogue=sample / "meltingpot" / "catalogue.toml")
    assert not any("catalogue" in w for w in own.warnings) and own.accepted == 120
