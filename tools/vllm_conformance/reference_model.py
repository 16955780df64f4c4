#!/usr/bin/env python3
"""A small, independent model of vLLM 0.33.0's v1 scheduling, checked
against the fixtures (plain python3; vLLM is not needed).

    python3 tools/vllm_conformance/reference_model.py tests/conformance/fixtures/*.json

It replays each fixture's requests under the fixture's engine settings and
time model and compares every step and result with what vLLM recorded. It
exists to prove that the rules written down in README.md ("What a replay
must model") are complete: every rule here is one a simulator has to mirror,
and nothing else is needed for these fixtures. It covers only what the
fixtures use: one full-attention KV group, FCFS, no speculative decoding,
no connectors, hash block size = block size.

Block identity without token ids: block i of request r holds the same
tokens as block i of request s exactly when r == s, or both requests use
the same prefix group and the block lies inside both shared prefixes
((i + 1) * block_size <= prefix_len of each). Outputs are unique per
request, so a request re-admitted after preemption can only hit its own
earlier blocks or its group's prefix blocks.
"""

import collections
import json
import sys

BATCH_US = 1000


class Block:
    __slots__ = ("id", "ref", "key")

    def __init__(self, i):
        self.id, self.ref, self.key = i, 0, None


class Pool:
    """Free queue in eviction order (front = reused first) plus the prefix
    map key -> blocks in insertion order (the first one serves hits)."""

    def __init__(self, n, caching):
        self.caching = caching
        self.blocks = [Block(i) for i in range(n)]
        self.free = collections.OrderedDict((b.id, b) for b in self.blocks)
        self.free.popitem(last=False)  # block 0 is the null block, never used
        self.cached = {}

    def take(self, n):
        out = []
        for _ in range(n):
            _, b = self.free.popitem(last=False)
            if b.key is not None:  # evict from the prefix cache
                self.cached[b.key].pop(b.id)
                if not self.cached[b.key]:
                    del self.cached[b.key]
                b.key = None
            b.ref = 1
            out.append(b)
        return out

    def touch(self, blocks):
        for b in blocks:
            if b.ref == 0:
                del self.free[b.id]
            b.ref += 1

    def release(self, blocks_tail_first):
        first, last = [], []
        for b in blocks_tail_first:
            b.ref -= 1
            if b.ref == 0:
                (first if b.key is None or not self.caching else last).append(b)
        for b in reversed(first):  # uncached: to the front, tail block first
            self.free[b.id] = b
            self.free.move_to_end(b.id, last=False)
        for b in last:  # cached: to the back (LRU), tail block first
            self.free[b.id] = b

    def insert(self, key, b):
        if b.key == key:
            return
        b.key = key
        self.cached.setdefault(key, {})[b.id] = b

    def lookup(self, key):
        d = self.cached.get(key)
        return next(iter(d.values())) if d else None


class Req:
    def __init__(self, row):
        (self.id, self.arrival, self.prompt, self.max_tokens, self.group,
         self.prefix) = row[:6]
        self.priority = row[6] if len(row) > 6 else 0
        self.num_tokens = self.prompt
        self.computed = self.placeholders = self.in_flight = self.stale = 0
        self.blocks, self.ncached = [], 0
        self.status, self.preemptions, self.prefill_chunk = "WAITING", 0, False

    def key(self, i, bs):
        if self.group >= 0 and (i + 1) * bs <= self.prefix:
            return ("g", self.group, i)
        return ("r", self.id, i)


class Scheduler:
    def __init__(self, eng, st):
        self.e, self.st = eng, st
        self.bs = eng["block_size"]
        self.pool = Pool(eng["num_gpu_blocks"], eng["prefix_caching"])
        self.wm_blocks = int(st["watermark"] * eng["num_gpu_blocks"])
        self.running, self.waiting = [], collections.deque()
        self.priority = st["policy"] == "priority"
        self.finished_since_schedule = False
        self.asyn = eng["async_scheduling"]

    def has_requests(self):
        return bool(self.running or self.waiting or self.finished_since_schedule)

    # ---- KV cache manager -------------------------------------------------
    def _need(self, r, tokens, hit):
        need = max(-(-tokens // self.bs) - len(r.blocks) - len(hit), 0)
        return need + sum(1 for b in hit if b.ref == 0)

    def _allocate(self, r, n, hit=(), admit=False):
        mml = self.e["max_model_len"]
        total = min(r.computed + len(hit) * self.bs, mml)
        wm = self.wm_blocks if admit and self.running else 0
        free = len(self.pool.free)
        if admit and self.st["scheduler_reserve_full_isl"]:
            if self._need(r, min(r.num_tokens, mml), hit) + wm > free:
                return False
        slots = min(total + n, mml)
        if self._need(r, slots, hit) + wm > free:
            return False
        if hit:
            self.pool.touch(hit)
            r.blocks, r.ncached = list(hit), len(hit)
        r.blocks += self.pool.take(-(-slots // self.bs) - len(r.blocks))
        self._cache(r, min(total + n, r.num_tokens))
        return True

    def _cache(self, r, tokens):
        if not self.e["prefix_caching"]:
            return
        full = min(tokens, r.num_tokens // self.bs * self.bs) // self.bs
        for i in range(r.ncached, full):
            self.pool.insert(r.key(i, self.bs), r.blocks[i])
        r.ncached = max(r.ncached, full)

    def _hit(self, r):
        if not self.e["prefix_caching"]:
            return []
        hit = []
        for i in range((r.num_tokens - 1) // self.bs):
            b = self.pool.lookup(r.key(i, self.bs))
            if b is None:
                break
            hit.append(b)
        return hit

    def _free(self, r):
        self.pool.release(reversed(r.blocks))
        r.blocks, r.ncached = [], 0

    # ---- schedule ---------------------------------------------------------
    def schedule(self):
        budget = self.e["max_num_batched_tokens"]
        thr = self.st["long_prefill_token_threshold"]
        if len(self.running) + len(self.waiting) <= 1:
            thr = 0
        sched, preempted, admitted_hits = {}, [], {}
        i = 0
        while i < len(self.running) and budget > 0:
            r = self.running[i]
            if r.placeholders and (r.computed + 2 - r.placeholders
                                   >= r.prompt + r.max_tokens):
                i += 1
                continue
            n = r.num_tokens + r.placeholders - r.computed
            if 0 < thr < n:
                n = thr
            n = min(n, budget, self.e["max_model_len"] - r.computed - 1)
            if n <= 0:
                i += 1
                continue
            ok = False
            while True:
                if self._allocate(r, n):
                    ok = True
                    break
                victim = self._victim()
                v = self.running.index(victim)
                del self.running[v]
                if v < i:  # the list shifts under the cursor
                    i -= 1
                budget += sched.pop(victim, 0)
                self._preempt(victim)
                preempted.append(victim.id)
                if victim is r:
                    break
            if not ok:
                # Priority: it was the lowest-priority request and left the
                # list, so i already points at the next one, which may fit.
                if self.priority:
                    continue
                break
            sched[r] = n
            budget -= n
            i += 1
        if not preempted:
            budget = self._admit(sched, budget, thr, admitted_hits)
        for r, n in sched.items():
            r.computed += n
            r.in_flight += n
            r.prefill_chunk = r.computed < r.num_tokens + r.placeholders
            if self.asyn and not r.prefill_chunk:
                r.placeholders += 1
        self.finished_since_schedule = False
        return sched, preempted, admitted_hits

    def _victim(self):
        """FCFS: the newest running request; priority: the lowest priority,
        then the latest arrival (the first such in running order)."""
        if not self.priority:
            return self.running[-1]
        return max(self.running, key=lambda q: (q.priority, q.arrival))

    def _next_waiting(self):
        """Priority: the waiting queue is a heap on (priority, arrival,
        request id as a string); FCFS: its front."""
        if not self.priority:
            return self.waiting[0]
        return min(self.waiting, key=lambda q: (q.priority, q.arrival, str(q.id)))

    def _admit(self, sched, budget, thr, hits):
        skipped = []
        while budget > 0 and self.waiting:
            if len(self.running) >= self.e["max_num_seqs"]:
                break
            r = self._next_waiting()
            if r.stale:  # in-flight output of a preempted request pending
                self.waiting.remove(r)
                skipped.append(r)
                continue
            hit = self._hit(r)
            n = r.num_tokens - len(hit) * self.bs
            if 0 < thr < n:
                n = thr
            if not self.e["chunked_prefill"] and n > budget:
                break
            n = min(n, budget)
            if not self._allocate(r, n, hit, admit=True):
                break
            self.waiting.remove(r)
            self.running.append(r)
            r.status, r.computed = "RUNNING", len(hit) * self.bs
            hits[r.id] = r.computed
            sched[r] = n
            budget -= n
        self.waiting.extendleft(reversed(skipped))
        return budget

    def _preempt(self, r):
        self._free(r)
        r.status, r.computed = "PREEMPTED", 0
        r.stale, r.placeholders = r.in_flight, 0
        r.preemptions += 1
        self.waiting.appendleft(r)  # (priority: the order is by key anyway)

    # ---- update_from_output ---------------------------------------------
    def update(self, sched, sampled):
        done, stopped_running = [], set()
        for r, n in sched.items():
            r.in_flight -= n
            stale = r.stale > 0
            if stale:
                r.stale -= n
            if r.status == "FINISHED" or r not in sampled:
                continue
            before = r.status
            had_placeholders = r.placeholders > 0
            r.num_tokens += 1
            stop = (r.num_tokens - r.prompt >= r.max_tokens
                    or r.num_tokens >= self.e["max_model_len"])
            if not stale and r.placeholders:
                r.placeholders -= 1
            if not stale and before == "RUNNING" and had_placeholders:
                self._cache(r, r.computed - r.in_flight)
            if stop:
                r.status = "FINISHED"
                self._free(r)
                self.finished_since_schedule = True
                done.append(r.id)
                if before == "RUNNING":
                    stopped_running.add(r)
                else:
                    self.waiting.remove(r)
        self.running = [r for r in self.running if r not in stopped_running]
        return done


def replay(fx):
    eng, st = fx["engine"], fx["vllm_settings"]
    reqs = [Req(row) for row in fx["requests"]]
    arrivals = collections.deque(sorted(reqs, key=lambda r: (r.arrival, r.id)))
    s = Scheduler(eng, st)
    steps, cached, first_step, first_tok, finish = [], {}, {}, {}, {}

    def admit(clock):
        while arrivals and arrivals[0].arrival <= clock:
            s.waiting.append(arrivals.popleft())

    def do_schedule(clock):
        sched, pre, hits = s.schedule()
        k = len(steps)
        for r in sched:
            first_step.setdefault(r.id, k)
        for i, h in hits.items():
            cached.setdefault(i, h)
        sampled = {r for r in sched if not r.prefill_chunk}
        steps.append([clock, sorted([r.id, n] for r, n in sched.items()),
                      sorted(pre), None, None])
        return k, sched, sampled

    def do_update(k, sched, sampled, clock):
        done = s.update(sched, sampled)
        for r in sampled:
            first_tok.setdefault(r.id, clock)
        for i in done:
            finish[i] = clock
        steps[k][3], steps[k][4] = sorted(done), clock

    clock, gpu_free, queue = 0, 0, collections.deque()
    while True:
        admit(clock)
        if not s.asyn:
            if s.has_requests():
                k, sched, sampled = do_schedule(clock)
                clock += BATCH_US if sched else 0
                do_update(k, sched, sampled, clock)
            elif arrivals:
                clock = max(clock, arrivals[0].arrival)
            else:
                break
            continue
        if not s.has_requests() and not queue:
            if not arrivals:
                break
            clock = max(clock, arrivals[0].arrival)
            continue
        if s.has_requests():
            k, sched, sampled = do_schedule(clock)
            end = clock
            if sched:
                end = gpu_free = max(clock, gpu_free) + BATCH_US
            queue.appendleft((k, sched, sampled, end))
            if len(queue) < 2 and (sched or s.has_requests()):
                continue
        k, sched, sampled, end = queue.pop()
        clock = max(clock, end)
        do_update(k, sched, sampled, clock)
    results = [[r.id, cached[r.id], first_step[r.id], first_tok[r.id],
                finish[r.id], r.preemptions] for r in reqs]
    return steps, results


def compare(fx):
    steps, results = replay(fx)
    want = fx["steps"]
    for k, (a, b) in enumerate(zip(steps, want)):
        if a != b:
            return f"step {k}: model {a} != vLLM {b}"
    if len(steps) != len(want):
        return f"{len(steps)} steps, vLLM has {len(want)}"
    for a, b in zip(results, fx["results"]):
        if a != b:
            return f"result: model {a} != vLLM {b}"
    return None


def main(paths):
    bad = 0
    for p in paths:
        with open(p) as f:
            fx = json.load(f)
        err = compare(fx)
        bad += err is not None
        print(f"{'ok  ' if err is None else 'FAIL'} {fx['name']}"
              f" ({len(fx['steps'])} steps){': ' + err if err else ''}")
    print(f"{len(paths) - bad} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
