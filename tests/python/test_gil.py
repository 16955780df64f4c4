"""The GIL is released while a simulation runs: Python keeps running beside
it (asserted), and two threads run two simulations at once (a benchmark:
the speed-up is printed, since it depends on a free second core)."""
import os
import threading
import time

import servesim
from conftest import small_scenario


def _scenario():
    return small_scenario(workload={**small_scenario()["workload"], "num_requests": 40000})


def test_python_runs_while_a_simulation_runs():
    sc = _scenario()
    done = threading.Event()
    t = threading.Thread(target=lambda: (servesim.run(sc, requests=False), done.set()))
    t.start()
    ticks = 0
    while not done.is_set():
        ticks += 1  # would stall for the whole run if the GIL were held
        time.sleep(0.001)
    t.join()
    assert ticks >= 20, f"the main thread ran {ticks} times during the simulation"


def test_two_threads_benchmark():
    sc = _scenario()
    servesim.run(sc, requests=False)  # warm caches
    start = time.perf_counter()
    for _ in range(2):
        servesim.run(sc, requests=False)
    one = time.perf_counter() - start
    threads = [threading.Thread(target=servesim.run, args=(sc,), kwargs={"requests": False})
               for _ in range(2)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    two = time.perf_counter() - start
    ratio = one / two
    print(f"\nGIL benchmark: 2 runs on 1 thread {one:.2f} s, on 2 threads {two:.2f} s: "
          f"speed-up {ratio:.2f}x ({os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f})")
    # Reported, not asserted: on a shared machine the second core may be
    # busy (a held GIL would give about 1.0 on an idle one too), so the
    # release itself is checked by the test above.
    assert ratio > 0
