"""citeqa works with the network cut: run in a network namespace with nothing but loopback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

# what citeqa sets by itself to stay offline: the test must not set it for it
OFFLINE_SWITCHES = ("HF_", "TRANSFORMERS_", "TIKTOKEN_", "ANONYMIZED_", "GRADIO_")


@pytest.fixture(scope="module")
def offline():
    """A runner of commands in a fresh network namespace (`unshare -n`)."""
    if not shutil.which("unshare") or subprocess.run(["unshare", "-n", "true"]).returncode:
        pytest.skip("`unshare -n` is not permitted here (it needs root or user namespaces)")
    devices = subprocess.run(
        ["unshare", "-n", "cat", "/proc/net/dev"], capture_output=True, text=True, check=True
    ).stdout
    assert {line.split(":")[0].strip() for line in devices.splitlines()[2:]} == {"lo"}

    def run(data_dir, *args: str) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items() if not k.startswith(OFFLINE_SWITCHES)}
        return subprocess.run(
            ["unshare", "-n", sys.executable, "-m", "assistant", *args],
            capture_output=True,
            text=True,
            env={**env, "CITEQA_DATA_DIR": str(data_dir)},
            timeout=600,
        )

    return run


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_ingest_search_and_ask_with_the_network_cut(offline, tmp_path):
    ingest = offline(tmp_path, "ingest")
    assert ingest.returncode == 0, ingest.stderr
    assert "76 added" in ingest.stdout
    search = offline(tmp_path, "search", "neural collapse in language models", "--json")
    assert search.returncode == 0, search.stderr
    assert "Neural Collapse" in json.loads(search.stdout)[0]["title"]
    ask = offline(tmp_path, "ask", "What does GaLore reduce?", "--backend", "extractive", "--json")
    assert ask.returncode == 0, ask.stderr
    answer = json.loads(ask.stdout)
    assert not answer["refused"] and answer["citations"], answer
    assert all("GaLore" in (citation["title"] or "") for citation in answer["citations"])
