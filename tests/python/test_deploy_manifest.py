"""`servesim search` writes deployment files that run (issue 28 item 5): its
Kubernetes manifests pass the Kubernetes 1.37 OpenAPI schema in strict mode
(kubernetes-validate: an unknown or misspelled field fails) and carry what a
vLLM pod needs, and its vllm serve line fits the simulated KV cache. The plan
is Llama-3.1-70B on 2 x H100 at 20 req/s, on a short workload."""
import json
import re

import kubernetes_validate
import pytest
import yaml

from conftest import run_cli

K8S_VERSION = "1.37.0"


@pytest.fixture(scope="module")
def plan(tmp_path_factory):
    out = tmp_path_factory.mktemp("deploy")
    code, stdout, stderr = run_cli(
        "search", "scenarios/capacity_plan.json",
        "--set", "model=llama-3.1-70b", "--set", "hardware.tp=2",
        "--set", "hardware.gpu=h100-sxm",
        "--set", "workload.num_requests=600", "--set", "metrics.warmup_requests=60",
        "--slo", "ttft_p99=1s,tpot_p99=50ms", "--target-rate", "20",
        "--chunked-prefill", "on,off", "-j2",
        "--json", out / "search.json", "--vllm-args", out / "vllm_args.txt",
        "--k8s", out / "deployment.yaml")
    assert code == 0, stderr
    return {
        "stdout": stdout,
        "json": json.loads((out / "search.json").read_text()),
        "args": (out / "vllm_args.txt").read_text(),
        "docs": [d for d in yaml.safe_load_all((out / "deployment.yaml").read_text())
                 if d is not None],
    }


def test_every_manifest_passes_the_kubernetes_schema_strictly(plan):
    kinds = []
    for doc in plan["docs"]:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
        kinds.append(doc["kind"])
    assert kinds == ["Deployment", "Service"]


def test_the_schema_check_can_fail(plan):
    # A misspelled probe field and a field of the wrong type are refused:
    # the check above is not vacuous.
    deployment = plan["docs"][0]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    for field, value in (("initialDelaySecond", 60), ("ports", "8000")):
        bad = json.loads(json.dumps(deployment))
        bad_container = bad["spec"]["template"]["spec"]["containers"][0]
        if field == "ports":
            bad_container["ports"] = value
        else:
            bad_container["livenessProbe"][field] = value
        with pytest.raises(kubernetes_validate.ValidationError):
            kubernetes_validate.validate(bad, K8S_VERSION, strict=True)
    assert container["livenessProbe"]["httpGet"]["path"] == "/health"


def test_the_deployment_runs_the_cheapest_plan(plan):
    deployment, service = plan["docs"]
    cheapest = plan["json"]["search"]["cheapest"]
    best = plan["json"]["search"]["rows"][cheapest["index"]]
    assert deployment["spec"]["replicas"] == cheapest["replicas"]
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    # Pinned to the vLLM release servesim follows, never :latest.
    assert container["image"] == "vllm/vllm-openai:v0.33.0"
    gpus = container["resources"]
    assert gpus["requests"]["nvidia.com/gpu"] == gpus["limits"]["nvidia.com/gpu"] == best["tp"] == 2
    (token,) = [e for e in container["env"] if e["name"] == "HF_TOKEN"]
    assert token["valueFrom"]["secretKeyRef"]["key"] == "token"
    shm = [v for v in pod["volumes"] if v.get("emptyDir", {}).get("medium") == "Memory"]
    assert [m["mountPath"] for m in container["volumeMounts"]
            if m["name"] == shm[0]["name"]] == ["/dev/shm"]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": "/health", "port": 8000}, probe
    # The startup probe waits long enough to download and load 140 GB.
    startup = container["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 1200
    # The Service selects the Deployment's pods on port 8000.
    assert service["spec"]["type"] == "ClusterIP"
    assert service["spec"]["selector"].items() <= pod_labels(deployment).items()
    assert service["spec"]["ports"][0]["port"] == 8000
    # The container runs exactly the vllm serve line.
    line = plan["args"].splitlines()[0].split()
    assert line[:2] == ["vllm", "serve"] and line[1:] == container["args"]


def pod_labels(deployment):
    return deployment["spec"]["template"]["metadata"]["labels"]


def test_the_serve_line_fits_the_kv_cache(plan):
    line = plan["args"].splitlines()[0]
    assert line.startswith("vllm serve meta-llama/Llama-3.1-70B-Instruct ")
    max_model_len = int(re.search(r"--max-model-len (\d+)", line).group(1))
    cheapest = plan["json"]["search"]["cheapest"]
    assert cheapest["max_model_len"] == max_model_len
    assert 0 < max_model_len <= cheapest["kv_token_capacity"] < 131072
    # The cap is said, in the file and on the console.
    notes = plan["args"].splitlines()[1:]
    assert notes and notes[0].startswith("# --max-model-len %d is all the KV cache holds"
                                         % max_model_len)
    assert "is all the KV cache holds" in plan["stdout"]
    # Every candidate vLLM would start: without chunking its budget is at
    # least max_model_len (raised, and simulated so).
    rows = plan["json"]["search"]["rows"]
    unchunked = [r for r in rows if not r["chunked_prefill"]]
    assert unchunked
    for row in unchunked:
        assert row["max_num_batched_tokens"] >= row["max_model_len"]
        assert row["max_model_len"] <= row["kv_token_capacity"]
        assert row["asked_max_num_batched_tokens"] == 8192
