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

for _name in [name for name in os.environ if name.startswith("CITEQA_")]:
    del os.environ[_name]
os.environ["CITEQA_CONFIG"] = "/nonexistent/citeqa-tests.toml"

from assistant import Assistant, Settings  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
EVAL = REPO / "eval"
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
    chroma = shutil.which("chroma")
    assert chroma, "the `chroma` command (from the chromadb package) is not on PATH"
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
