"""loops / compare / validate / fit from Python against the CLI's own outputs, shipped
scenarios by name, and the type hints every public name carries."""
import inspect
import json
import os

import pytest

import servesim
from conftest import REPO, run_cli, small_scenario


def test_loops_matches_cli_json(small_file, tmp_path):
    j = tmp_path / "l.json"
    rc, out, err = run_cli("loops", small_file, "--concurrency", "2,8", "-r", "2", "-q",
                           "--json", j)
    assert rc == 0, err
    df = servesim.loops(small_file, concurrency=[2, 8], replications=2)
    assert df.attrs["report"] == json.loads(j.read_text())
    assert df.attrs["table"] == out
    # The lesson table: one row per N, the closed loop and both open loops.
    assert list(df["concurrency"]) == [2, 8]
    assert list(df.columns[:5]) == ["concurrency", "throughput_rps", "utilization",
                                    "mm1_wait_ms", "mg1_wait_ms"]
    for arm in ("closed", "open_poisson", "open_gamma"):
        assert df[f"{arm}.queue_mean_ms"].gt(0).all()
        assert df[f"{arm}.unstable"].dtype == bool
    points = df.attrs["report"]["loops"]["points"]
    assert df.loc[1, "open_gamma.ttft_p99_ms"] == points[1]["open_gamma"]["ttft_p99_ms"]


def test_compare_matches_cli_json(small_file, tmp_path):
    j = tmp_path / "c.json"
    rc, out, err = run_cli("compare", small_file, "--set-b", "engine.max_num_seqs=16",
                           "--max-replications", "4", "--no-saturation", "-q",
                           "--save-result", j)
    assert rc == 0, err
    df = servesim.compare(small_file, b_overrides={"engine.max_num_seqs": 16},
                          max_replications=4, saturation=False)
    report = json.loads(j.read_text())
    assert df.attrs["report"] == report and df.attrs["table"] == out
    assert len(df) == len(report["metrics"])
    row = df[df.primary].iloc[0]
    assert row["metric"] == "ttft_p99" and row["unit"] == "ms"
    # Half the sequences at 10 req/s: the queue grows, TTFT p99 is worse.
    assert row["verdict"] == "worse" and row["difference.mean"] > 0
    assert row["ratio.lo"] > 1 and row["b_mean"] > row["a_mean"]


def test_compare_two_dicts_are_told_apart(tmp_path):
    a = small_scenario()
    b = small_scenario()
    b["engine"]["max_num_seqs"] = 16
    df = servesim.compare(a, b, max_replications=3, saturation=False)
    report = df.attrs["report"]
    assert report["a"]["scenario"] == "<dict A>" and report["b"]["scenario"] == "<dict B>"
    assert str(tmp_path) not in df.attrs["table"] and "servesim-" not in df.attrs["table"]


def test_compare_without_b_is_an_error():
    with pytest.raises(ValueError, match="b_overrides"):
        servesim.compare(small_scenario())


def test_fit_returns_the_cli_scenario(tmp_path):
    trace = REPO.parent / "shared" / "traces" / "AzureLLMInferenceTrace_conv.csv"
    if not trace.exists():
        pytest.skip(f"{trace}: the shared traces are not here")
    out = tmp_path / "fit.json"
    rc, text, err = run_cli("fit", trace, "--out", out)
    assert rc == 0, err
    f = servesim.fit(trace)
    assert f.scenario == json.loads(out.read_text())
    assert f.scenario["workload"]["arrival"]["process"] == "gamma"
    assert f.report == "".join(line for line in text.splitlines(keepends=True)
                               if not line.startswith("Wrote scenario "))
    # The fitted scenario runs as it is.
    assert servesim.run(f.scenario, requests=False,
                        **{"workload.num_requests": 200}).summary["completed"] == 200


def test_validate_matches_cli_json(tmp_path, in_repo):
    scenario = "scenarios/measured/vllm-0.19-rtx4090-llama-3.1-8b.json"
    trace = json.loads((REPO / scenario).read_text())["workload"]["trace"]["path"]
    if not (REPO / trace).exists():
        pytest.skip(f"{trace}: the shared serving data are not here")
    j = tmp_path / "v.json"
    rc, out, err = run_cli("validate", scenario, "--save-json", j)
    assert rc == 0, err
    df = servesim.validate(scenario)
    report = json.loads(j.read_text())
    assert df.attrs["report"] == report and df.attrs["table"] == out
    assert report["command"] == "validate" and report["requests"] == 300
    assert df.loc[0, "metric"] == "TTFT mean" and df.loc[0, "unit"] == "ms"
    assert (df["measured"] > 0).all()
    error = (df["predicted"] - df["measured"]) / df["measured"] * 100
    assert (error - df["error_pct"]).abs().max() < 1e-9
    # The bench's own summary beside the log: the peer's errors as a column.
    assert report["peer"] and df["peer_error_pct"].notna().any()
    # Each row's figures are in the console table too.
    assert f'{df.loc[0, "measured"]:.1f}' in out


def test_shipped_scenarios_by_name_from_anywhere(tmp_path, monkeypatch):
    names = servesim.scenarios()
    assert "default_chat" in names and "bench_chat_1m" in names
    path = servesim.scenario_path("bench_chat_1m")
    assert os.path.isabs(path) and path.endswith(os.path.join("scenarios",
                                                              "bench_chat_1m.json"))
    assert servesim.scenario_path("scenarios/default_chat.json") == \
        servesim.scenario_path("default_chat.json") == servesim.scenario_path("default_chat")
    assert servesim.scenario("default_chat") == json.loads(
        (REPO / "scenarios" / "default_chat.json").read_text())
    with pytest.raises(FileNotFoundError, match="did you mean default_chat"):
        servesim.scenario_path("default_chta")
    # Outside the repository, a name and the repository-relative path both
    # reach the shipped file, and give the run the file itself gives.
    monkeypatch.chdir(tmp_path)
    expect = servesim.run(servesim.scenario_path("default_chat"), requests=False,
                          **{"workload.num_requests": 300}).summary
    for spec in ("default_chat", "scenarios/default_chat.json"):
        got = servesim.run(spec, requests=False, **{"workload.num_requests": 300}).summary
        assert got == expect
    # A file of that name here wins over the shipped one.
    (tmp_path / "default_chat.json").write_text(json.dumps(small_scenario()))
    mine = servesim.run("default_chat.json", requests=False).summary
    assert mine["completed"] == 1500 != expect["completed"]
    # A path that is neither still gets the CLI's own message.
    with pytest.raises(servesim.ScenarioError, match="nothere.json: cannot open"):
        servesim.run("nothere.json")


def test_every_public_callable_is_typed():
    for name in servesim.__all__:
        obj = getattr(servesim, name)
        functions = ([obj] if inspect.isfunction(obj) else
                     [f for n, f in inspect.getmembers(obj, inspect.isfunction)
                      if f.__qualname__.startswith(obj.__name__)
                      and (n == "__init__" or not n.startswith("__"))]
                     if inspect.isclass(obj) else [])
        for f in functions:
            params = [p for p in inspect.signature(f).parameters if p != "self"]
            missing = [p for p in params + ["return"] if p not in f.__annotations__]
            assert not missing, f"servesim.{f.__qualname__}: no annotation for {missing}"
    assert isinstance(servesim.__version__, str)
    assert (REPO / "python" / "servesim" / "py.typed").exists()


def test_version_is_the_cli_version():
    rc, out, err = run_cli("--version")
    assert rc == 0, err
    assert servesim.__version__ in out
