"""`servesim serve`'s /metrics read by the official Prometheus Python client
(`prometheus_client.parser`) while concurrent streams run and after they
end: the whole text parses, every family has vLLM's name and type, and the
values agree with what the client saw (issue 34).

`servesim serve` cannot save its step records (it has no --save-steps; with
--check-invariants it keeps them in memory for the run-level checks only), so
the gauges are checked against the client's own account of its requests, and
the server's run-level invariants (--check-invariants) are required to hold.

The rule for a scrape while requests run. /metrics returns one snapshot of the
engine's state, published by the engine thread after each event and before
the streams of that event are woken, at a moment S between the client's start
of the scrape (t0) and its reading of the answer (t1). A request counts in
running + waiting at S iff the engine had admitted it and not finished it.
 - At most: the requests sent before t1 whose [DONE] the client had not read
   at t0 (one read before t0 was finished, and published, before S).
 - At least: the requests surely admitted before S (their first token read
   before t0, or their body written more than SLACK before t0) whose [DONE]
   the client read after t1 + SLACK, or not at all (one finished before
   S <= t1 reaches the client within the HTTP path's SLACK).
The counters are bounded the same way (tokens, first tokens, [DONE]s read by
t0 and by t1 + SLACK), and within one scrape running + waiting + finished =
admitted, exactly: the snapshot is taken at once.

CI installs prometheus_client (.ci/python-test) and sets
SERVESIM_REQUIRE_PROMETHEUS_CLIENT=1; elsewhere the test is skipped without it.
"""
import http.client
import json
import os
import re
import signal
import subprocess
import threading
import time

import pytest

from conftest import REPO, cli_path

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:  # pragma: no cover - depends on the environment
    text_string_to_metric_families = None

# Llama-3.1-8B on one H200 (the default chat deployment) with at most 8
# sequences in a batch, so 12 requests are 8 running and 4 waiting at first,
# and prefix caching on (the prompts share a prefix). A decode step is about
# 4.6 ms simulated; at time scale 0.5 that is 9 ms of wall time, so 8 streams
# are about 900 events/s for the client, which a loaded 2-core machine keeps
# up with (engine lag a few ms), and a run takes about 6 s.
MAX_NUM_SEQS = 8
SERVE_ARGS = ["scenarios/default_chat.json", "--set", f"engine.max_num_seqs={MAX_NUM_SEQS}",
              "--set", "engine.prefix_caching=true"]
TIME_SCALE = 0.5
MODEL = "servesim-metrics"
N = 12
PROMPT_LEN = 96   # token ids: 64 shared (4 blocks of 16), then 32 of its own
SHARED = 64
# Staggered lengths (about 0.1 s of wall time apart), so the scrapes see
# requests finishing one by one and the waiting ones taking their places.
MAX_TOKENS = [200 + 10 * i for i in range(N)]
SCRAPE_EVERY_S = 0.2
# The HTTP path, wall seconds: a token reaches the client at most this long
# after the end of the step that made it (docs/serve.md measured p99 up to
# 12 ms, AIPerf's test allows 20 ms); a request's body reaches the engine's
# queue within it too. Generous for a client of 12 Python threads on a
# loaded machine: it only widens the bounds, by time.
SLACK = 0.1
# The server warns past 50 ms of lag; past it token times trail the
# simulation and the latency bounds are off by that much.
MAX_LAG_S = 0.05

LABELS = {"model_name": MODEL, "engine": "0"}
# Every family /metrics exports (docs/serve.md, Metrics), with its type.
FAMILIES = {
    "vllm:num_requests_running": "gauge",
    "vllm:num_requests_waiting": "gauge",
    "vllm:kv_cache_usage_perc": "gauge",
    "vllm:prefix_cache_queries": "counter",
    "vllm:prefix_cache_hits": "counter",
    "vllm:num_preemptions": "counter",
    "vllm:prompt_tokens": "counter",
    "vllm:generation_tokens": "counter",
    "vllm:request_success": "counter",
    "vllm:time_to_first_token_seconds": "histogram",
    "vllm:inter_token_latency_seconds": "histogram",
    "vllm:e2e_request_latency_seconds": "histogram",
    "vllm:request_queue_time_seconds": "histogram",
    "servesim:sim_time_seconds": "gauge",
    "servesim:engine_lag_seconds": "gauge",
    "servesim:engine_lag_max_seconds": "gauge",
    "servesim:requests_rejected": "counter",
    "servesim:requests_cut_off": "counter",
    "servesim:requests_refused": "counter",
}
HISTOGRAMS = [n for n, t in FAMILIES.items() if t == "histogram"]


def require_parser():
    if text_string_to_metric_families is not None:
        return
    if os.environ.get("SERVESIM_REQUIRE_PROMETHEUS_CLIENT") == "1":
        pytest.fail("prometheus_client is not installed; CI installs it (.ci/python-test)")
    pytest.skip("prometheus_client not installed: pip install prometheus_client to run it")


class Scrape:
    """One GET /metrics: its client times and its parsed families."""

    def __init__(self, port):
        self.t0 = time.monotonic()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/metrics")
        resp = conn.getresponse()
        body = resp.read().decode()
        conn.close()
        self.t1 = time.monotonic()
        assert resp.status == 200, body
        assert resp.getheader("Content-Type", "").startswith("text/plain; version=0.0.4")
        self.text = body

    def parse(self):
        """The whole text through the parser (it raises on a line it cannot
        read); samples indexed by name, whatever family they fell in."""
        self.fams = {}
        self.samples = {}
        for f in text_string_to_metric_families(self.text):
            self.fams.setdefault(f.name, []).append(f)
            for s in f.samples:
                self.samples.setdefault(s.name, []).append(s)
        for name in HISTOGRAMS:
            self.check_histogram(name)
        return self

    def check_families(self):
        """Each family once, of its vLLM type, holding its samples, with the
        server's labels (and `le`, `finished_reason` where they belong)."""
        problems = []
        for name, kind in FAMILIES.items():
            fams = self.fams.get(name, [])
            if len(fams) != 1:
                problems.append(f"{name}: {len(fams)} families")
                continue
            f = fams[0]
            if f.type != kind:
                problems.append(f"{name}: type {f.type}, not {kind}")
            if not f.samples:
                problems.append(f"{name}: no samples in the family")
            for s in f.samples:
                extra = set(s.labels) - set(LABELS)
                allowed = {"le"} if s.name.endswith("_bucket") else set()
                if name == "vllm:request_success":
                    allowed = {"finished_reason"}
                if {k: s.labels.get(k) for k in LABELS} != LABELS or not extra <= allowed:
                    problems.append(f"{s.name}: labels {s.labels}")
        # Samples the parser left outside the expected families.
        stray = sorted({n for n, fams in self.fams.items() if n not in FAMILIES
                        for f in fams if f.samples})
        if stray:
            problems.append(f"samples outside the families above: {stray}")
        return problems

    def value(self, sample, **labels):
        """The one sample of this name with these extra labels."""
        hits = [s.value for s in self.samples.get(sample, [])
                if all(s.labels.get(k) == v for k, v in labels.items())]
        assert len(hits) == 1, (sample, labels, self.samples.get(sample))
        return hits[0]

    def count(self, hist):
        c = self.value(hist + "_count")
        assert c == int(c)
        return int(c)

    def sum(self, hist):
        return self.value(hist + "_sum")

    def check_histogram(self, name):
        buckets = self.samples.get(name + "_bucket", [])
        assert buckets and buckets[-1].labels["le"] == "+Inf", name
        bounds = [float(s.labels["le"]) for s in buckets]
        counts = [s.value for s in buckets]
        assert bounds == sorted(bounds) and len(set(bounds)) == len(bounds), name
        assert counts == sorted(counts), f"{name}: buckets not cumulative"
        assert counts[-1] == self.count(name), name
        assert self.sum(name) >= 0, name

    # Shorthands.
    def running(self):
        return self.value("vllm:num_requests_running")

    def waiting(self):
        return self.value("vllm:num_requests_waiting")

    def kv(self):
        return self.value("vllm:kv_cache_usage_perc")

    def total(self, counter):
        return self.value(counter + "_total")

    def success(self, reason=None):
        if reason is not None:
            return self.value("vllm:request_success_total", finished_reason=reason)
        return sum(s.value for s in self.samples["vllm:request_success_total"])


class Stream(threading.Thread):
    """One streamed completion; records when each event arrived."""

    def __init__(self, port, i):
        super().__init__(daemon=True)
        self.port, self.i = port, i
        self.start_t = self.sent_t = self.done_t = None
        self.token_t = []
        self.finish_reason = self.usage = self.error = None

    def run(self):
        try:
            prompt = list(range(1000, 1000 + SHARED)) + \
                list(range(5000 + 100 * self.i, 5000 + 100 * self.i + PROMPT_LEN - SHARED))
            body = json.dumps({"model": MODEL, "prompt": prompt,
                               "max_tokens": MAX_TOKENS[self.i], "ignore_eos": True,
                               "stream": True, "stream_options": {"include_usage": True}})
            self.start_t = time.monotonic()
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            conn.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
            self.sent_t = time.monotonic()
            resp = conn.getresponse()
            assert resp.status == 200, resp.read()
            while True:
                line = resp.readline()
                if not line:
                    raise AssertionError("the stream ended without [DONE]")
                if not line.startswith(b"data: "):
                    continue
                data = line[6:].strip()
                now = time.monotonic()
                if data == b"[DONE]":
                    self.done_t = now
                    break
                chunk = json.loads(data)
                assert "error" not in chunk, chunk
                if chunk["choices"]:
                    choice = chunk["choices"][0]
                    if choice["text"]:
                        self.token_t.append(now)
                    if choice["finish_reason"]:
                        self.finish_reason = choice["finish_reason"]
                else:
                    self.usage = chunk["usage"]
            conn.close()
        except Exception as e:  # reported by the test
            self.error = repr(e)

    # The client's account at a wall time t.
    def tokens_by(self, t):
        return sum(1 for x in self.token_t if x < t)

    def done_by(self, t):
        return self.done_t is not None and self.done_t < t

    def first_by(self, t):
        return bool(self.token_t) and self.token_t[0] < t

    def sent_by(self, t):
        return self.start_t is not None and self.start_t < t

    def surely_admitted_by(self, t):
        return self.first_by(t) or (self.sent_t is not None and self.sent_t < t - SLACK)


def start_server():
    launched = time.monotonic()
    p = subprocess.Popen([cli_path(), "serve", *SERVE_ARGS, "--port", "0",
                          "--time-scale", str(TIME_SCALE), "--served-model-name", MODEL,
                          "--check-invariants"],
                         cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stderr.readline()  # printed once it listens
    m = re.search(r"on http://127\.0\.0\.1:(\d+) ", line)
    if not m:
        p.kill()
        pytest.fail(f"servesim serve did not start: {line}{p.stderr.read()}")
    port = int(m.group(1))
    deadline = time.monotonic() + 10
    while True:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/health")
            if conn.getresponse().status == 200:
                break
        except OSError:
            pass
        assert time.monotonic() < deadline, "no /health within 10 s"
        time.sleep(0.05)
    return p, port, launched


def check_mid_run(sc, streams):
    """One scrape taken while requests ran, against the client's account."""
    t0, t1, late = sc.t0, sc.t1, sc.t1 + SLACK
    running, waiting = sc.running(), sc.waiting()
    assert running == int(running) and waiting == int(waiting)
    inside = running + waiting
    most = sum(1 for s in streams if s.sent_by(t1) and not s.done_by(t0))
    least = sum(1 for s in streams if s.surely_admitted_by(t0) and not s.done_by(late))
    assert least <= inside <= most, \
        f"running {running} + waiting {waiting} outside [{least}, {most}]"
    assert 0 <= running <= MAX_NUM_SEQS and waiting >= 0
    kv = sc.kv()
    assert 0 <= kv <= 1
    if running > 0:
        assert kv > 0, "requests run with no KV cache held"
    # Finished requests: by their [DONE]s read before t0 and by t1 + SLACK;
    # all reach max_tokens (ignore_eos), so all finish for `length`.
    success = sc.success()
    assert sc.success("stop") == 0
    assert sum(s.done_by(t0) for s in streams) <= success <= sum(s.done_by(late) for s in streams)
    assert sc.count("vllm:e2e_request_latency_seconds") == success
    # One snapshot: what is inside or finished is what was admitted.
    admitted_least = sum(s.surely_admitted_by(t0) for s in streams)
    admitted_most = sum(s.sent_by(t1) for s in streams)
    assert admitted_least <= inside + success <= admitted_most
    # Tokens and first tokens, as the client read them.
    gen = sc.total("vllm:generation_tokens")
    assert sum(s.tokens_by(t0) for s in streams) <= gen <= sum(s.tokens_by(late) for s in streams)
    ttft_n = sc.count("vllm:time_to_first_token_seconds")
    assert sum(s.first_by(t0) for s in streams) <= ttft_n <= sum(s.first_by(late) for s in streams)
    # Prompts are counted when first scheduled (queue time observed then).
    scheduled = sc.count("vllm:request_queue_time_seconds")
    assert sc.total("vllm:prompt_tokens") == PROMPT_LEN * scheduled
    assert sc.total("vllm:prefix_cache_queries") == PROMPT_LEN * scheduled
    assert success <= ttft_n <= scheduled <= inside + success
    return running, waiting


def check_latency_sum(sc, hist, client):
    """A latency histogram against the client's latencies of the same
    requests (wall seconds). The server's clock starts when the request
    reaches the engine's queue and stops when the step ends; the client's
    starts before it connects and stops when it has read the event, so per
    request 0 <= client - server <= SLACK (the HTTP path)."""
    n, total = sc.count(hist), sc.sum(hist)
    assert n == len(client), (hist, n, len(client))
    lo, hi = sum(client) - n * SLACK, sum(client)
    assert lo <= total <= hi, f"{hist}: sum {total:.4f} s outside [{lo:.4f}, {hi:.4f}]"
    # The same, read per request as count x the extreme latencies.
    assert n * (min(client) - SLACK) <= total <= n * max(client), hist
    return total - sum(client)


class Run:
    """One served run: the scrapes (before, during, after) and the streams."""


@pytest.fixture(scope="module")
def run():
    require_parser()
    server, port, launched = start_server()
    r = Run()
    r.launched, r.scrapes, r.streams = launched, [], []
    try:
        r.idle = Scrape(port)
        r.streams = [Stream(port, i) for i in range(N)]
        for s in r.streams:
            s.start()
        # The first scrape once all are in: every body written SLACK ago and
        # a full batch's first tokens read (over 1.8 s before any can end).
        deadline = time.monotonic() + 60
        while not (all(s.sent_t for s in r.streams) and
                   sum(bool(s.token_t) for s in r.streams) >= MAX_NUM_SEQS):
            assert time.monotonic() < deadline and all(s.is_alive() for s in r.streams), \
                [s.error for s in r.streams]
            time.sleep(0.01)
        time.sleep(SLACK)
        r.scrapes.append(Scrape(port))
        # Then every SCRAPE_EVERY_S while they run, and once all have ended.
        while any(s.is_alive() for s in r.streams):
            assert time.monotonic() < deadline, "the requests did not finish in 60 s"
            time.sleep(SCRAPE_EVERY_S)
            r.scrapes.append(Scrape(port))
        for s in r.streams:
            s.join()
        r.final = Scrape(port)
    finally:
        server.send_signal(signal.SIGINT)
        r.out, r.err = server.communicate(timeout=60)
    r.took = time.monotonic() - launched
    assert server.returncode == 0, r.err
    errors = [(s.i, s.error) for s in r.streams if s.error]
    assert not errors, errors
    r.all = [r.idle, *r.scrapes, r.final]
    for sc in r.all:
        sc.parse()
    return r


def test_every_scrape_parses_into_vllm_families(run):
    """Every scrape, through the official parser: each family named and
    typed as vLLM's, each sample inside its family."""
    problems = {}  # each problem, with the first scrape that had it
    for k, sc in enumerate(run.all):
        for p in sc.check_families():
            problems.setdefault(p, k)
    hint = ("\n(a counter's # HELP and # TYPE lines must name its sample, X_total, "
            "as prometheus_client writes them; naming X leaves X_total untyped)"
            if any("no samples" in p for p in problems) else "")
    assert not problems, "\n".join(f"{p} (scrape {k} of {len(run.all)})"
                                    for p, k in problems.items()) + hint


def test_gauges_while_requests_run_match_the_client(run):
    streams, scrapes = run.streams, run.scrapes
    # Before any request: nothing counted, no KV held.
    idle = run.idle
    assert idle.running() == idle.waiting() == 0
    assert idle.kv() == 0
    for name, kind in FAMILIES.items():
        if kind == "counter":
            assert sum(s.value for s in idle.samples[name + "_total"]) == 0, name
        elif kind == "histogram":
            assert idle.count(name) == 0, name
    # While they ran (and after: the rule holds at any time).
    seen = [check_mid_run(sc, streams) for sc in [*scrapes, run.final]]
    mid = sum(sc.t0 < max(s.done_t for s in streams) for sc in scrapes)
    assert mid >= 10, f"only {mid} scrapes while requests ran"
    # The first: all 12 admitted, 8 with tokens, none finished: the batch
    # full, the rest queued.
    assert seen[0] == (MAX_NUM_SEQS, N - MAX_NUM_SEQS), seen
    assert any(0 < r and w == 0 for r, w in seen), seen  # the queue drained
    # The simulated clock of the snapshots never goes back, nor runs ahead
    # of the wall clock x time scale (it started after `launched`).
    sim = [sc.value("servesim:sim_time_seconds") for sc in run.all]
    assert sim == sorted(sim), sim
    for sc, t in zip(run.all, sim):
        assert t <= (sc.t1 - run.launched) * TIME_SCALE, (t, sc.t1 - run.launched)
    print(f"\n/metrics: {len(run.all)} scrapes, {mid} while {N} streams ran; "
          f"(running, waiting): {seen}")


def test_after_the_run_counters_and_histograms_match_the_client(run):
    streams, final, out, err = run.streams, run.final, run.out, run.err
    # The client's account: every request answered in full.
    for s in streams:
        assert len(s.token_t) == MAX_TOKENS[s.i], (s.i, len(s.token_t))
        assert s.finish_reason == "length", (s.i, s.finish_reason)
        assert s.usage["completion_tokens"] == MAX_TOKENS[s.i]
        assert s.usage["prompt_tokens"] == PROMPT_LEN
    assert f"{N} requests admitted: {N} finished, 0 rejected" in out, out
    assert "0 cut off at shutdown; 0 refused" in out, out
    assert "run-level invariants hold" in out, out + err

    assert final.running() == final.waiting() == 0
    assert final.kv() == run.idle.kv()
    assert final.success("length") == N and final.success("stop") == 0
    assert final.total("servesim:requests_rejected") == 0
    assert final.total("servesim:requests_cut_off") == 0
    assert final.total("servesim:requests_refused") == 0
    assert final.total("vllm:num_preemptions") == 0  # a tiny fraction of the KV cache
    assert final.total("vllm:prompt_tokens") == sum(s.usage["prompt_tokens"] for s in streams)
    assert final.total("vllm:prefix_cache_queries") == N * PROMPT_LEN
    hits = sum(s.usage["prompt_tokens_details"]["cached_tokens"] for s in streams)
    assert final.total("vllm:prefix_cache_hits") == hits
    assert hits >= (N - MAX_NUM_SEQS) * SHARED  # the waiting ones found the shared blocks
    assert final.total("vllm:generation_tokens") == sum(MAX_TOKENS)
    # One inter-token observation per step after a request's first token,
    # and each step makes one token (no speculative decoding online).
    assert final.count("vllm:inter_token_latency_seconds") == sum(MAX_TOKENS) - N
    assert final.count("vllm:request_queue_time_seconds") == N
    assert final.sum("vllm:request_queue_time_seconds") <= \
        final.sum("vllm:time_to_first_token_seconds")

    # The latency histograms against the client's measurements.
    ttft = [s.token_t[0] - s.start_t for s in streams]
    e2e = [s.done_t - s.start_t for s in streams]
    d_ttft = check_latency_sum(final, "vllm:time_to_first_token_seconds", ttft)
    d_e2e = check_latency_sum(final, "vllm:e2e_request_latency_seconds", e2e)
    # The inter-token gaps of a request add up to its last token's time
    # minus its first's: the client's differ by the two tokens' HTTP paths.
    span = [s.token_t[-1] - s.token_t[0] for s in streams]
    itl = final.sum("vllm:inter_token_latency_seconds")
    assert abs(itl - sum(span)) <= N * SLACK, (itl, sum(span))

    # The server kept the time scale (else token times trail the simulation).
    lag = final.value("servesim:engine_lag_max_seconds")
    assert lag < MAX_LAG_S and "cannot keep up" not in err, (lag, err)
    print(f"\n/metrics after {N} streams ({run.took:.1f} s with the server's start): "
          f"server minus client sums, ms: TTFT {d_ttft * 1e3:+.1f}, e2e {d_e2e * 1e3:+.1f}, "
          f"ITL {(itl - sum(span)) * 1e3:+.1f}; engine lag at most {lag * 1e3:.1f} ms")
