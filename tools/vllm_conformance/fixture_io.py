"""Writes and checks conformance fixtures (no vLLM imports).

The file is JSON with one request, step or result per line, so a diff of a
regenerated fixture shows which steps changed. `check` re-derives what a
fixture implies on its own (budgets, token conservation, timestamps) so a
fixture that contradicts its own engine settings is caught before commit.
"""

import json

TIME_MODEL = ("1000 us per non-empty batch; see "
              "tools/vllm_conformance/README.md")


def _dump(x):
    return json.dumps(x, separators=(",", ":"))


def render(fx):
    """`fx` holds the fixture keys in order; lists of rows go one per line."""
    out = ["{"]
    keys = list(fx)
    for n, k in enumerate(keys):
        v = fx[k]
        tail = "," if n + 1 < len(keys) else ""
        if k in ("requests", "steps", "results"):
            rows = [_dump(r) for r in v]
            out.append(f"{_dump(k)}:[")
            out.extend(r + ("," if i + 1 < len(rows) else "")
                       for i, r in enumerate(rows))
            out.append("]" + tail)
        else:
            out.append(f"{_dump(k)}:{_dump(v)}{tail}")
    out.append("}")
    return "\n".join(out) + "\n"


def check(fx):
    """Raises ValueError if the fixture is internally inconsistent."""
    eng = fx["engine"]
    bs = eng["block_size"]
    reqs = {r[0]: r for r in fx["requests"]}
    res = {r[0]: r for r in fx["results"]}
    if set(reqs) != set(res):
        raise ValueError("requests and results name different ids")
    computed = {i: 0 for i in reqs}
    finished = {}
    last_t = 0
    for k, (t, sched, preempted, fin, t_upd) in enumerate(fx["steps"]):
        if t < last_t or t_upd < t:
            raise ValueError(f"step {k}: time goes backwards")
        last_t = t
        total = sum(n for _, n in sched)
        if total > eng["max_num_batched_tokens"]:
            raise ValueError(f"step {k}: {total} tokens over the budget")
        if len(sched) > eng["max_num_seqs"]:
            raise ValueError(f"step {k}: {len(sched)} sequences")
        if [i for i, _ in sched] != sorted(i for i, _ in sched):
            raise ValueError(f"step {k}: rows not sorted by id")
        for i in preempted:
            computed[i] = 0
        for i, n in sched:
            if i in finished or n <= 0:
                raise ValueError(f"step {k}: request {i} scheduled wrongly")
            computed[i] += n
        for i in fin:
            finished[i] = t_upd
    for i, r in reqs.items():
        _, arrival, prompt, output, _, _ = r[:6]
        _, cached, first_step, first_tok, fin_t, _ = res[i]
        if finished.get(i) != fin_t:
            raise ValueError(f"request {i}: finish time disagrees with steps")
        if not arrival <= fx["steps"][first_step][0] <= first_tok <= fin_t:
            raise ValueError(f"request {i}: timestamps out of order")
        if cached % bs or cached >= prompt:
            raise ValueError(f"request {i}: odd cached count {cached}")
        if prompt + output > eng["max_model_len"]:
            raise ValueError(f"request {i}: longer than max_model_len")
        # Without preemption, a request computes every token but the last
        # sampled one exactly once, less its prefix-cache hit.
        if res[i][5] == 0 and cached + computed[i] != prompt + output - 1:
            raise ValueError(f"request {i}: {cached}+{computed[i]} tokens "
                             f"computed, expected {prompt + output - 1}")
