"""The CLI's commands as Python calls: the plumbing, Result and run
(the analyses are in _analyses.py).

Each call builds the command line the CLI would get and runs it in this
process (servesim._core.cli, the GIL released), with the outputs written
to a private temporary folder and read back: the same code path, so the
same bytes. Scenarios are a path, a dict or a JSON string; overrides are
`--set`'s dotted paths, as keyword arguments (``**{"workload.arrival.rate":
20}``, ``seed=3``) or an ``overrides={...}`` dict.
"""
from __future__ import annotations

import io
import json
import os
import sys
import tempfile
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Union

from . import _core
from ._scenarios import find_shipped

if TYPE_CHECKING:
    import pandas as pd

# A scenario: a path (or a shipped scenario's name, see scenario_path), a
# dict, a JSON string, or None for the embedded default chat scenario.
ScenarioArg = Union[str, "os.PathLike[str]", Mapping[str, Any], None]
# --set overrides: dotted path -> a JSON value.
Overrides = Optional[Mapping[str, Any]]


class ScenarioError(ValueError):
    """Bad input: the CLI's one-line message (file, JSON path, expected, got)."""


class Result:
    """One run: ``summary`` (dict, the --save-result keys), ``summary_json``
    (its exact text) and ``requests`` (DataFrame, the --save-detailed
    columns; parsed on first use)."""

    summary_json: str
    summary: Dict[str, Any]

    def __init__(self, summary_json: str, requests_csv: Optional[str],
                 steps_text: Optional[str] = None, steps_format: str = "csv") -> None:
        self.summary_json = summary_json
        self.summary = json.loads(summary_json)
        self._csv = requests_csv
        self._requests: Optional[pd.DataFrame] = None
        self._steps_text = steps_text
        self._steps_format = steps_format
        self._steps: Optional[pd.DataFrame] = None

    @property
    def requests(self) -> pd.DataFrame:
        if self._requests is None:
            if self._csv is None:
                raise ValueError("run(..., requests=False) kept no per-request rows")
            self._requests = _requests_frame(self._csv)
        return self._requests

    @property
    def steps(self) -> pd.DataFrame:
        """The --save-steps rows (one per executed step per replica) as a
        DataFrame, when run(..., steps=True) asked for them."""
        if self._steps is None:
            if self._steps_text is None:
                raise ValueError("run(..., steps=False) kept no step rows; pass steps=True")
            import pandas as pd

            text = io.StringIO(self._steps_text)
            self._steps = (pd.read_json(text, lines=True) if self._steps_format == "jsonl"
                           else pd.read_csv(text))
        return self._steps

    def __repr__(self) -> str:
        s = self.summary
        return (f"<servesim.Result {s.get('completed')} requests, "
                f"p99 TTFT {s.get('p99_ttft_ms', float('nan')):.2f} ms>")


# --save-detailed columns and their dtypes; times are NaN where the event
# did not happen (a rejected or unfinished request).
_REQUEST_DTYPES = {
    "id": "int64", "status": "category", "measured": "int8", "client": "int32",
    "replica": "int32", "prompt_tokens": "int64", "output_tokens": "int64",
    "arrival_s": "float64", "send_s": "float64", "first_scheduled_s": "float64",
    "first_token_s": "float64", "finish_s": "float64", "ttft_ms": "float64",
    "e2el_ms": "float64", "queueing_delay_ms": "float64", "preemptions": "int32",
    "reject_reason": "string", "class": "string",
}


def _requests_frame(csv_text: str) -> pd.DataFrame:
    import pandas as pd

    df = pd.read_csv(io.StringIO(csv_text), dtype=_REQUEST_DTYPES, keep_default_na=False,
                     na_values={c: [""] for c in _REQUEST_DTYPES
                                if c not in ("reject_reason", "class")})
    df["measured"] = df["measured"].astype(bool)
    df["reject_reason"] = df["reject_reason"].replace("", pd.NA)
    df["class"] = df["class"].replace("", pd.NA)
    return df


class _Scenario:
    """The scenario argument as a CLI argument: a path as given (so reports
    name it as the CLI would), or a dict / JSON text written to a file whose
    name is then replaced by a label in messages and outputs."""

    def __init__(self, scenario: ScenarioArg, folder: str, role: str = "") -> None:
        # role: "A" / "B" for compare's two scenarios (files and labels apart).
        self.args: List[str] = []
        self.label: Optional[str] = None
        self.path: Optional[str] = None
        self.others: List[_Scenario] = []  # whose labels fix() also restores
        if scenario is None:
            return
        suffix = f" {role}" if role else ""
        if isinstance(scenario, Mapping):
            text, self.label = json.dumps(dict(scenario)), f"<dict{suffix}>"
        elif isinstance(scenario, str) and scenario.lstrip().startswith("{"):
            text, self.label = scenario, f"<json string{suffix}>"
        elif isinstance(scenario, (str, os.PathLike)):
            path = os.fspath(scenario)
            # A path that exists here is taken as given (reports name it so);
            # else a shipped scenario's name ("default_chat", or
            # "scenarios/default_chat.json" from outside the repository).
            if not os.path.exists(path):
                path = find_shipped(path) or path
            self.args = [path]
            return
        else:
            raise TypeError("scenario: expected a path, a dict or a JSON string, got "
                            + type(scenario).__name__)
        self.path = os.path.join(folder, f"scenario{role}.json")
        with open(self.path, "w") as f:
            f.write(text)
        self.args = [self.path]

    def fix(self, text: Optional[str]) -> Optional[str]:
        for other in self.others:
            text = other.fix(text)
        if self.path is None or self.label is None or text is None:
            return text
        # In JSON outputs the path appears escaped; this path needs none.
        return text.replace(self.path, self.label)


def _set_args(overrides: Overrides, dotted: Mapping[str, Any]) -> List[str]:
    sets: Dict[str, Any] = {}
    sets.update(overrides or {})
    sets.update(dotted)
    args = []
    for key, value in sets.items():
        # JSON text, which --set parses as JSON: 20 stays a number, "fcfs"
        # a string, {...} an object.
        args += ["--set", f"{key}={json.dumps(value)}"]
    return args


def _call(args: Sequence[str], scenario: _Scenario, capture: bool = False) -> str:
    rc, out, err = _core.cli(args, capture)
    if rc != 0:
        raise ScenarioError(scenario.fix(err) or f"servesim exited with code {rc}")
    return scenario.fix(out) or ""


def _read(path: str, scenario: _Scenario) -> str:
    with open(path) as f:
        return scenario.fix(f.read()) or ""


def cli(args: Sequence[Union[str, int, float, "os.PathLike[str]"]]) -> int:
    """Runs ``servesim ARGS...`` in this process, printing as the CLI does;
    returns the exit code."""
    rc, _, err = _core.cli([os.fspath(a) if isinstance(a, os.PathLike) else str(a)
                            for a in args], False)
    if err:
        print(f"servesim: error: {err}", file=sys.stderr)
    return rc


def run(scenario: ScenarioArg = None, overrides: Overrides = None, *, requests: bool = True,
        steps: bool = False, steps_every: Optional[float] = None,
        steps_from: Optional[float] = None, steps_until: Optional[float] = None,
        **dotted: Any) -> Result:
    """Simulates one scenario (None: the embedded default chat scenario).

    Returns a Result: ``.summary`` is the dict `servesim run --save-result`
    writes (``.summary_json`` its exact text), ``.requests`` the
    `--save-detailed` rows as a DataFrame (``requests=False`` skips them),
    and with ``steps=True`` ``.steps`` the `--save-steps` rows (thinned as
    --save-steps-every / --save-steps-from / --save-steps-until by
    ``steps_every``, ``steps_from``, ``steps_until`` in seconds).
    Raises ScenarioError with the CLI's one-line message on bad input.
    """
    with tempfile.TemporaryDirectory(prefix="servesim-") as folder:
        sc = _Scenario(scenario, folder)
        result_path = os.path.join(folder, "result.json")
        detailed_path = os.path.join(folder, "requests.csv")
        args = ["run", *sc.args, *_set_args(overrides, dotted), "-q",
                "--save-result", result_path]
        if requests:
            args += ["--save-detailed", detailed_path]
        steps_path = os.path.join(folder, "steps.csv")
        if steps:
            args += ["--save-steps", steps_path]
            for flag, value in (("--save-steps-every", steps_every),
                                ("--save-steps-from", steps_from),
                                ("--save-steps-until", steps_until)):
                if value is not None:
                    args += [flag, str(value)]
        _call(args, sc)
        summary = _read(result_path, sc)
        csv = None
        if requests:
            with open(detailed_path) as f:
                csv = f.read()
        steps_text = None
        if steps:
            with open(steps_path) as f:
                steps_text = f.read()
    return Result(summary, csv, steps_text)


