"""Shared fixtures: the repository root, the CLI binary built from it (the
reference the bindings must match), and small scenarios."""
import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def cli_path():
    path = Path(os.environ.get("SERVESIM_CLI", REPO / "build" / "servesim"))
    if not path.exists():
        pytest.fail(f"{path}: the servesim CLI is needed as the reference "
                    "(build it with .ci/test, or set SERVESIM_CLI)")
    return str(path)


def run_cli(*args, cwd=REPO):
    """The CLI as a subprocess; returns (exit code, stdout, stderr)."""
    p = subprocess.run([cli_path(), *map(str, args)], cwd=cwd, capture_output=True,
                       text=True)
    return p.returncode, p.stdout, p.stderr


def small_scenario(**changes):
    """The default chat deployment with 32 sequences (a saturating run of
    3,200 requests) and 1,500 requests: seconds per analysis."""
    sc = json.loads((REPO / "scenarios" / "default_chat.json").read_text())
    sc["engine"]["max_num_seqs"] = 32
    sc["workload"]["num_requests"] = 1500
    for key, value in changes.items():
        sc[key] = value
    return sc


@pytest.fixture
def in_repo(monkeypatch):
    monkeypatch.chdir(REPO)
    return REPO


@pytest.fixture
def small_file(tmp_path):
    path = tmp_path / "small.json"
    path.write_text(json.dumps(small_scenario()))
    return path
