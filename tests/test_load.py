"""Load: 20 concurrent chats through the web UI and 8 Python API threads, zero errors."""

from __future__ import annotations

import pytest

from bench.load import run

pytestmark = pytest.mark.slow


def test_concurrent_chats_and_threads_all_succeed_with_valid_answers():
    summaries = run(clients=20, threads=8, per_worker=2, backend="extractive")
    for summary in summaries:
        print(summary)
        assert summary["errors"] == 0, summary["sample_errors"]
        assert summary["invalid_answers"] == 0, summary["sample_invalid"]
        assert summary["requests"] == summary["workers"] * 2
