#!/usr/bin/env python3
"""A plain-Python model of SGLang 0.5.23's scheduler for the simplest case,
replayed step for step against the fixtures (no SGLang needed):

    python3 tools/sglang_conformance/reference_model.py tests/conformance/sglang/*.json

Covers the normal event loop, page size 1, the fcfs policy and requests
that share no prefix (so the radix cache only ever holds finished or
retracted requests' KV, all of it evictable, and a chunked request's own
prefix). Other fixtures are skipped and named. Every step must match:
batch kind, requests with extend and prefix lengths, retractions,
finishes, the new-token ratio and the KV tokens in use.

The rules, in this file's words (see docs/engine/sglang.md):
- Each iteration first merges the last prefill batch into the running
  batch (less finished requests and the request still being chunked), then
  tries a prefill batch; only without one does the running batch decode.
- Prefill admission: a continuing chunk goes first; then waiting requests
  in order. The KV budget is the free-or-evictable pool less, per running
  request, min(max_new_tokens - generated, 4096) x the new-token ratio
  (x 1 with ignore_eos); an admitted request takes its extend + its
  remaining max_new_tokens (capped at 4096) + one page, and must fit
  strictly. The extend budget starts at max_prefill_tokens (without
  chunking, a second request may not reach it), the chunk budget at
  chunked_prefill_size; a request longer than the chunk budget is cut to
  it and continues next iteration. Admission stops at max_running_requests
  and at the first request that does not fit, which marks the batch full
  until a request leaves.
- Decode needs one KV slot per request; short of it, retract (fewest
  generated tokens first, ties to the longest prompt, keep one) and reset
  the ratio from the requests kept; otherwise decay the ratio.
"""

import json
import sys

CLIP = 4096
RETRACT_DECODE_STEPS = 20


def supported(fx):
    e = fx["engine"]
    why = []
    if not e["disable_overlap_schedule"]:
        why.append("overlap loop")
    if e["page_size"] != 1:
        why.append(f"page size {e['page_size']}")
    if e["schedule_policy"] != "fcfs":
        why.append(f"policy {e['schedule_policy']}")
    if any(r[4] >= 0 for r in fx["requests"]) and not e["disable_radix_cache"]:
        why.append("shared prefixes")
    return why


class Model:
    def __init__(self, fx):
        e = fx["engine"]
        self.e = e
        self.T = e["max_total_tokens"]
        self.max_run = e["max_running_requests"]
        self.chunk = e["chunked_prefill_size"] if e["chunked_prefill_size"] > 0 else None
        start = min(e["init_new_token_ratio"] * e["schedule_conservativeness"], 1.0)
        self.start = start
        self.floor = min(start * e["min_new_token_ratio_factor"], 1.0)
        self.step_down = (start - self.floor) / e["new_token_ratio_decay_steps"]
        self.ratio = start
        self.req = {r[0]: r for r in fx["requests"]}
        self.out = {i: 0 for i in self.req}
        self.held = {i: 0 for i in self.req}
        self.prefix = {i: 0 for i in self.req}   # own cached chunk prefix
        self.waiting, self.running = [], []
        self.chunked = None
        self.full = False
        self.last_extend = []
        self.finished = set()

    def fill_len(self, i):
        return self.req[i][2] + self.out[i]

    def max_new(self, i):
        return self.req[i][3]

    def prefill(self):
        R = len(self.running)
        if R == 0:
            self.full = False
        if (self.full or not self.waiting) and self.chunked is None:
            return None
        rows_free = self.max_run - R - (1 if self.chunked is not None else 0)
        if min(self.max_run - R, rows_free) <= 0 and self.chunked is None:
            self.full = True
            return None
        ratio = 1.0 if self.e["ignore_eos"] else self.ratio
        total_off = sum(min(self.max_new(i) - self.out[i], CLIP) * ratio
                        for i in self.running)
        cur_off = 0
        rem_in = self.e["max_prefill_tokens"]
        rem_chunk = self.chunk
        avail = self.free()
        can, rows = [], []
        new_chunked = None

        def reserve(ext, mnt):
            nonlocal total_off, cur_off, rem_in, rem_chunk
            total_off += ext + 1 + mnt
            cur_off += ext + 1
            rem_in -= ext
            if rem_chunk is not None:
                rem_chunk -= ext

        def state():
            if avail - total_off <= 0 or avail - cur_off <= 0:
                return "NO_TOKEN"
            if rem_in <= 0 or (rem_chunk is not None and rem_chunk <= 0):
                return "OTHER"
            return "CONTINUE"

        if self.chunked is not None:
            i = self.chunked
            rem = min(rem_chunk, int(avail - total_off))
            if rem <= 0:
                rem = rem_chunk
            ext_full = self.fill_len(i) - self.prefix[i]
            truncated = ext_full > rem
            ext = min(ext_full, rem)
            reserve(ext, 0 if truncated else min(self.max_new(i), CLIP))
            can.append(i)
            rows.append([i, ext, self.prefix[i]])
            if not truncated:
                self.chunked = None
        for i in list(self.waiting):
            if state() == "OTHER":
                break
            held_rows = sum(1 for j in can if self.held[j] > 0)
            if len(can) >= min(self.max_run - R, rows_free + held_rows):
                self.full = True
                break
            pre = self.prefix[i] if self.prefix[i] < self.fill_len(i) else 0
            pre = min(pre, self.fill_len(i) - 1)
            mnr = min(max(self.max_new(i) - self.out[i], 0), CLIP)
            ext = self.fill_len(i) - pre
            if not ext + mnr + 1 < avail - total_off:
                res = "NO_TOKEN"
            elif rem_chunk is None and can and ext >= rem_in:
                res = "OTHER"
            else:
                mnt = min(self.max_new(i), CLIP)
                if rem_chunk is not None and ext > rem_chunk:
                    ext = rem_chunk
                    mnt = 0
                    new_chunked = i
                can.append(i)
                rows.append([i, ext, pre])
                self.prefix[i] = pre
                reserve(ext, mnt)
                res = state()
            if res != "CONTINUE":
                if res == "NO_TOKEN":
                    self.full = len(can) > 0 or R > 0
                break
        if not can:
            return None
        self.waiting = [j for j in self.waiting if j not in can]
        if new_chunked is not None:
            self.chunked = new_chunked
        for i, ext, pre in rows:
            self.held[i] = pre + ext
        return rows

    def free(self):
        return self.T - sum(self.held.values())

    def decode(self):
        if not self.running:
            return None, []
        retracted = []
        if len(self.running) > self.free():
            # Most-preferred first; retraction pops from the end.
            order = sorted(range(len(self.running)),
                           key=lambda k: (self.out[self.running[k]],
                                          -self.req[self.running[k]][2]),
                           reverse=True)
            first = True
            while first or len(order) > self.free():
                if len(order) == 1:
                    break
                first = False
                i = self.running[order.pop()]
                retracted.append(i)
                self.held[i] = 0
                self.prefix[i] = 0
            # The batch keeps the retraction order, not its own.
            kept = [self.running[k] for k in order]
            self.running = kept
            self.waiting.extend(retracted)
            g = sum(self.out[i] for i in kept)
            m = sum(self.max_new(i) for i in kept)
            self.ratio = min(1.0, (g + RETRACT_DECODE_STEPS * len(kept)) / (m + 1))
        else:
            self.ratio = max(self.ratio - self.step_down, self.floor)
        for i in self.running:
            self.held[i] += 1
        return list(self.running), retracted

    def finish(self, i):
        self.finished.add(i)
        self.held[i] = 0

    def process(self, kind, ids):
        fin = []
        for i in ids:
            if kind == "E" and i == self.chunked:
                self.prefix[i] = self.held[i]
                continue
            self.out[i] += 1
            if self.out[i] >= self.max_new(i):
                self.finish(i)
                fin.append(i)
        return sorted(fin)


def replay(fx):
    """Returns None when every step matches, else the first difference."""
    m = Model(fx)
    arrivals = sorted(fx["requests"], key=lambda r: (r[1], r[0]))
    nxt, clock, spins = 0, 0, 0
    for k, want in enumerate(fx["steps"]):
        while True:
            while nxt < len(arrivals) and arrivals[nxt][1] <= clock:
                m.waiting.append(arrivals[nxt][0])
                nxt += 1
            # Merge the last prefill batch; drop finished requests.
            for i in m.last_extend:
                if i != m.chunked and i not in m.finished and i not in m.running:
                    m.running.append(i)
            m.last_extend = []
            before = len(m.running)
            m.running = [i for i in m.running if i not in m.finished]
            if len(m.running) < before:
                m.full = False
            rows = m.prefill()
            if rows is not None:
                kind, retracted = "E", []
                break
            ids, retracted = m.decode()
            if ids:
                kind, rows = "D", ids
                break
            # Nothing ran: idle reset, then wait for the next arrival.
            if not m.running and not m.waiting and m.chunked is None:
                m.ratio = m.start
            spins += 1
            if spins > 3:
                if nxt >= len(arrivals):
                    return f"step {k}: the model stalls"
                clock = max(clock, arrivals[nxt][1])
                spins = 0
        spins = 0
        used = sum(m.held.values())
        got = [clock, kind, rows, sorted(retracted)]
        ids = [r[0] for r in rows] if kind == "E" else rows
        if kind == "E":
            m.last_extend = ids
        if got != want[:4] or abs(m.ratio - want[6]) > 1e-8 or used != want[7]:
            return (f"step {k}: SGLang {want[:4]} ratio {want[6]} used "
                    f"{want[7]}; model {got} ratio {round(m.ratio, 9)} used "
                    f"{used}")
        clock += 1000
        fin = m.process(kind, ids)
        if fin != want[4]:
            return f"step {k}: SGLang finished {want[4]}, model {fin}"
    return None


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.splitlines()[3].strip())
    same = tried = steps = 0
    for path in sys.argv[1:]:
        with open(path) as f:
            fx = json.load(f)
        why = supported(fx)
        if why:
            print(f"{path}: skipped ({', '.join(why)})")
            continue
        tried += 1
        diff = replay(fx)
        if diff:
            print(f"{path}: {diff}")
        else:
            same += 1
            steps += len(fx["steps"])
            print(f"{path}: identical ({len(fx['steps'])} steps)")
    print(f"{same} of {tried} modelled fixtures replay identically ({steps} steps)")
    sys.exit(0 if same == tried else 1)


if __name__ == "__main__":
    main()
