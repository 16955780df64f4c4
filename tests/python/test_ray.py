"""Ray: each simulation as a task on a real local cluster (2 CPUs), results
equal to the local run; and the package without Ray."""
import json
import os
import subprocess
import sys

import pytest

import servesim
from conftest import REPO, run_cli

if os.environ.get("SERVESIM_REQUIRE_RAY") == "1":
    import ray  # CI installs it: a missing Ray is a failure there
else:
    ray = pytest.importorskip("ray")
from servesim.ray import RayExecutor  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_sweep_on_ray_equals_local(cluster, small_file):
    local = servesim.sweep(small_file, rates=[10, 20], replications=2)
    ex = RayExecutor(progress=False)
    remote = servesim.sweep(small_file, rates=[10, 20], replications=2, executor=ex)
    assert remote.attrs["report"] == local.attrs["report"]
    assert remote.equals(local)
    # The saturating run and the 2 x 2 points are tasks, except replication 0
    # of the point nearest 85% load: its whole output (steps and all) is
    # kept for the report's charts, so it runs here.
    assert ex.done == 4 and ex.failed == 0


def test_capacity_on_ray_equals_local(cluster, small_file):
    local = servesim.capacity(small_file, slo="ttft_p99=500ms,tpot_p99=50ms", window=20000)
    ex = RayExecutor(progress=False)
    remote = servesim.capacity(small_file, slo="ttft_p99=500ms,tpot_p99=50ms", window=20000,
                               executor=ex)
    assert remote.attrs["report"] == local.attrs["report"]
    rates = remote.attrs["report"]["capacity"]["rows"][0]["evaluations"]
    assert ex.done >= 1 + 3 * len(rates)
    assert ex.failed == 0


def test_search_cli_with_ray_equals_cli(cluster, small_file, tmp_path, capfd):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    args = ["search", small_file, "--slo", "ttft_p99=1s", "--target-rate", "30",
            "--max-num-seqs", "16,32", "--window", "20000"]
    rc, _, err = run_cli(*args, "--json", a)
    assert rc == 0, err
    # In this process, so it joins the fixture's cluster.
    from servesim.__main__ import main

    assert main([str(x) for x in args] + ["--json", str(b), "--ray", "auto"]) == 0
    assert json.loads(a.read_text()) == json.loads(b.read_text())
    out, err = capfd.readouterr()
    assert "cheapest meeting the SLO at 30 req/s" in out  # the CLI's table
    assert "servesim.ray: " in err and " simulations done, 0 running" in err


def test_package_works_without_ray(small_file):
    code = ("import sys; sys.modules['ray'] = None\n"
            "import servesim\n"
            f"r = servesim.run({str(small_file)!r}, requests=False)\n"
            "assert r.summary['completed'] == 1500\n"
            "try:\n"
            f"    servesim.sweep({str(small_file)!r}, rates=[5], executor='ray')\n"
            "except ImportError as e:\n"
            "    assert 'servesim[ray]' in str(e); print('ok')\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr
