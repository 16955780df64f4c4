"""sweep / loops / capacity / search / compare / validate / fit: the CLI's analysis
commands as Python calls, each returning its machine-readable output.

Each runs the command with its JSON (and CSV) outputs written to a private
temporary folder and returns a DataFrame built from them, with the whole
JSON report in ``.attrs["report"]`` and the console table in
``.attrs["table"]`` (fit: a FitResult with the fitted scenario).
"""
from __future__ import annotations

import io
import json
import os
import tempfile
from dataclasses import dataclass
from typing import (TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence,
                    Tuple, Union)

from ._api import Overrides, ScenarioArg, _call, _read, _Scenario, _set_args

if TYPE_CHECKING:
    import pandas as pd

# A list option: a comma string, one value, or a sequence of them.
ListArg = Union[str, int, float, Sequence[Union[str, int, float]], None]
# SLO terms: "ttft_p99=2s,tpot_p99=100ms" or {"ttft_p99": "2s", ...}.
SloArg = Union[str, Mapping[str, Any]]
# Where the independent simulations run: None / "local", "ray",
# "ray:ADDRESS", or an executor object (see servesim.executors).
ExecutorArg = Any
Option = Tuple[str, Any]


def _list(values: ListArg) -> Optional[str]:
    if values is None:
        return None
    if isinstance(values, (str, int, float)):
        return str(values)
    return ",".join(str(v) for v in values)


def _slo(slo: Optional[SloArg]) -> Optional[str]:
    if isinstance(slo, Mapping):
        return ",".join(f"{k}={v}" for k, v in slo.items())
    return slo


def _options(options: Sequence[Option]) -> List[str]:
    args: List[str] = []
    for flag, value in options:
        if value is not None and value is not False:
            args += [flag] if value is True else [flag, str(value)]
    return args


Frame = Callable[[Dict[str, Any], Optional[str]], "pd.DataFrame"]


def _analysis(command: str, scenario: ScenarioArg, options: Sequence[Option],
              overrides: Overrides, dotted: Mapping[str, Any], jobs: Optional[int],
              executor: ExecutorArg, outputs: Sequence[str], frame: Frame,
              json_flag: str = "--json", scenario_b: ScenarioArg = None,
              extra_args: Sequence[str] = ()) -> pd.DataFrame:
    """Runs an analysis command with its JSON output (`json_flag`) and --csv
    where `outputs` asks, and returns frame(report, csv_text) with the
    report and the console table in ``.attrs``. `scenario_b`: compare's
    second scenario."""
    from .executors import executor_scope

    with tempfile.TemporaryDirectory(prefix="servesim-") as folder:
        two = scenario_b is not None
        sc = _Scenario(scenario, folder, "A" if two else "")
        if two:
            sc.others.append(_Scenario(scenario_b, folder, "B"))
        args = [command, *sc.args, *(sc.others[0].args if two else []),
                *_set_args(overrides, dotted), *extra_args, *_options(options)]
        paths = {flag: os.path.join(folder, f"out{i}") for i, flag in
                 enumerate((json_flag, *(f"--{o}" for o in outputs)))}
        for flag, p in paths.items():
            args += [flag, p]
        with executor_scope(executor) as executor_jobs:
            j = jobs if jobs is not None else executor_jobs
            if j is not None:
                args += ["-j", str(j)]
            table = _call(args, sc, capture=True)
        texts = {flag: _read(p, sc) for flag, p in paths.items()}
    report = json.loads(texts[json_flag])
    df = frame(report, texts.get("--csv"))
    df.attrs["report"] = report
    df.attrs["table"] = table
    return df


def _csv_frame(report: Dict[str, Any], csv_text: Optional[str]) -> pd.DataFrame:
    import pandas as pd

    return pd.read_csv(io.StringIO(csv_text or ""))


def sweep(scenario: ScenarioArg = None, overrides: Overrides = None, *,
          rates: ListArg = None, utilizations: ListArg = None, replications: int = 5,
          jobs: Optional[int] = None, executor: ExecutorArg = None,
          **dotted: Any) -> pd.DataFrame:
    """`servesim sweep`: latency vs load. One row per point (the --csv
    columns); ``.attrs["report"]`` is the --json report, ``.attrs["table"]``
    the console table. ``executor="ray"`` runs each simulation as a Ray task."""
    options = [("--rates", _list(rates)), ("--utilizations", _list(utilizations)),
               ("-r", replications)]
    return _analysis("sweep", scenario, options, overrides, dotted, jobs, executor,
                     ("csv",), _csv_frame)


def _loops_frame(report: Dict[str, Any], _csv: Optional[str]) -> pd.DataFrame:
    import pandas as pd

    # Nested arms become columns such as "closed.queue_mean_ms" and
    # "open_poisson.ttft_p99_ms"; the M/M/1 and M/G/1 curves stay in
    # .attrs["report"]["loops"]["theory"].
    df = pd.json_normalize(report["loops"]["points"], sep=".")
    arms = {"closed": 1, "open_poisson": 2, "open_gamma": 3}
    order = sorted(df.columns, key=lambda c: (
        arms.get(c.split(".")[0], 0),
        _LOOPS_FIRST.index(c) if c in _LOOPS_FIRST else len(_LOOPS_FIRST)))
    return df[order]


# The lesson table's leading columns, before the three arms'.
_LOOPS_FIRST = ("concurrency", "throughput_rps", "utilization", "mm1_wait_ms", "mg1_wait_ms")


def loops(scenario: ScenarioArg = None, overrides: Overrides = None, *,
          concurrency: ListArg = None, burstiness: Optional[float] = None,
          replications: int = 3, jobs: Optional[int] = None,
          **dotted: Any) -> pd.DataFrame:
    """`servesim loops`: the open- vs closed-loop lesson. One row per
    closed-loop client count N (``concurrency``, default 1, 2, 4, ... up to
    max_num_seqs): its achieved ``throughput_rps`` and ``utilization``
    (of the saturation throughput ``.attrs["report"]["loops"]
    ["saturation_rps"]``), the M/M/1 and M/G/1 waits at that load
    (``mm1_wait_ms``, ``mg1_wait_ms``), and per arm -- ``closed``,
    ``open_poisson``, ``open_gamma`` (gamma arrivals of shape
    ``burstiness``, default 0.5) -- ``queue_mean_ms``, ``ttft_p50_ms``,
    ``ttft_p99_ms``, ``unstable`` and ``stable_fraction`` as
    "closed.queue_mean_ms" etc. ``.attrs["report"]["loops"]["explanation"]``
    is the lesson's text."""
    options = [("--concurrency", _list(concurrency)), ("--burstiness", burstiness),
               ("-r", replications), ("-q", True)]
    return _analysis("loops", scenario, options, overrides, dotted, jobs, None, (),
                     _loops_frame)


def _capacity_frame(report: Dict[str, Any], _csv: Optional[str]) -> pd.DataFrame:
    import pandas as pd

    if "pd_sizing" in report:  # a disaggregated scenario: one row per P:D split run
        return pd.json_normalize(report["pd_sizing"]["splits"], sep=".")
    rows = [{k: v for k, v in row.items() if not isinstance(v, list)}
            for row in report["capacity"]["rows"]]
    # Nested figures become columns such as "at_max.point.metrics.ttft_ms.p99.mean";
    # every rate tried stays in .attrs["report"] (rows[i]["evaluations"]).
    return pd.json_normalize(rows, sep=".")


def _validation(window: Optional[int], window_share: Optional[float],
                rate_precision: Optional[float], max_windows: Optional[int]) -> List[Option]:
    return [("--window", window), ("--window-share", window_share),
            ("--rate-precision", rate_precision), ("--max-windows", max_windows)]


def capacity(scenario: ScenarioArg = None, overrides: Overrides = None, *, slo: SloArg,
             target_rate: Optional[float] = None, candidates: ListArg = None,
             replications: int = 3, max_replications: int = 20, precision: float = 0.05,
             prices: Optional[str] = None, jobs: Optional[int] = None,
             executor: ExecutorArg = None, max_prefill: Optional[int] = None,
             max_decode: Optional[int] = None, window: Optional[int] = None,
             window_share: Optional[float] = None, rate_precision: Optional[float] = None,
             max_windows: Optional[int] = None, **dotted: Any) -> pd.DataFrame:
    """`servesim capacity`: the highest rate meeting `slo` ("ttft_p99=2s,..."
    or {"ttft_p99": "2s"}) per candidate ("h200:1,h200:2" or a list). One row
    per candidate, from the --json report's rows (nested values flattened
    as "at_max.point.metrics.ttft_ms.p99.mean"; the rates tried are in
    ``.attrs["report"]["capacity"]["rows"][i]["evaluations"]``). A scenario
    with /disaggregation (target_rate required) gets the P:D split search
    instead: one row per split run (``prefill``, ``decode``, ``gpus``,
    ``at_target.feasible``, ...), the answer in
    ``.attrs["report"]["pd_sizing"]["cheapest"]``. The answer is validated
    in long windows (``window`` requests each, default 200,000; 0 keeps the
    screening answer): ``max_rate_per_replica`` with its lower end
    ``max_rate_per_replica_lo``, the evidence under ``validation.*``."""
    options = [("--slo", _slo(slo)), ("--target-rate", target_rate),
               ("--candidates", _list(candidates)), ("-r", replications),
               ("--max-replications", max_replications), ("--precision", precision),
               ("--prices", prices), ("--max-prefill", max_prefill),
               ("--max-decode", max_decode)] + _validation(window, window_share,
                                                          rate_precision, max_windows)
    return _analysis("capacity", scenario, options, overrides, dotted, jobs, executor, (),
                     _capacity_frame)


def search(scenario: ScenarioArg = None, overrides: Overrides = None, *, slo: SloArg,
           target_rate: float, gpus: ListArg = None, tp: ListArg = None,
           max_num_seqs: ListArg = None, max_num_batched_tokens: ListArg = None,
           chunked_prefill: Union[bool, str, Sequence[bool], None] = None,
           routers: ListArg = None, replications: int = 3, max_replications: int = 20,
           precision: float = 0.05, max_replicas: int = 64, exhaustive: bool = False,
           prices: Optional[str] = None, jobs: Optional[int] = None,
           executor: ExecutorArg = None, window: Optional[int] = None,
           window_share: Optional[float] = None, rate_precision: Optional[float] = None,
           max_windows: Optional[int] = None, **dotted: Any) -> pd.DataFrame:
    """`servesim search`: the cheapest deployment meeting `slo` at
    `target_rate` over GPU x TP x engine settings (each a list or a comma
    string), and with `routers` ranked by fleets behind those routers. One
    row per candidate (the --csv columns, Pareto fronts included)."""
    chunked: Optional[str]
    if chunked_prefill is None or isinstance(chunked_prefill, str):
        chunked = chunked_prefill
    else:
        flags = ([chunked_prefill] if isinstance(chunked_prefill, bool)
                 else list(chunked_prefill))
        chunked = ",".join("on" if c else "off" for c in flags)
    options = [("--slo", _slo(slo)), ("--target-rate", target_rate), ("--gpus", _list(gpus)),
               ("--tp", _list(tp)), ("--max-num-seqs", _list(max_num_seqs)),
               ("--max-num-batched-tokens", _list(max_num_batched_tokens)),
               ("--chunked-prefill", chunked), ("--routers", _list(routers)),
               ("-r", replications),
               ("--max-replications", max_replications), ("--precision", precision),
               ("--max-replicas", max_replicas), ("--exhaustive", exhaustive),
               ("--prices", prices)] + _validation(window, window_share, rate_precision,
                                                  max_windows)
    return _analysis("search", scenario, options, overrides, dotted, jobs, executor,
                     ("csv",), _csv_frame)


def _compare_frame(report: Dict[str, Any], _csv: Optional[str]) -> pd.DataFrame:
    import pandas as pd

    # Per-replication values ("a", "b": lists) stay in .attrs["report"].
    rows = [{k: v for k, v in m.items() if not isinstance(v, list)}
            for m in report["metrics"]]
    df: pd.DataFrame = pd.json_normalize(rows, sep=".").rename(columns={"name": "metric"})
    df.insert(1, "primary", df["metric"] == report["primary"])
    first = [c for c in _COMPARE_ORDER if c in df.columns]
    result: pd.DataFrame = df[first + [c for c in df.columns if c not in first]]
    return result


_COMPARE_ORDER = ("metric", "primary", "unit", "better", "a_mean", "b_mean",
                  "difference.mean", "difference.lo", "difference.hi", "ratio.mean",
                  "ratio.lo", "ratio.hi", "pairs", "verdict")


def _sets(flag: str, overrides: Overrides) -> List[str]:
    args: List[str] = []
    for s in _set_args(overrides, {}):
        if s != "--set":
            args += [flag, s]
    return args


def compare(a: ScenarioArg = None, b: ScenarioArg = None, overrides: Overrides = None, *,
            b_overrides: Overrides = None, a_overrides: Overrides = None,
            primary: Optional[str] = None, precision: Optional[float] = None,
            min_replications: Optional[int] = None, max_replications: Optional[int] = None,
            utilization: Optional[float] = None, slo: Optional[SloArg] = None,
            saturation: bool = True, jobs: Optional[int] = None,
            **dotted: Any) -> pd.DataFrame:
    """`servesim compare`: is B better than A? Paired replications with
    common random numbers until the `primary` metric (default "ttft_p99")
    is resolved. B is scenario `b`, or `a` with ``b_overrides`` (--set-b);
    ``overrides`` / keyword arguments change both (--set), ``a_overrides``
    A only. One row per metric: ``metric``, ``primary`` (bool), ``unit``,
    ``better`` ("lower"/"higher"), ``a_mean``, ``b_mean``, ``difference.mean``
    / ``.lo`` / ``.hi`` (B - A and its interval), ``ratio.mean`` / ``.lo`` /
    ``.hi`` (B/A), ``pairs`` and ``verdict`` ("better", "worse", "no
    detectable difference at this precision", ...). The stop rule, each
    variant's load and the per-replication values are in
    ``.attrs["report"]``. ``saturation=False`` skips the runs that estimate
    each variant's saturation throughput (mu)."""
    if b is None and not b_overrides:
        raise ValueError("compare: expected a scenario b, or b_overrides making B from a")
    if b is not None and a is None:
        raise ValueError("compare: scenario b needs a scenario a (None is not a file)")
    options = [("--primary", primary), ("--precision", precision),
               ("--min-replications", min_replications),
               ("--max-replications", max_replications),
               ("--utilization", utilization), ("--slo", _slo(slo)),
               ("--no-saturation", not saturation), ("-q", True)]
    extra = [*_sets("--set-a", a_overrides), *_sets("--set-b", b_overrides)]
    return _analysis("compare", a, options, overrides, dotted, jobs, None, (),
                     _compare_frame, json_flag="--save-result", scenario_b=b,
                     extra_args=extra)


def _validate_frame(report: Dict[str, Any], _csv: Optional[str]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(report["rows"], columns=["metric", "unit", "measured", "predicted",
                                                 "error_pct", "peer_error_pct"])


def validate(scenario: ScenarioArg, overrides: Overrides = None, *,
             measured: Optional[Union[str, "os.PathLike[str]"]] = None,
             fields: Optional[Mapping[str, str]] = None,
             peer_summary: Optional[Union[str, "os.PathLike[str]"]] = None,
             **dotted: Any) -> pd.DataFrame:
    """`servesim validate --save-json`: replay a measured serving run (the
    scenario's trace, or ``measured``; ``fields`` renames the log's fields
    as --field KEY=NAME) and compare. One row per table line: ``metric``
    ("TTFT mean", "E2E p99", "makespan", ...), ``unit``, ``measured``,
    ``predicted``, ``error_pct`` ((predicted - measured) / measured) and
    ``peer_error_pct`` (another simulator's published error, NaN without a
    peer summary). Per-request errors and correlations, the over-time
    errors and the front end's delay are in ``.attrs["report"]``."""
    options = [("--measured", os.fspath(measured) if measured is not None else None),
               ("--peer-summary",
                os.fspath(peer_summary) if peer_summary is not None else None)]
    extra = [a for k, v in (fields or {}).items() for a in ("--field", f"{k}={v}")]
    return _analysis("validate", scenario, options, overrides, dotted, None, None, (),
                     _validate_frame, json_flag="--save-json", extra_args=extra)


@dataclass
class FitResult:
    """`servesim fit`'s answer: ``scenario`` is the ready-to-run scenario it
    fitted to the log (a dict: pass it to run(), sweep(), ...; lognormal
    lengths, gamma arrivals at the log's rate), ``report`` the text it
    prints (length percentiles, fit quality, arrival burstiness)."""
    scenario: Dict[str, Any]
    report: str


def fit(log: Union[str, "os.PathLike[str]"], *, format: Optional[str] = None,
        field_prompt: Optional[str] = None, field_completion: Optional[str] = None,
        field_timestamp: Optional[str] = None, timestamp_unit: Optional[str] = None,
        model: Optional[str] = None, log_type: Optional[str] = None,
        max_bad_fraction: Optional[float] = None) -> FitResult:
    """`servesim fit LOG --out ...`: summarise a request log or trace and fit
    a scenario to it (options as the CLI's: ``format`` jsonl | azure |
    mooncake | lengths | burstgpt | sessions, guessed by default, ...)."""
    with tempfile.TemporaryDirectory(prefix="servesim-") as folder:
        sc = _Scenario(None, folder)
        out = os.path.join(folder, "fit.json")
        options = [("--format", format), ("--field-prompt", field_prompt),
                   ("--field-completion", field_completion),
                   ("--field-timestamp", field_timestamp),
                   ("--timestamp-unit", timestamp_unit), ("--model", model),
                   ("--log-type", log_type), ("--max-bad-fraction", max_bad_fraction)]
        report = _call(["fit", os.fspath(log), *_options(options), "--out", out], sc,
                       capture=True)
        with open(out) as f:
            scenario = json.load(f)
    # The report's last line names the temporary file, gone by now.
    lines = [line for line in report.splitlines(keepends=True)
             if not line.startswith("Wrote scenario ")]
    return FitResult(scenario, "".join(lines))
