#!/usr/bin/env python3
"""Regenerates the model files that come from vendored Hugging Face configs.

Each entry of tests/model/hf_configs/imports.json names a config there and
the --name, --source and --served-hf-id it is imported with; the result is
models/llm/<name>.json, written by `servesim model import` itself (the unit
test HfImportTest.ShippedFilesAreTheImportersOutput checks they agree).

    python3 tools/models/import_hf_configs.py --cli build/servesim
"""
import argparse
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", default="build/servesim", help="the servesim binary")
    args = parser.parse_args()
    configs = ROOT / "tests/model/hf_configs"
    for entry in json.loads((configs / "imports.json").read_text()):
        cmd = [args.cli, "model", "import", str(configs / entry["config"]),
               "--name", entry["name"], "--source", entry["source"],
               "--served-hf-id", entry["served_hf_id"],
               "--out", str(ROOT / "models/llm" / (entry["name"] + ".json"))]
        if subprocess.run(cmd, cwd=ROOT).returncode != 0:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
