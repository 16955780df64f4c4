"""servesim.run against `servesim run`: the same bytes, the same columns,
the same error lines."""
import json

import pandas as pd
import pytest

import servesim
from conftest import run_cli, small_scenario


def test_summary_is_byte_identical_to_the_cli(in_repo, tmp_path):
    out = tmp_path / "cli.json"
    rc, _, err = run_cli("run", "scenarios/default_chat.json", "--set",
                         "workload.num_requests=3000", "-q", "--save-result", out)
    assert rc == 0, err
    r = servesim.run("scenarios/default_chat.json", **{"workload.num_requests": 3000},
                     requests=False)
    assert r.summary_json == out.read_text()
    assert r.summary == json.loads(out.read_text())
    assert r.summary["p99_ttft_ms"] > 0


def test_embedded_default_matches_cli_run(tmp_path):
    out = tmp_path / "cli.json"
    rc, _, err = run_cli("run", "--set", "workload.num_requests=2000", "-q",
                         "--save-result", out)
    assert rc == 0, err
    r = servesim.run(overrides={"workload.num_requests": 2000}, requests=False)
    assert r.summary_json == out.read_text()


def test_requests_frame_has_the_detailed_csv_columns_and_dtypes(small_file, tmp_path):
    csv = tmp_path / "cli.csv"
    rc, _, err = run_cli("run", small_file, "-q", "--save-detailed", csv)
    assert rc == 0, err
    df = servesim.run(small_file).requests
    cli = pd.read_csv(csv)
    assert list(df.columns) == list(cli.columns)
    assert len(df) == len(cli) == 1500
    assert df["id"].dtype == "int64" and df["prompt_tokens"].dtype == "int64"
    assert df["measured"].dtype == bool
    assert isinstance(df["status"].dtype, pd.CategoricalDtype)
    for col in ("arrival_s", "send_s", "first_token_s", "finish_s", "ttft_ms", "e2el_ms"):
        assert df[col].dtype == "float64", col
    finished = df["status"] == "finished"
    assert finished.all()  # 10 req/s on an H200: nothing rejected or left
    # Same numbers as the CLI's CSV, column by column.
    for col in ("ttft_ms", "e2el_ms", "queueing_delay_ms", "prompt_tokens", "output_tokens"):
        assert (df[col].to_numpy() == cli[col].to_numpy()).all(), col


def test_dict_json_string_and_file_give_the_same_run(small_file):
    sc = small_scenario()
    a = servesim.run(small_file, requests=False).summary
    b = servesim.run(sc, requests=False).summary
    c = servesim.run(json.dumps(sc), requests=False).summary
    assert b["servesim"]["scenario"] == "<dict>"
    assert c["servesim"]["scenario"] == "<json string>"
    for s in (b, c):
        s["servesim"]["scenario"] = a["servesim"]["scenario"]
    assert a == b == c


def test_overrides_as_keywords_or_dict(small_file):
    a = servesim.run(small_file, **{"workload.arrival.rate": 20, "seed": 3}, requests=False)
    b = servesim.run(small_file, overrides={"workload.arrival.rate": 20, "seed": 3},
                     requests=False)
    base = servesim.run(small_file, requests=False)
    assert a.summary == b.summary
    assert a.summary["request_rate"] == 20 and base.summary["request_rate"] == 10
    # A string value stays a string: --set hardware.gpu="h100-sxm" (slower).
    c = servesim.run(small_file, **{"hardware.gpu": "h100-sxm"}, requests=False)
    assert c.summary["mean_tpot_ms"] > base.summary["mean_tpot_ms"]


@pytest.mark.parametrize("args,kwargs", [
    (["--set", "workload.arival.rate=3"], {"workload.arival.rate": 3}),
    (["--set", "workload.arrival.rate=-3"], {"workload.arrival.rate": -3}),
    (["--set", "hardware.gpu=\"h9000\""], {"hardware.gpu": "h9000"}),
])
def test_errors_carry_the_cli_line(small_file, args, kwargs):
    rc, _, err = run_cli("run", small_file, "-q", *args)
    assert rc == 2
    with pytest.raises(servesim.ScenarioError) as e:
        servesim.run(small_file, **kwargs)
    assert "servesim: error: " + str(e.value) == err.strip()


def test_missing_file_and_dict_errors_name_their_source(tmp_path):
    missing = tmp_path / "nope.json"
    rc, _, err = run_cli("run", missing, "-q")
    assert rc == 2
    with pytest.raises(servesim.ScenarioError) as e:
        servesim.run(missing)
    assert "servesim: error: " + str(e.value) == err.strip()
    with pytest.raises(servesim.ScenarioError, match=r"^<dict>: /workload/arival: unknown key"):
        servesim.run(small_scenario(workload={"arival": {}}))
    with pytest.raises(TypeError):
        servesim.run(42)


def test_steps_frame_is_the_cli_step_export(small_file, tmp_path):
    steps = tmp_path / "steps.csv"
    rc, _, err = run_cli("run", small_file, "-q", "--save-steps", steps,
                         "--save-steps-every", "7")
    assert rc == 0, err
    r = servesim.run(small_file, requests=False, steps=True, steps_every=7)
    cli = pd.read_csv(steps)
    pd.testing.assert_frame_equal(r.steps, cli)
    assert len(cli) > 10 and (cli["step"] % 7 == 0).all()
    with pytest.raises(ValueError, match="steps=True"):
        servesim.run(small_file, requests=False).steps


def test_version_is_the_clis():
    rc, out, err = run_cli("--version")
    assert rc == 0, err
    assert out.strip() == "servesim " + servesim.__version__
