"""The executor hook without Ray: every simulation goes out as bytes and
comes back through the real encoder and the same core (run_spec), and the
analyses give exactly the local results; a run the executor declines or
fails on is done locally."""
import threading

import pytest

import servesim
from servesim import _core


class Loopback:
    """Runs each encoded simulation here, through the bytes a Ray task gets."""

    def __init__(self, decline_every=0, fail_every=0, jobs=2):
        self.sent = self.declined = self.failed = 0
        self.decline_every, self.fail_every, self.jobs = decline_every, fail_every, jobs
        self._n = self._in_flight = self.most_in_flight = 0
        self._mu = threading.Lock()

    def start(self):
        return self.jobs

    def submit(self, spec):
        self._n += 1
        if self.decline_every and self._n % self.decline_every == 0:
            self.declined += 1
            return None
        if self.fail_every and self._n % self.fail_every == 0:
            self.failed += 1
            raise RuntimeError("injected failure")
        self.sent += 1
        with self._mu:
            self._in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self._in_flight)
        try:
            return _core.run_spec(spec)  # releases the GIL: real concurrency
        finally:
            with self._mu:
                self._in_flight -= 1

    def stop(self):
        pass


def test_sweep_through_the_encoder_equals_local(small_file):
    local = servesim.sweep(small_file, rates=[10, 20], replications=2)
    ex = Loopback()
    assert servesim.sweep(small_file, rates=[10, 20], replications=2,
                          executor=ex).attrs["report"] == local.attrs["report"]
    assert ex.sent == 4


def test_capacity_and_search_through_the_encoder_equal_local(small_file):
    slo = "ttft_p99=500ms,tpot_p99=50ms"
    ex = Loopback()
    assert (servesim.capacity(small_file, slo=slo, window=20000, executor=ex).attrs["report"]
            == servesim.capacity(small_file, slo=slo, window=20000).attrs["report"])
    assert ex.sent > 3
    ex = Loopback()
    args = dict(slo="ttft_p99=1s", target_rate=30, max_num_seqs=[16, 32], window=20000)
    assert (servesim.search(small_file, executor=ex, **args).attrs["report"]
            == servesim.search(small_file, **args).attrs["report"])
    assert ex.sent > 2


def test_declined_and_failed_runs_are_done_locally(small_file, capfd):
    slo = "ttft_p99=500ms"
    ex = Loopback(decline_every=3, fail_every=4)
    got = servesim.capacity(small_file, slo=slo, window=20000, executor=ex)
    local = servesim.capacity(small_file, slo=slo, window=20000)
    assert got.attrs["report"] == local.attrs["report"]
    assert ex.declined > 0 and ex.failed > 0 and ex.sent > 0
    assert "injected failure" in capfd.readouterr().err


def test_run_spec_rejects_garbage():
    with pytest.raises(RuntimeError):
        _core.run_spec(b"\x00not a spec")


def test_exhaustive_search_runs_candidates_at_once_with_an_executor(small_file):
    args = dict(slo="ttft_p99=1s", target_rate=30, max_num_seqs=[16, 32], window=20000,
                exhaustive=True)
    ex = Loopback(jobs=2)
    got = servesim.search(small_file, executor=ex, **args)
    assert got.attrs["report"] == servesim.search(small_file, **args).attrs["report"]
    # One candidate's search has at most 2 (-j) simulations out: more means
    # both candidates' searches ran at once.
    assert ex.most_in_flight > 2
