"""The index is never lost: SIGKILL during ingest or rebuild, searches during ingest."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable

import pytest
from conftest import write_abstracts

from assistant import Assistant, Settings, load_corpus
from assistant.corpus import shipped_seeds_dir

pytestmark = pytest.mark.slow


def start_ingest(data_dir, *args: str) -> subprocess.Popen:
    env = {**os.environ, "CITEQA_DATA_DIR": str(data_dir)}
    return subprocess.Popen(
        [sys.executable, "-m", "assistant", "ingest", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def kill_after(process: subprocess.Popen, delay: float) -> bool:
    """SIGKILL `process` after `delay` seconds; whether it was still running."""
    time.sleep(delay)
    running = process.poll() is None
    if running:
        process.send_signal(signal.SIGKILL)
    process.wait()
    return running


def kill_when(process: subprocess.Popen, ready: Callable[[], bool], delay: float) -> bool:
    """SIGKILL `process` `delay` seconds after `ready()` first holds (whatever the machine's
    speed); whether it was still running."""
    while process.poll() is None and not ready():
        time.sleep(0.05)
    return kill_after(process, delay)


def expected_chunk_ids(assistant: Assistant) -> set[str]:
    papers = load_corpus([shipped_seeds_dir()])
    return {chunk.chunk_id for paper in papers for chunk in assistant.index.chunker.chunk(paper)}


def test_killed_ingests_are_finished_by_the_next_run_without_duplicates(tmp_path):
    data_dir = tmp_path / "data"
    rng = random.Random(7)
    killed = 0
    for _ in range(4):
        killed += kill_after(start_ingest(data_dir), rng.uniform(1.5, 9.0))
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


SEARCH_IN_A_NEW_PROCESS = """
import json, sys
from assistant import Assistant, Settings
assistant = Assistant(Settings(data_dir=sys.argv[1]))
papers = assistant.index.snapshot().papers
hits = [
    hit.model_dump(include={"paper_id", "title", "text", "start", "end"})
    for question in json.loads(sys.argv[2])
    for mode in ("hybrid", "dense")
    for hit in assistant.retriever.search(question, k=5, mode=mode)
]
print(json.dumps({"papers": {pid: p.abstract for pid, p in papers.items()}, "hits": hits}))
"""


def visible_state(data_dir, queries: list[str]) -> set[str]:
    """The papers a new process sees, after checking that its searches agree with them:
    every hit is a paper it lists, quoted from that paper's abstract."""
    result = subprocess.run(
        [sys.executable, "-c", SEARCH_IN_A_NEW_PROCESS, str(data_dir), json.dumps(queries)],
        capture_output=True,
        text=True,
        check=True,
    )
    seen = json.loads(result.stdout)
    for hit in seen["hits"]:
        abstract = seen["papers"].get(hit["paper_id"])
        assert abstract is not None, f"search returned {hit['title']!r}, which papers lacks"
        assert abstract[hit["start"] : hit["end"]] == hit["text"]
    return set(seen["papers"])


@pytest.mark.timeout(900)
def test_killed_rebuilds_leave_the_whole_old_or_the_whole_new_index(tmp_path):
    data_dir = tmp_path / "data"
    corpora = {
        "first": write_abstracts(tmp_path / "first.jsonl", 34),
        "second": write_abstracts(tmp_path / "second.jsonl", 34, start=1000),
    }
    ids = {name: {p.paper_id for p in load_corpus([path])} for name, path in corpora.items()}
    queries = [p.title for path in corpora.values() for p in load_corpus([path])[:3]]
    Assistant(Settings(data_dir=data_dir)).ingest([corpora["first"]])
    started = time.monotonic()
    assert start_ingest(data_dir, "--rebuild", str(corpora["second"])).wait() == 0
    duration = time.monotonic() - started  # kill points scale with this machine's speed
    assert visible_state(data_dir, queries) == ids["second"]
    index = Assistant(Settings(data_dir=data_dir)).index
    collections = len(index.client.list_collections())
    current, rng, outcomes = "second", random.Random(12), set()
    for attempt in range(4):
        target = "first" if current == "second" else "second"
        generation = index.generation()
        process = start_ingest(data_dir, "--rebuild", str(corpora[target]))
        if attempt % 2:  # while it writes the new build
            killed = kill_when(
                process,
                lambda: len(index.client.list_collections()) > collections,
                rng.uniform(0, 0.7) * duration,
            )
        else:  # right after the switch, before the old build is dropped
            killed = kill_when(process, lambda old=generation: index.generation() != old, 0)
        state = visible_state(data_dir, queries)
        assert state in (ids[current], ids[target]), f"attempt {attempt} left a partial index"
        outcomes.add((killed, "new" if state == ids[target] else "old"))
        current = "first" if state == ids["first"] else "second"
    assert {(True, "old"), (True, "new")} <= outcomes, outcomes
    assistant = Assistant(Settings(data_dir=data_dir))
    assistant.ingest([corpora["first"]], rebuild=True)
    names = {c.name for c in assistant.index.client.list_collections()}
    assert len(names) == 3, f"leftovers of killed rebuilds remain: {names}"
    assert visible_state(data_dir, queries) == ids["first"]


@pytest.mark.timeout(900)
def test_a_killed_ingest_never_shows_papers_that_papers_does_not_list(fresh_dir, tmp_path):
    corpus = write_abstracts(tmp_path / "more.jsonl", 150, start=300)
    more = {paper.paper_id for paper in load_corpus([corpus])}
    queries = [paper.title for paper in load_corpus([corpus])[:12]]
    seeds = {paper.paper_id for paper in load_corpus([shipped_seeds_dir()])}
    # a seed that more.jsonl also holds, with a longer abstract, is replaced by that record:
    # while its new version is written it is hidden, like any paper not yet complete
    kept = seeds - more
    assert len(kept) > len(seeds) / 2
    index = Assistant(Settings(data_dir=fresh_dir)).index
    rng, killed = random.Random(3), 0
    for _ in range(3):
        before = index.count_chunks()
        process = start_ingest(fresh_dir, str(corpus))
        # once more chunks than Chroma keeps unflushed (100) are written, dense search sees them
        killed += kill_when(
            process, lambda before=before: index.count_chunks() > before + 100, rng.uniform(0, 2)
        )
        assert kept <= visible_state(fresh_dir, queries) <= seeds | more
        shutil.rmtree(fresh_dir / "keyword")  # the same with the snapshot rebuilt from Chroma
        assert kept <= visible_state(fresh_dir, queries) <= seeds | more
    assert killed, "every ingest finished before it could be killed; nothing was tested"
