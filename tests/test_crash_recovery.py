"""The index is never lost: SIGKILL during ingest, searches during ingest."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest

from assistant import Assistant, Settings, load_corpus
from assistant.corpus import shipped_seeds_dir

pytestmark = pytest.mark.slow


def start_ingest(data_dir) -> subprocess.Popen:
    env = {**os.environ, "CITEQA_DATA_DIR": str(data_dir)}
    return subprocess.Popen(
        [sys.executable, "-m", "assistant", "ingest"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def expected_chunk_ids(assistant: Assistant) -> set[str]:
    papers = load_corpus([shipped_seeds_dir()])
    return {chunk.chunk_id for paper in papers for chunk in assistant.index.chunker.chunk(paper)}


def test_killed_ingests_are_finished_by_the_next_run_without_duplicates(tmp_path):
    data_dir = tmp_path / "data"
    rng = random.Random(7)
    killed = 0
    for _ in range(4):
        process = start_ingest(data_dir)
        time.sleep(rng.uniform(1.5, 9.0))
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
            killed += 1
        process.wait()
    assert killed >= 2, "ingest finished before it could be killed; nothing was tested"
    assistant = Assistant(Settings(data_dir=data_dir))
    report = assistant.ingest()
    assert report.added + report.updated + report.unchanged == 76
    index = assistant.index
    stored = index.chunks.get(include=[])["ids"]
    assert len(stored) == len(set(stored)) == index.count_chunks()
    assert set(stored) == expected_chunk_ids(assistant)
    records = index.paper_records.get(include=["metadatas"])
    assert len(records["ids"]) == 76
    assert {m["status"] for m in records["metadatas"]} == {"ready"}
    assert len(assistant.papers()) == 76
    assert assistant.ingest().unchanged == 76


def test_searches_during_an_ingest_get_consistent_results(tmp_path):
    data_dir = tmp_path / "data"
    assistant = Assistant(Settings(data_dir=data_dir))
    process = start_ingest(data_dir)
    results = 0
    try:
        deadline = time.monotonic() + 120
        while process.poll() is None and time.monotonic() < deadline:
            if assistant.index.is_empty():
                time.sleep(0.2)
                continue
            for hit in assistant.retriever.search("memory-efficient training", k=5):
                papers = assistant.index.snapshot().papers
                if hit.paper_id in papers:
                    abstract = papers[hit.paper_id].abstract
                    assert abstract[hit.start : hit.end] == hit.text
                assert hit.display_title and hit.text
            results += 1
    finally:
        process.wait(timeout=120)
    assert process.returncode == 0
    assert results >= 3, "no search ran while the ingest was writing"
    assert len(Assistant(Settings(data_dir=data_dir)).papers()) == 76
