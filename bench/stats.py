"""Timing, percentiles and machine state shared by the benchmark workers and the report."""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable, Sequence

import numpy as np


def seconds(action: Callable[[], object]) -> float:
    """Wall-clock seconds that `action()` takes."""
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def median(values: Sequence[float]) -> float:
    """The median of `values`."""
    return float(np.median(values))


def summary_ms(samples_s: Sequence[float]) -> dict[str, float]:
    """p50, p95 and the sample count of durations given in seconds, in milliseconds."""
    millis = np.asarray(samples_s) * 1000
    return {
        "p50_ms": float(np.percentile(millis, 50)),
        "p95_ms": float(np.percentile(millis, 95)),
        "n": len(millis),
    }


def load_average() -> float:
    """The 1-minute load average (the machine is shared: read figures next to it)."""
    return round(os.getloadavg()[0], 2)


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
