"""Writes and checks SGLang conformance fixtures (no SGLang imports).

Same layout as the vLLM fixtures (tools/vllm_conformance/fixture_io.py):
JSON with one request, step or result per line, so a diff of a regenerated
fixture shows which steps changed. `check` re-derives what a fixture implies
on its own (budgets, token conservation, timestamps), so a fixture that
contradicts its engine settings is caught before commit.
"""

import json

TIME_MODEL = ("1000 us per batch; see tools/sglang_conformance/README.md")


def _dump(x):
    return json.dumps(x, separators=(",", ":"))


def render(fx):
    out = ["{"]
    keys = list(fx)
    for n, k in enumerate(keys):
        v = fx[k]
        tail = "," if n + 1 < len(keys) else ""
        if k in ("requests", "steps", "results", "random_orders"):
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
    reqs = {r[0]: r for r in fx["requests"]}
    res = {r[0]: r for r in fx["results"]}
    if set(reqs) != set(res):
        raise ValueError("requests and results name different ids")
    done = {i: 0 for i in reqs}      # prompt+output tokens with KV, per request
    finished = {}
    last_t = 0
    for k, (t, kind, rows, retracted, fin, t_done, ratio, used, evictable,
            evicted) in enumerate(fx["steps"]):
        if t < last_t or t_done < t:
            raise ValueError(f"step {k}: time goes backwards")
        last_t = t
        if used + evictable > eng["max_total_tokens"] or min(used, evictable) < 0:
            raise ValueError(f"step {k}: {used}+{evictable} tokens in a "
                             f"{eng['max_total_tokens']}-token pool")
        for i in retracted:
            done[i] = 0
        ids = [r[0] for r in rows] if kind == "E" else rows
        if len(ids) > eng["max_running_requests"] or len(set(ids)) != len(ids):
            raise ValueError(f"step {k}: {len(ids)} requests (max "
                             f"{eng['max_running_requests']}) or a repeated id")
        if kind == "E":
            if eng["chunked_prefill_size"] > 0 and len(rows) > 0:
                total = sum(r[1] for r in rows)
                # A single request's chunk may not exceed the chunk size.
                if len(rows) == 1 and total > max(eng["chunked_prefill_size"],
                                                   eng["page_size"]):
                    raise ValueError(f"step {k}: chunk of {total} tokens")
            for i, ext, prefix in rows:
                if ext <= 0 or prefix < 0:
                    raise ValueError(f"step {k}: request {i} extends {ext}")
                done[i] = prefix + ext
        elif kind == "D":
            for i in rows:
                done[i] += 1
        else:
            raise ValueError(f"step {k}: kind {kind!r}")
        for i in fin:
            if i in finished:
                raise ValueError(f"step {k}: request {i} finished twice")
            finished[i] = t_done
        if not 0 < ratio <= 1:
            raise ValueError(f"step {k}: new_token_ratio {ratio}")
    for i, r in reqs.items():
        _, arrival, prompt, output = r[:4]
        _, cached, first_step, first_tok, fin_t, _ = res[i]
        if finished.get(i) != fin_t:
            raise ValueError(f"request {i}: finish time disagrees with steps")
        if not arrival <= fx["steps"][first_step][0] <= first_tok <= fin_t:
            raise ValueError(f"request {i}: timestamps out of order")
        if cached % eng["page_size"] or cached >= prompt:
            raise ValueError(f"request {i}: odd cached count {cached}")
        # The last sampled token never gets KV.
        if done[i] != prompt + output - 1:
            raise ValueError(f"request {i}: KV for {done[i]} tokens at the "
                             f"end, expected {prompt + output - 1}")
