#!/usr/bin/env python3
"""An independent statement of SGLang 0.5.23's new-token-ratio, retraction
and decode-batch rules, checked against the fixtures (no SGLang needed):

    python3 tools/sglang_conformance/reference_rules.py tests/conformance/sglang/*.json

Replays each fixture's step list and predicts, from the rules below alone,
(1) the new-token ratio after every scheduling call, (2) which requests a
retracting decode step may retract, and (3) which requests every decode
batch holds. Admission and the radix cache are not modelled here (the
fixtures pin them; a servesim engine must reproduce them).

The rules, in this file's words:
- The ratio starts at min(init * schedule_conservativeness, 1); its floor
  is min(start * factor, 1); each decode step that retracts nothing lowers
  it by (start - floor) / decay_steps, not below the floor. Extend steps
  leave it alone.
- A decode step that retracts sets it to min(1, (G + 20 n) / (M + 1)) over
  the n requests kept: G their generated tokens, M their max_new_tokens.
- Retraction takes the requests with the fewest generated tokens first,
  ties to the longest prompt, and keeps at least one.
- The ratio returns to its start when the engine is fully idle: every
  request that has arrived by the end of a batch is finished (in the
  overlap loop, that batch's result is then processed first).
- A request's generated tokens are those of batches whose results were
  processed before the scheduling call: the batch before it in the normal
  loop, the one before that in the overlap loop (one-step lag). A decode
  step samples one token per request; an extend step one per request whose
  prefill it completes (prefix + extend reaches prompt + generated).
- A decode batch holds every running request (admitted, prefill complete,
  not finished, not retracted), less, in the overlap loop, those whose
  last token is in flight.
"""

import json
import sys

RETRACT_DECODE_STEPS = 20  # SGLANG_RETRACT_DECODE_STEPS
CLIP = 4096                # CLIP_MAX_NEW_TOKENS


def check(fx):
    """Returns a list of problems (empty when the fixture follows the rules)."""
    e = fx["engine"]
    start = min(e["init_new_token_ratio"] * e["schedule_conservativeness"], 1.0)
    floor = min(start * e["min_new_token_ratio_factor"], 1.0)
    step_down = (start - floor) / e["new_token_ratio_decay_steps"]
    overlap = not e["disable_overlap_schedule"]
    req = {r[0]: r for r in fx["requests"]}
    steps = fx["steps"]
    gen = {i: 0 for i in req}        # generated tokens, results processed
    pending = []                     # batches whose results are unprocessed
    completes = {}                   # step -> requests whose prefill it ends
    running = set()                  # prefill complete (scheduled), not done
    finished = set()
    ratio = start
    problems = []

    def apply(k):
        """Processes batch k's result: one token per request that decoded or
        completed its prefill; finished requests leave."""
        kind, rows, fin = steps[k][1], steps[k][2], steps[k][4]
        ids = rows if kind == "D" else completes[k]
        for i in ids:
            if i not in retracted_after.get(k, ()):
                gen[i] += 1
        for i in fin:
            finished.add(i)
            running.discard(i)

    retracted_after = {}             # step -> requests retracted after it
    for k, s in enumerate(steps):
        t, kind, rows, retracted, fin, t_done, got_ratio = s[:7]
        # Results the scheduler has processed before this call.
        while len(pending) > (1 if overlap else 0):
            apply(pending.pop(0))
        if k > 0:
            # Idle once the last batch's result is in and every request that
            # has arrived by then is finished; the overlap loop then also
            # has that result processed before the next schedule.
            prev_done = steps[k - 1][5]
            done = finished | set(steps[k - 1][4])
            if all(r[0] in done for r in fx["requests"] if r[1] <= prev_done):
                while pending:
                    apply(pending.pop(0))
                ratio = start
        if kind == "D":
            in_flight = set()
            if overlap and pending:
                last = steps[pending[-1]]
                ids = last[2] if last[1] == "D" else [r[0] for r in last[2]]
                in_flight = {i for i in ids if i in running and
                             gen[i] + 1 >= req[i][3]}
            expect = (running - in_flight) - set(retracted)
            if set(rows) != expect:
                problems.append(
                    f"step {k}: decode batch {sorted(rows)}, rules say "
                    f"{sorted(expect)}")
            for i in retracted:
                running.discard(i)
                # A retracted request's in-flight output is dropped.
                for p in pending:
                    retracted_after.setdefault(p, set()).add(i)
            if retracted:
                kept = [i for i in rows]
                key = {i: (gen[i], -req[i][2]) for i in kept + retracted}
                worst_kept = min(key[i] for i in kept)
                for i in retracted:
                    if key[i] > worst_kept:
                        problems.append(
                            f"step {k}: retracted {i} (generated {gen[i]}, "
                            f"prompt {req[i][2]}) before a request with "
                            f"fewer tokens")
                g = sum(gen[i] for i in kept)
                m = sum(min(req[i][3], 1 << 62) for i in kept)
                ratio = min(1.0, (g + RETRACT_DECODE_STEPS * len(kept)) /
                            (m + 1))
            else:
                ratio = max(ratio - step_down, floor)
        if abs(ratio - got_ratio) > 1e-8:
            problems.append(f"step {k}: new_token_ratio {got_ratio}, rules "
                            f"say {round(ratio, 9)}")
            ratio = got_ratio  # resynchronise; report each departure once
        if kind == "E":
            completes[k] = [i for i, ext, prefix in rows
                            if prefix + ext == req[i][2] + gen[i]]
            running.update(completes[k])
        pending.append(k)
        if len(problems) >= 5:
            break
    return problems


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.splitlines()[3].strip())
    bad = 0
    total = 0
    for path in sys.argv[1:]:
        with open(path) as f:
            fx = json.load(f)
        total += len(fx["steps"])
        problems = check(fx)
        if problems:
            bad += 1
            print(f"{path}: " + "; ".join(problems[:3]))
    print(f"{len(sys.argv) - 1 - bad} of {len(sys.argv) - 1} fixtures follow "
          f"the ratio, retraction and decode-batch rules ({total} steps)")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
