"""sweep / capacity / search from Python against the CLI's own outputs."""
import json

import pandas as pd
import pytest

import servesim
from conftest import run_cli


def test_sweep_matches_cli_csv_and_json(small_file, tmp_path):
    j, c = tmp_path / "s.json", tmp_path / "s.csv"
    rc, _, err = run_cli("sweep", small_file, "--rates", "10,20", "-r", "2", "--json", j,
                         "--csv", c)
    assert rc == 0, err
    df = servesim.sweep(small_file, rates=[10, 20], replications=2)
    pd.testing.assert_frame_equal(df, pd.read_csv(c))
    assert df.attrs["report"] == json.loads(j.read_text())
    assert len(df) == 2 and df.attrs["table"].startswith("servesim sweep")


def test_capacity_matches_cli_json(small_file, tmp_path):
    j = tmp_path / "c.json"
    rc, _, err = run_cli("capacity", small_file, "--slo", "ttft_p99=500ms", "--json", j,
                         "--window", "20000")
    assert rc == 0, err
    df = servesim.capacity(small_file, slo={"ttft_p99": "500ms"}, window=20000)
    assert df.attrs["report"] == json.loads(j.read_text())
    assert len(df) == 1 and df.loc[0, "gpu"] == "h200"
    assert 0 < df.loc[0, "max_rate_per_replica"] <= df.loc[0, "saturation_ci.lo"]
    assert df.loc[0, "max_rate_per_replica_lo"] <= df.loc[0, "max_rate_per_replica"]
    assert df.loc[0, "validation.window_requests"] == 20000
    assert "at_max.point.metrics.ttft_ms.p99.mean" in df.columns


def test_search_matches_cli_csv(small_file, tmp_path):
    c = tmp_path / "s.csv"
    rc, _, err = run_cli("search", small_file, "--slo", "ttft_p99=1s", "--target-rate", "30",
                         "--max-num-seqs", "16,32", "--csv", c, "--window", "20000")
    assert rc == 0, err
    df = servesim.search(small_file, slo="ttft_p99=1s", target_rate=30, max_num_seqs=[16, 32],
                         window=20000)
    pd.testing.assert_frame_equal(df, pd.read_csv(c))
    assert len(df) == 2


def test_analysis_errors_raise_scenario_error(small_file):
    with pytest.raises(servesim.ScenarioError, match="ttft_p99"):
        servesim.capacity(small_file, slo="ttft_p99=-1s")
    with pytest.raises(ValueError, match="executor"):
        servesim.sweep(small_file, rates=[5], executor="dask")


def test_capacity_of_a_disaggregated_scenario_is_the_pd_split_search(in_repo, tmp_path):
    j = tmp_path / "pd.json"
    sc = "scenarios/disagg_arxiv_pd_ratio.json"
    short = ["--set", "workload.num_requests=400", "--set", "metrics.warmup_requests=40"]
    rc, _, err = run_cli("capacity", sc, *short, "--slo", "ttft_p99=3s", "--target-rate", "8",
                         "--max-prefill", "3", "--max-decode", "2", "--json", j)
    assert rc == 0, err
    df = servesim.capacity(sc, slo="ttft_p99=3s", target_rate=8, max_prefill=3, max_decode=2,
                           **{"workload.num_requests": 400, "metrics.warmup_requests": 40})
    assert df.attrs["report"] == json.loads(j.read_text())
    cheapest = df.attrs["report"]["pd_sizing"]["cheapest"]
    assert cheapest is not None
    passed = df[df["at_target.feasible"]]
    assert (passed.iloc[0]["prefill"], passed.iloc[0]["decode"]) == (cheapest["prefill"],
                                                                     cheapest["decode"])
