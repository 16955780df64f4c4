#!/usr/bin/env python3
"""A plain-Python model of SGLang 0.5.23's scheduler for requests that
share no prefix, replayed step for step against the fixtures (no SGLang
needed):

    python3 tools/sglang_conformance/reference_model.py tests/conformance/sglang/*.json

Covers both event loops, any page size, the fcfs and lof policies, and
fixtures whose requests share no prefix (or run with the radix cache off),
so the radix cache only ever holds KV nobody else can match. Other fixtures
are skipped and named. Every step must match: batch kind, requests with
extend and prefix lengths in batch order, retractions, finishes, the
new-token ratio and the KV tokens in use. Not modelled: a retracted
request matching its own earlier chunk in the radix cache on re-admission
(it needs the cache's LRU eviction order).

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
  it (ending on a page boundary) and continues next iteration, first.
  Admission stops at max_running_requests and at the first request that
  does not fit, which marks the batch full until a request leaves. `lof`
  first sorts the waiting queue by max_new_tokens, longest first (stable).
- KV is held in whole pages. Decode needs a new page for each request at a
  page boundary; short of it, retract (fewest generated tokens first, ties
  to the longest prompt, keep one; the batch keeps that order) and reset
  the ratio from the requests kept; otherwise decay the ratio.
- Overlap loop: decisions see generated tokens one batch late; a request
  whose last token is in flight sits out of decode (and when decode memory
  is short while one does, nothing decodes that iteration).
"""

import json
import sys

CLIP = 4096
RETRACT_DECODE_STEPS = 20


def supported(fx):
    e = fx["engine"]
    why = []
    if e["schedule_policy"] not in ("fcfs", "lof"):
        why.append(f"policy {e['schedule_policy']}")
    if any(r[4] >= 0 for r in fx["requests"]) and not e["disable_radix_cache"]:
        why.append("shared prefixes")
    return why


class Model:
    def __init__(self, fx):
        e = fx["engine"]
        self.e = e
        self.page = e["page_size"]
        self.T = e["max_total_tokens"] // self.page * self.page
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
        self.retracted_flag = set()      # retracted, not yet re-admitted
        self.overlap = not e["disable_overlap_schedule"]

    def ceil(self, n):
        return -(-n // self.page) * self.page

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
        if self.e["schedule_policy"] == "lof":
            self.waiting.sort(key=lambda j: -self.max_new(j))
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
            ext = self.ceil(ext)
            total_off += ext + self.page + mnt
            cur_off += ext + self.page
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
            if not ext + mnr + self.page < avail - total_off:
                res = "NO_TOKEN"
            elif rem_chunk is None and can and self.ceil(ext) >= rem_in:
                res = "OTHER"
            else:
                mnt = min(self.max_new(i), CLIP)
                if rem_chunk is not None and self.ceil(ext) > rem_chunk:
                    # Cut to the chunk budget, ending on a page boundary.
                    ext = (pre + rem_chunk // self.page * self.page) \
                        // self.page * self.page - pre
                    if ext <= 0:
                        break
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
        self.retracted_flag -= set(can)
        if new_chunked is not None:
            self.chunked = new_chunked
        for i, ext, pre in rows:
            self.held[i] = pre + ext
        return rows

    def used(self):
        """KV tokens held: whole pages per request."""
        return sum(self.ceil(n) for n in self.held.values())

    def free(self):
        return self.T - self.used()

    def decode_need(self, ids):
        """A decode step allocates a page for each request at a page end."""
        return self.page * sum(1 for i in ids if self.held[i] % self.page == 0)

    def decode(self, inflight):
        """`inflight`: ids of the batch whose result is not processed yet
        (overlap loop); a request whose token there is its last sits out."""
        if not self.running:
            return None, []
        finishing = [i for i in self.running if i in inflight
                     and self.out[i] + 1 >= self.max_new(i)]
        if finishing:
            self.running = [i for i in self.running if i not in finishing]
            self.full = False
            if not self.running:
                return None, []
        retracted = []
        if self.decode_need(self.running) > self.free() and finishing:
            return None, []   # the finishing requests free KV next step
        if self.decode_need(self.running) > self.free():
            # Most-preferred first; retraction pops from the end.
            order = sorted(range(len(self.running)),
                           key=lambda k: (self.out[self.running[k]],
                                          -self.req[self.running[k]][2]),
                           reverse=True)
            first = True
            while first or self.decode_need(
                    [self.running[k] for k in order]) > self.free():
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
            self.full = False
            self.waiting.extend(retracted)
            self.retracted_flag.update(retracted)
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

    def process(self, kind, ids, middle):
        """A batch's result: one token per request, except a middle chunk
        and a request retracted since; finishing requests free their KV."""
        fin = []
        for i in ids:
            if i in middle or i in self.retracted_flag or i in self.finished:
                continue
            self.out[i] += 1
            if self.out[i] >= self.max_new(i):
                self.finish(i)
                fin.append(i)
        return sorted(fin)

    def schedule(self, inflight):
        """Scheduler.get_next_batch_to_run: (kind, rows, retracted, middle)
        or None."""
        if self.chunked is not None:
            self.prefix[self.chunked] = self.held[self.chunked]
        for i in self.last_extend:
            if i != self.chunked and i not in self.finished and i not in self.running:
                self.running.append(i)
        self.last_extend = []
        before = len(self.running)
        self.running = [i for i in self.running if i not in self.finished]
        if len(self.running) < before:
            self.full = False
        rows = self.prefill()
        if rows is not None:
            middle = {self.chunked} if self.chunked is not None else set()
            return "E", rows, [], middle
        ids, retracted = self.decode(inflight)
        if ids:
            return "D", ids, retracted, set()
        return None

    def fully_idle(self, queued):
        return not (self.running or self.waiting or queued
                    or self.chunked is not None)


def replay(fx):
    """Returns None when every step matches, else the first difference:
    event_loop_normal, or event_loop_overlap (the result of batch N is
    processed after batch N+1 is scheduled; the GPU runs batches back to
    back, 1000 us each)."""
    m = Model(fx)
    steps = fx["steps"]
    arrivals = sorted(fx["requests"], key=lambda r: (r[1], r[0]))
    nxt, clock, gpu_free, spins, k = 0, 0, 0, 0, 0
    queue = []          # launched batches: [step, kind, ids, middle, end]
    last = None
    while k < len(steps) or queue:
        while nxt < len(arrivals) and arrivals[nxt][1] <= clock:
            m.waiting.append(arrivals[nxt][0])
            nxt += 1
        inflight = set(queue[0][2]) if (m.overlap and queue) else set()
        got = m.schedule(inflight)
        if got is not None:
            if k >= len(steps):
                return "the model runs a batch after SGLang's last step"
            kind, rows, retracted, middle = got
            want = steps[k]
            used = m.used()
            mine = [clock, kind, rows, sorted(retracted)]
            if (mine != want[:4] or abs(m.ratio - want[6]) > 1e-8
                    or used != want[7]):
                return (f"step {k}: SGLang {want[:4]} ratio {want[6]} used "
                        f"{want[7]}; model {mine} ratio {round(m.ratio, 9)} "
                        f"used {used}")
            ids = [r[0] for r in rows] if kind == "E" else rows
            m.last_extend = ids if kind == "E" else []
            end = max(clock, gpu_free) + 1000
            gpu_free = end
            queue.append([k, kind, ids, middle, end])
            k += 1
        if queue and (not m.overlap or last is not None):
            j, kind, ids, middle, end = queue.pop(0)
            clock = max(clock, end)
            fin = m.process(kind, ids, middle)
            if fin != steps[j][4]:
                return f"step {j}: SGLang finished {steps[j][4]}, model {fin}"
        elif got is None and m.fully_idle(queue):
            m.ratio = m.start
        last = got
        spins = spins + 1 if got is None and not queue else 0
        if spins > 3:
            if nxt >= len(arrivals):
                return f"step {k}: the model stalls"
            clock = max(clock, arrivals[nxt][1])
            spins = 0
    return None


# Known departures, which must still show: a retracted request whose chunks
# are still in the radix cache matches them on re-admission; whether they
# survived depends on the cache's LRU eviction order, not modelled here.
KNOWN = {"lof_p16_normal", "lof_p16_overlap"}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.splitlines()[4].strip())
    same = tried = steps = 0
    bad = []
    for path in sys.argv[1:]:
        with open(path) as f:
            fx = json.load(f)
        why = supported(fx)
        if why:
            print(f"{path}: skipped ({', '.join(why)})")
            continue
        tried += 1
        diff = replay(fx)
        known = fx["name"] in KNOWN
        if diff:
            print(f"{path}: {'known departure: ' if known else ''}{diff}")
            if not known:
                bad.append(fx["name"])
        else:
            same += 1
            steps += len(fx["steps"])
            print(f"{path}: identical ({len(fx['steps'])} steps)")
            if known:
                bad.append(fx["name"] + " (known departure gone: update KNOWN)")
    print(f"{same} of {tried} modelled fixtures replay identically "
          f"({steps} steps); {tried - same} known departures")
    if bad:
        print("unexpected: " + ", ".join(bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
