"""Charts of servesim's results with matplotlib (``pip install
"servesim[plot]"``; the rest of the package works without it).

    import servesim, servesim.plot
    servesim.plot.loops(servesim.loops("default_chat"))
    servesim.plot.sweep(servesim.sweep("default_chat", utilizations=[0.5, 0.8, 0.95]))
    servesim.plot.steps(servesim.run("default_chat", steps=True).steps, "kv_blocks_used")

Each returns the matplotlib Axes it drew on (a new figure unless ``ax=``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    import pandas as pd

_ARMS = (("closed", "closed loop of N clients"), ("open_poisson", "open loop, Poisson"),
         ("open_gamma", "open loop, gamma (bursty)"))


def _axes(ax: Any) -> Any:
    if ax is not None:
        return ax
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError('servesim.plot needs matplotlib: pip install "servesim[plot]" '
                          "(or pip install matplotlib)") from e
    return plt.subplots(figsize=(7, 4.2))[1]


def loops(df: pd.DataFrame, *, ax: Any = None) -> Any:
    """The lesson's chart: mean queueing delay against load for the closed
    loop and the two open loops at the same throughput, with the M/M/1
    curve (wait = rho/(1-rho) service times, cut at 3x the largest measured
    delay) and the saturation throughput mu as a vertical line. `df`: what servesim.loops() returns."""
    ax = _axes(ax)
    loops_report = df.attrs["report"]["loops"]
    mu = loops_report["saturation_rps"]
    for arm, label in _ARMS:
        ax.plot(df["throughput_rps"], df[f"{arm}.queue_mean_ms"], "o-", label=label)
    curve = loops_report["theory"]["mm1_wait_ms"]
    ax.plot([p[0] for p in curve], [p[1] for p in curve], "--", color="gray",
            label="M/M/1 wait")
    ax.axvline(mu, color="black", linewidth=0.8)
    ax.annotate(f"μ = {mu:.2f} req/s ", (mu, 1), xycoords=("data", "axes fraction"),
                va="top", ha="right")
    for n, x, y in zip(df["concurrency"], df["throughput_rps"], df["closed.queue_mean_ms"]):
        ax.annotate(f"N={n}", (x, y), textcoords="offset points", xytext=(0, 6),
                    ha="center", fontsize=8)
    ax.set_xlabel("throughput (req/s)")
    ax.set_ylabel("mean queueing delay (ms)")
    # The M/M/1 curve grows without bound at mu: the axis stops at 3x the
    # largest measured delay so the measured points stay readable.
    measured = max(float(df[f"{arm}.queue_mean_ms"].max()) for arm, _ in _ARMS)
    ax.set_ylim(0, 3 * measured if measured > 0 else None)
    ax.set_xlim(0, mu * 1.05)
    ax.legend(loc="upper left")
    return ax


def sweep(df: pd.DataFrame, metric: str = "ttft_p99_ms", *, ax: Any = None) -> Any:
    """Latency against offered rate from servesim.sweep(): `metric` (a
    --csv column with _lo/_hi interval columns, default "ttft_p99_ms") with
    its 95% interval, and the utilization rho on a second x axis."""
    ax = _axes(ax)
    err = [df[metric] - df[f"{metric}_lo"], df[f"{metric}_hi"] - df[metric]]
    ax.errorbar(df["rate"], df[metric], yerr=err, fmt="o-", capsize=3, label=metric)
    ax.set_xlabel("offered rate (req/s)")
    ax.set_ylabel(metric.replace("_ms", " (ms)"))
    rho = df["utilization"] / df["rate"]
    if rho.notna().all() and len(rho) > 0:
        scale = float(rho.iloc[0])  # utilization = rate / mu
        top = ax.secondary_xaxis("top", functions=(lambda r: r * scale,
                                                   lambda u: u / scale))
        top.set_xlabel("utilization ρ = rate / μ")
    return ax


def steps(df: pd.DataFrame, y: str = "kv_blocks_used", *, x: str = "start_ms",
          ax: Optional[Any] = None) -> Any:
    """One --save-steps column against time (servesim.run(..., steps=True).steps),
    a line per replica."""
    ax = _axes(ax)
    groups = df.groupby("replica") if "replica" in df and df["replica"].nunique() > 1 \
        else [(None, df)]
    for replica, rows in groups:
        ax.plot(rows[x] / 1000.0 if x.endswith("_ms") else rows[x], rows[y], linewidth=0.8,
                label=None if replica is None else "replica " + str(replica))
    if len(groups) > 1:
        ax.legend()
    ax.set_xlabel("simulated time (s)" if x.endswith("_ms") else x)
    ax.set_ylabel(y)
    return ax
