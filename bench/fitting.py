"""What the fitting scripts (`bench/fit_refusal.py`, `bench/fit_listing.py`) share: the
command line, signals per labelled question set on a private seed index, and logistic
regression."""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np

from assistant import Assistant, Settings

Signals = TypeVar("Signals")


def signals_per_set(
    collect: Callable[[Assistant, str], Signals],
) -> tuple[argparse.Namespace, list[Signals]]:
    """Parse `SETS... --threshold T`, then `collect` each set's signals on a temporary
    index of the shipped seeds."""
    parser = argparse.ArgumentParser()
    parser.add_argument("sets", nargs="+")
    parser.add_argument("--threshold", type=float, default=0.5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        assistant = Assistant(Settings(data_dir=Path(folder)))
        assistant.ensure_index()
        return args, [collect(assistant, path) for path in args.sets]


def fit(
    x: np.ndarray, y: np.ndarray, l2: float = 0.01, steps: int = 8000, balanced: bool = True
) -> np.ndarray:
    """Logistic regression by gradient descent (with `balanced`, both classes weighted
    equally); returns the weights then the bias."""
    w = np.zeros(x.shape[1] + 1)
    xb = np.hstack([x, np.ones((len(x), 1))])
    balance = np.where(y == 1, 0.5 / y.mean(), 0.5 / (1 - y.mean())) if balanced else 1.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-xb @ w))
        w -= 0.5 * (xb.T @ (balance * (p - y)) / len(y) + l2 * np.r_[w[:-1], 0])
    return w
