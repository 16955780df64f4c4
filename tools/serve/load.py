#!/usr/bin/env python3
"""An open-loop load generator for `servesim serve` (Python standard library
only): Poisson arrivals at --rate for --duration seconds, each a streamed
/v1/completions request on its own connection. Prints the client's TTFT and
ITL percentiles, the errors, and the server's own mean TTFT from /metrics
(scraped before and after), so that the difference -- the HTTP path's
overhead as this client sees it -- is on the same line.

  python3 tools/serve/load.py --port 8000 --rate 50 --duration 20
"""
import argparse
import asyncio
import json
import random
import re
import sys
import time


async def one(host, port, body, out):
    t0 = time.perf_counter()
    try:
        reader, writer = await asyncio.open_connection(host, port)
        data = json.dumps(body).encode()
        writer.write(b"POST /v1/completions HTTP/1.1\r\nHost: %s\r\n"
                     b"Content-Type: application/json\r\nContent-Length: %d\r\n"
                     b"Connection: close\r\n\r\n" % (host.encode(), len(data)) + data)
        await writer.drain()
        status = None
        times = []
        buf = b""
        while True:
            chunk = await reader.read(65536)
            if not chunk:
                break
            t = time.perf_counter() - t0
            buf += chunk
            if status is None and b"\r\n" in buf:
                status = int(buf.split(b" ", 2)[1])
            # One token per "text":" word event (the usage chunk has none).
            n = chunk.count(b'"text":" ')
            times.extend([t] * n)
        writer.close()
        ok = status == 200 and b"data: [DONE]" in buf and b'"error"' not in buf
        out.append((ok, status, times))
    except OSError as e:
        out.append((False, str(e), []))


def pct(v, p):
    if not v:
        return float("nan")
    v = sorted(v)
    return v[min(len(v) - 1, int(p / 100 * (len(v) - 1) + 0.5))]


def scrape(host, port):
    async def get():
        r, w = await asyncio.open_connection(host, port)
        w.write(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        body = await r.read()
        w.close()
        return body.decode()
    text = asyncio.run(get())
    m = {}
    for name in ("vllm:time_to_first_token_seconds_sum", "vllm:time_to_first_token_seconds_count",
                 "servesim:engine_lag_max_seconds"):
        g = re.search(re.escape(name) + r"\{[^}]*\} (\S+)", text)
        m[name] = float(g.group(1)) if g else float("nan")
    return m


async def run(a):
    rng = random.Random(a.seed)
    out, tasks = [], []
    start = time.perf_counter()
    t = 0.0
    while t < a.duration:
        delay = start + t - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        body = {"prompt": "word " * a.prompt_words, "max_tokens": a.max_tokens,
                "ignore_eos": True, "stream": True}
        tasks.append(asyncio.create_task(one(a.host, a.port, body, out)))
        t += rng.expovariate(a.rate)
    await asyncio.gather(*tasks)
    return out, time.perf_counter() - start


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--rate", type=float, required=True, help="requests per second")
    p.add_argument("--duration", type=float, default=10, help="seconds of arrivals")
    p.add_argument("--max-tokens", type=int, default=16)
    p.add_argument("--prompt-words", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    before = scrape(a.host, a.port)
    out, wall = asyncio.run(run(a))
    after = scrape(a.host, a.port)
    ok = [o for o in out if o[0] and o[2]]
    ttft = [o[2][0] for o in ok]
    itl = [b - x for o in ok for x, b in zip(o[2], o[2][1:])]
    n = after["vllm:time_to_first_token_seconds_count"] - before["vllm:time_to_first_token_seconds_count"]
    s = after["vllm:time_to_first_token_seconds_sum"] - before["vllm:time_to_first_token_seconds_sum"]
    server_ttft = s / n if n else float("nan")
    client_ttft = sum(ttft) / len(ttft) if ttft else float("nan")
    print(f"rate {a.rate:g}/s for {a.duration:g} s: {len(out)} sent, {len(ok)} ok, "
          f"{len(out) - len(ok)} failed; {len(ok) / wall:.1f} completed/s over {wall:.1f} s wall")
    print(f"client TTFT ms: mean {client_ttft * 1e3:.2f}, p50 {pct(ttft, 50) * 1e3:.2f}, "
          f"p99 {pct(ttft, 99) * 1e3:.2f}; ITL ms: p50 {pct(itl, 50) * 1e3:.2f}, "
          f"p99 {pct(itl, 99) * 1e3:.2f}")
    print(f"server TTFT ms (/metrics, wall): mean {server_ttft * 1e3:.2f}; "
          f"mean HTTP path overhead {(client_ttft - server_ttft) * 1e3:.2f} ms; "
          f"engine lag at most {after['servesim:engine_lag_max_seconds'] * 1e3:.2f} ms")
    failed = [o[1] for o in out if not (o[0] and o[2])]
    if failed:
        print("failures (status or error):", sorted(set(map(str, failed)))[:5])
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
