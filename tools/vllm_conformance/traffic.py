"""Seeded request streams for the conformance workloads (no vLLM imports).

A request is a `Req`: id, integer arrival time in microseconds, prompt and
output lengths, and the shared-prefix group it draws its first `prefix_len`
prompt tokens from (group -1 or length 0: no shared prefix). Token contents
are derived from (seed, group) and (seed, request id) by `prompt_tokens` and
`output_token`, so two requests share a KV block only if both blocks lie
entirely inside the same group's prefix.

Every draw goes through `random.Random` seeded with a string, which Python
hashes with SHA-512: the streams do not depend on PYTHONHASHSEED.
"""

import math
import random
from dataclasses import dataclass

# Token ids are drawn from [TOKEN_LO, TOKEN_HI); ids below TOKEN_LO are never
# produced, so no special or EOS token can appear in a prompt or an output.
TOKEN_LO = 1000
TOKEN_HI = 32000


@dataclass(frozen=True)
class Req:
    id: int
    arrival_us: int
    prompt_len: int
    output_len: int
    prefix_group: int
    prefix_len: int
    priority: int = -1  # vLLM's per-request priority (lower first); -1: none

    def row(self):
        row = [self.id, self.arrival_us, self.prompt_len, self.output_len,
               self.prefix_group, self.prefix_len]
        # A seventh field only when priorities are drawn: the FCFS fixtures
        # keep their bytes.
        return row + [self.priority] if self.priority >= 0 else row


@dataclass(frozen=True)
class Lengths:
    """A length distribution: "uniform" on [lo, hi] or "lognormal" with the
    given median and sigma, redrawn (not clipped) until it lands in [lo, hi]."""
    kind: str
    lo: int
    hi: int
    median: float = 0.0
    sigma: float = 0.0

    def draw(self, rng):
        if self.kind == "uniform":
            return rng.randint(self.lo, self.hi)
        if self.kind == "lognormal":
            mu = math.log(self.median)
            for _ in range(10000):
                x = int(round(rng.lognormvariate(mu, self.sigma)))
                if self.lo <= x <= self.hi:
                    return x
            raise ValueError(f"lognormal({self.median},{self.sigma}) never "
                             f"landed in [{self.lo},{self.hi}]")
        raise ValueError(f"unknown length kind {self.kind!r}")


def uniform(lo, hi):
    return Lengths("uniform", lo, hi)


def lognormal(median, sigma, lo, hi):
    return Lengths("lognormal", lo, hi, median, sigma)


@dataclass(frozen=True)
class Prefixes:
    """Shared-prefix model: `share` is the probability that a request uses a
    group at all; a group is then chosen with Zipf weights 1/(rank+1)^zipf;
    group g's prefix is `lens[g]` tokens, capped at the prompt length (a
    prompt may be all prefix: identical prompts)."""
    lens: tuple
    zipf: float = 1.0
    share: float = 1.0

    def draw(self, rng):
        if rng.random() >= self.share:
            return -1, 0
        weights = [1.0 / (g + 1) ** self.zipf for g in range(len(self.lens))]
        g = rng.choices(range(len(self.lens)), weights=weights)[0]
        return g, self.lens[g]


@dataclass(frozen=True)
class Traffic:
    """n requests; arrivals are a Poisson process of `rate_per_s` (exact
    exponential gaps rounded to whole microseconds, never clipped) starting
    at `start_us`, or all at `start_us` when rate_per_s is 0. `bursts` > 1
    splits the stream into that many equal Poisson phases separated by idle
    gaps of `gap_us`, to exercise an engine that drains and refills.
    With `prompt_after_prefix`, `prompt` draws the unique part only and the
    prompt is prefix + that; otherwise the prefix is cut from the prompt."""
    n: int
    rate_per_s: float
    prompt: Lengths
    output: Lengths
    prefixes: Prefixes | None = None
    start_us: int = 0
    bursts: int = 1
    gap_us: int = 0
    prompt_after_prefix: bool = False
    # > 0: each request's priority is uniform in [0, priorities), from its
    # own random stream (the other draws are unchanged).
    priorities: int = 0


def make_requests(traffic, seed, max_model_len, max_tokens_per_req):
    """Draws the request list. `max_tokens_per_req` bounds prompt+output so a
    request fits both the model length and the KV cache on its own."""
    arr_rng = random.Random(f"{seed}/arrivals")
    len_rng = random.Random(f"{seed}/lengths")
    pre_rng = random.Random(f"{seed}/prefixes")
    pri_rng = random.Random(f"{seed}/priorities")
    cap = min(max_model_len, max_tokens_per_req)
    reqs = []
    t = float(traffic.start_us)
    per_burst = math.ceil(traffic.n / traffic.bursts)
    for i in range(traffic.n):
        if i > 0 and i % per_burst == 0:
            t += traffic.gap_us
        if traffic.rate_per_s > 0 and i % per_burst != 0:
            t += arr_rng.expovariate(traffic.rate_per_s) * 1e6
        group, plen = (-1, 0)
        if traffic.prefixes is not None:
            group, plen = traffic.prefixes.draw(pre_rng)
        prompt = traffic.prompt.draw(len_rng)
        if traffic.prompt_after_prefix:
            prompt += plen
        output = traffic.output.draw(len_rng)
        if prompt + output > cap:
            # Shrink the output first, then the prompt; keeps both >= 1.
            output = max(1, cap - prompt)
            prompt = min(prompt, cap - output)
        plen = min(plen, prompt)
        if plen <= 0:
            group, plen = -1, 0
        priority = (pri_rng.randrange(traffic.priorities)
                    if traffic.priorities > 0 else -1)
        reqs.append(Req(i, int(round(t)), prompt, output, group, plen, priority))
    return reqs


def _stream(key, n):
    rng = random.Random(key)
    return [rng.randrange(TOKEN_LO, TOKEN_HI) for _ in range(n)]


class TokenSource:
    """Prompt token ids for one workload: group prefixes are generated once
    (long enough for the longest use) and shared by reference."""

    def __init__(self, seed, reqs):
        self.seed = seed
        need = {}
        for r in reqs:
            if r.prefix_group >= 0:
                need[r.prefix_group] = max(need.get(r.prefix_group, 0),
                                           r.prefix_len)
        self.groups = {g: _stream(f"{seed}/group/{g}", n)
                       for g, n in need.items()}

    def prompt_tokens(self, r):
        head = self.groups[r.prefix_group][:r.prefix_len] if r.prefix_len else []
        tail = _stream(f"{self.seed}/req/{r.id}", r.prompt_len - len(head))
        return head + tail

    def output_token(self, req_id, position):
        """The token sampled for request `req_id` at sequence index
        `position`: a SplitMix64-style mix, fixed per (seed, request,
        position), unrelated across requests."""
        x = (hash_str(str(self.seed)) * 0x9E3779B97F4A7C15
             + req_id * 0xBF58476D1CE4E5B9 + position) & 0xFFFFFFFFFFFFFFFF
        x ^= x >> 30
        x = (x * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        x ^= x >> 27
        x = (x * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        x ^= x >> 31
        return TOKEN_LO + x % (TOKEN_HI - TOKEN_LO)


def hash_str(s):
    """FNV-1a over the UTF-8 bytes: stable across processes."""
    h = 0xCBF29CE484222325
    for b in s.encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h
