"""servesim.plot: the charts draw what the results hold, and without
matplotlib (the [plot] extra) the error says how to get it."""
import sys

import pytest

import servesim
import servesim.plot


def test_without_matplotlib_the_error_names_the_extra(monkeypatch, small_file):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)  # import fails
    steps = servesim.run(small_file, requests=False, steps=True, steps_every=50).steps
    with pytest.raises(ImportError, match=r'pip install "servesim\[plot\]"'):
        servesim.plot.steps(steps)


def test_loops_and_sweep_charts(small_file, monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    plt = pytest.importorskip("matplotlib.pyplot")
    lesson = servesim.loops(small_file, concurrency=[2, 8], replications=2)
    ax = servesim.plot.loops(lesson)
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels[:4] == ["closed loop of N clients", "open loop, Poisson",
                          "open loop, gamma (bursty)", "M/M/1 wait"]
    texts = [t.get_text() for t in ax.texts]
    assert "N=2" in texts and "N=8" in texts and any("μ =" in t for t in texts)
    # The closed loop's points are the table's.
    x, y = ax.get_lines()[0].get_data()
    assert list(x) == list(lesson["throughput_rps"])
    assert list(y) == list(lesson["closed.queue_mean_ms"])
    sweep = servesim.sweep(small_file, rates=[5, 10], replications=2)
    ax = servesim.plot.sweep(sweep)
    assert ax.get_xlabel() == "offered rate (req/s)"
    assert "ρ" in ax.child_axes[0].get_xlabel()
    plt.close("all")
