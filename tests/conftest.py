"""Shared pytest fixtures: an isolated environment, a seeded index, servers on 127.0.0.1."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fake_openai_server import FakeOpenAIServer

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
EVAL = REPO / "eval"

for _name in [name for name in os.environ if name.upper().startswith("CITEQA_")]:
    del os.environ[_name]
os.environ["CITEQA_CONFIG"] = str(TESTS / "citeqa-tests.toml")  # empty: the defaults

from assistant import Assistant, Settings  # noqa: E402

ABSTRACTS_2024 = REPO / "bench" / "data" / "abstracts_2024.jsonl"


def run_citeqa(data_dir: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """Run the `citeqa` command line in a subprocess on `data_dir`, as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "assistant", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "CITEQA_DATA_DIR": str(data_dir), **env},
        timeout=300,
        cwd=str(data_dir),
    )


# Filtered questions whose unfiltered answer cites a paper the filter excludes:
# (question, filter, value); `passes_filter` says whether a paper (JSON) passes it.
FILTER_CASES = [
    ("how can LLM training be made memory-efficient?", "venue", "ICML"),
    ("which papers study neural collapse?", "author", "zhao"),
    ("which papers study generalization?", "area", "theory"),
]


def passes_filter(paper: dict, option: str, value: str) -> bool:
    if option == "author":
        return any(value in name.lower() for name in paper["authors"])
    return value.lower() in (paper[option] or "").lower()


def write_abstracts(path: Path, count: int, start: int = 0) -> Path:
    """A JSONL corpus of `count` real abstracts (from line `start` of the 5,564) at `path`."""
    with ABSTRACTS_2024.open(encoding="utf-8") as source:
        lines = [line for number, line in enumerate(source) if start <= number < start + count]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A fake OpenAI-compatible server on 127.0.0.1, fresh for each test."""
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture(scope="session")
def seeded_dir(tmp_path_factory) -> Path:
    """A data directory whose index holds the 76 shipped seed abstracts (built once)."""
    data_dir = tmp_path_factory.mktemp("seeded")
    Assistant(Settings(data_dir=data_dir)).ingest()
    return data_dir


@pytest.fixture(scope="session")
def assistant(seeded_dir) -> Assistant:
    """A shared `Assistant` over the seeded index (do not ingest into it)."""
    return Assistant(Settings(data_dir=seeded_dir))


@pytest.fixture
def fresh_dir(tmp_path, seeded_dir) -> Path:
    """A private copy of the seeded index that a test may change."""
    target = tmp_path / "data"
    shutil.copytree(seeded_dir, target, ignore=shutil.ignore_patterns("ingest.lock"))
    return target


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory) -> Iterator[tuple[str, int]]:
    """A real `chroma run` server on 127.0.0.1 and a free port."""
    chroma = chroma_command()
    port = free_port()
    path = tmp_path_factory.mktemp("chroma-server")
    log = open(path / "server.log", "w")  # noqa: SIM115
    process = subprocess.Popen(
        [chroma, "run", "--path", str(path / "db"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    try:
        _wait_for_heartbeat(port, process)
        yield "127.0.0.1", port
    finally:
        process.terminate()
        process.wait(timeout=20)
        log.close()


def chroma_command() -> str:
    """The `chroma` command of this interpreter's environment (its venv's bin), else PATH's."""
    beside = Path(sys.executable).with_name("chroma")
    chroma = str(beside) if os.access(beside, os.X_OK) else shutil.which("chroma")
    assert chroma, f"no `chroma` command (from chromadb) beside {sys.executable} or on PATH"
    return chroma


def _wait_for_heartbeat(port: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, "chroma run exited early"
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1).is_success:
                return
        except httpx.HTTPError:
            time.sleep(0.3)
    raise AssertionError("chroma run did not answer within 60 s")
