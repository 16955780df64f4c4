"""run / sweep / capacity / search: the CLI's commands as Python calls.

Each call builds the command line the CLI would get and runs it in this
process (servesim._core.cli, the GIL released), with the outputs written
to a private temporary folder and read back: the same code path, so the
same bytes. Scenarios are a path, a dict or a JSON string; overrides are
`--set`'s dotted paths, as keyword arguments (``**{"workload.arrival.rate":
20}``, ``seed=3``) or an ``overrides={...}`` dict.
"""
import io
import json
import os
import tempfile

from . import _core


class ScenarioError(ValueError):
    """Bad input: the CLI's one-line message (file, JSON path, expected, got)."""


class Result:
    """One run: ``summary`` (dict, the --save-result keys), ``summary_json``
    (its exact text) and ``requests`` (DataFrame, the --save-detailed
    columns; parsed on first use)."""

    def __init__(self, summary_json, requests_csv, steps_text=None, steps_format="csv"):
        self.summary_json = summary_json
        self.summary = json.loads(summary_json)
        self._csv = requests_csv
        self._requests = None
        self._steps_text = steps_text
        self._steps_format = steps_format
        self._steps = None

    @property
    def requests(self):
        if self._requests is None:
            if self._csv is None:
                raise ValueError("run(..., requests=False) kept no per-request rows")
            self._requests = _requests_frame(self._csv)
        return self._requests

    @property
    def steps(self):
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

    def __repr__(self):
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


def _requests_frame(csv_text):
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

    def __init__(self, scenario, folder):
        self.args, self.label, self.path = [], None, None
        if scenario is None:
            return
        if isinstance(scenario, dict):
            text, self.label = json.dumps(scenario), "<dict>"
        elif isinstance(scenario, str) and scenario.lstrip().startswith("{"):
            text, self.label = scenario, "<json string>"
        elif isinstance(scenario, (str, os.PathLike)):
            self.args = [os.fspath(scenario)]
            return
        else:
            raise TypeError("scenario: expected a path, a dict or a JSON string, got "
                            + type(scenario).__name__)
        self.path = os.path.join(folder, "scenario.json")
        with open(self.path, "w") as f:
            f.write(text)
        self.args = [self.path]

    def fix(self, text):
        if self.path is None or text is None:
            return text
        # In JSON outputs the path appears escaped; this path needs none.
        return text.replace(self.path, self.label)


def _set_args(overrides, dotted):
    sets = {}
    sets.update(overrides or {})
    sets.update(dotted)
    args = []
    for key, value in sets.items():
        # JSON text, which --set parses as JSON: 20 stays a number, "fcfs"
        # a string, {...} an object.
        args += ["--set", f"{key}={json.dumps(value)}"]
    return args


def _call(args, scenario, capture=False):
    rc, out, err = _core.cli(args, capture)
    if rc != 0:
        raise ScenarioError(scenario.fix(err) or f"servesim exited with code {rc}")
    return scenario.fix(out)


def cli(args):
    """Runs ``servesim ARGS...`` in this process, printing as the CLI does;
    returns the exit code."""
    rc, _, err = _core.cli([str(a) for a in args], False)
    if err:
        import sys

        print(f"servesim: error: {err}", file=sys.stderr)
    return rc


def run(scenario=None, overrides=None, *, requests=True, steps=False, steps_every=None,
        steps_from=None, steps_until=None, **dotted):
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
        with open(result_path) as f:
            summary = sc.fix(f.read())
        csv = None
        if requests:
            with open(detailed_path) as f:
                csv = f.read()
        steps_text = None
        if steps:
            with open(steps_path) as f:
                steps_text = f.read()
    return Result(summary, csv, steps_text)


def _list(values):
    if values is None:
        return None
    if isinstance(values, (str, int, float)):
        return str(values)
    return ",".join(str(v) for v in values)


def _slo(slo):
    if isinstance(slo, dict):
        return ",".join(f"{k}={v}" for k, v in slo.items())
    return slo


def _analysis(command, scenario, options, overrides, dotted, jobs, executor, outputs,
              frame):
    """Runs an analysis command with --json (and --csv where `outputs` asks)
    and returns frame(report, csv_text) with the report and the console
    table in ``.attrs``."""
    from .executors import executor_scope

    with tempfile.TemporaryDirectory(prefix="servesim-") as folder:
        sc = _Scenario(scenario, folder)
        args = [command, *sc.args, *_set_args(overrides, dotted)]
        for flag, value in options:
            if value is not None and value is not False:
                args += [flag] if value is True else [flag, str(value)]
        paths = {o: os.path.join(folder, f"out.{o}") for o in ("json", *outputs)}
        for o, p in paths.items():
            args += [f"--{o}", p]
        with executor_scope(executor) as executor_jobs:
            j = jobs if jobs is not None else executor_jobs
            if j is not None:
                args += ["-j", str(j)]
            table = _call(args, sc, capture=True)
        texts = {}
        for o, p in paths.items():
            with open(p) as f:
                texts[o] = sc.fix(f.read())
    df = frame(json.loads(texts["json"]), texts.get("csv"))
    df.attrs["report"] = json.loads(texts["json"])
    df.attrs["table"] = table
    return df


def _csv_frame(report, csv_text):
    import pandas as pd

    return pd.read_csv(io.StringIO(csv_text))


def sweep(scenario=None, overrides=None, *, rates=None, utilizations=None, replications=5,
          jobs=None, executor=None, **dotted):
    """`servesim sweep`: latency vs load. One row per point (the --csv
    columns); ``.attrs["report"]`` is the --json report, ``.attrs["table"]``
    the console table. ``executor="ray"`` runs each simulation as a Ray task."""
    options = [("--rates", _list(rates)), ("--utilizations", _list(utilizations)),
               ("-r", replications)]
    return _analysis("sweep", scenario, options, overrides, dotted, jobs, executor,
                     ("csv",), _csv_frame)


def _capacity_frame(report, _csv):
    import pandas as pd

    if "pd_sizing" in report:  # a disaggregated scenario: one row per P:D split run
        return pd.json_normalize(report["pd_sizing"]["splits"], sep=".")
    rows = [{k: v for k, v in row.items() if not isinstance(v, list)}
            for row in report["capacity"]["rows"]]
    # Nested figures become columns such as "at_max.point.metrics.ttft_ms.p99.mean";
    # every rate tried stays in .attrs["report"] (rows[i]["evaluations"]).
    return pd.json_normalize(rows, sep=".")


def _validation(window, window_share, rate_precision, max_windows):
    return [("--window", window), ("--window-share", window_share),
            ("--rate-precision", rate_precision), ("--max-windows", max_windows)]


def capacity(scenario=None, overrides=None, *, slo, target_rate=None, candidates=None,
             replications=3, max_replications=20, precision=0.05, prices=None, jobs=None,
             executor=None, max_prefill=None, max_decode=None, window=None,
             window_share=None, rate_precision=None, max_windows=None, **dotted):
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


def search(scenario=None, overrides=None, *, slo, target_rate, gpus=None, tp=None,
           max_num_seqs=None, max_num_batched_tokens=None, chunked_prefill=None,
           routers=None, replications=3, max_replications=20, precision=0.05, max_replicas=64,
           exhaustive=False, prices=None, jobs=None, executor=None, window=None,
           window_share=None, rate_precision=None, max_windows=None, **dotted):
    """`servesim search`: the cheapest deployment meeting `slo` at
    `target_rate` over GPU x TP x engine settings (each a list or a comma
    string), and with `routers` ranked by fleets behind those routers. One
    row per candidate (the --csv columns, Pareto fronts included)."""
    if chunked_prefill is not None and not isinstance(chunked_prefill, str):
        chunked_prefill = ",".join("on" if c else "off" for c in
                                   (chunked_prefill if isinstance(chunked_prefill, (list, tuple))
                                    else [chunked_prefill]))
    options = [("--slo", _slo(slo)), ("--target-rate", target_rate), ("--gpus", _list(gpus)),
               ("--tp", _list(tp)), ("--max-num-seqs", _list(max_num_seqs)),
               ("--max-num-batched-tokens", _list(max_num_batched_tokens)),
               ("--chunked-prefill", chunked_prefill), ("--routers", _list(routers)),
               ("-r", replications),
               ("--max-replications", max_replications), ("--precision", precision),
               ("--max-replicas", max_replicas), ("--exhaustive", exhaustive),
               ("--prices", prices)] + _validation(window, window_share, rate_precision,
                                                  max_windows)
    return _analysis("search", scenario, options, overrides, dotted, jobs, executor,
                     ("csv",), _csv_frame)
