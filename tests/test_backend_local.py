"""The local backend against the real SmolLM2-135M GGUF model: no mocks."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from assistant.backends.base import Backend, Deadline, GenerationRequest
from assistant.backends.local import (
    INSTALL_HINT,
    LocalBackend,
    default_model_path,
    measure_tokens_per_second,
)
from assistant.errors import BackendError
from assistant.settings import LLMSettings

DEFAULT_MODEL = default_model_path()  # a missing model fails here, loudly


def ask(question: str, max_tokens: int = 24, temperature: float = 0.0) -> GenerationRequest:
    return GenerationRequest(
        question=question,
        sources=[],
        messages=[
            {"role": "system", "content": "You are a concise assistant."},
            {"role": "user", "content": question},
        ],
        max_tokens=max_tokens,
        temperature=temperature,
    )


@pytest.fixture(scope="module")
def backend() -> LocalBackend:
    return LocalBackend(LLMSettings())


@pytest.fixture(scope="module")
def user_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("models") / "x.gguf"
    shutil.copyfile(DEFAULT_MODEL, path)
    return path


def test_default_model_is_the_packaged_smollm2() -> None:
    assert DEFAULT_MODEL.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert DEFAULT_MODEL.is_file()


def test_implements_the_backend_protocol(backend: LocalBackend) -> None:
    assert isinstance(backend, Backend)
    assert backend.name == "local"


def test_greedy_chat_is_non_empty_and_deterministic(backend: LocalBackend) -> None:
    request = ask("What is the capital of France?")
    first = "".join(backend.generate(request))
    second = "".join(backend.generate(request))
    assert first.strip()
    assert first == second


def test_generation_streams_in_several_pieces(backend: LocalBackend) -> None:
    pieces = list(backend.generate(ask("Name three colours.")))
    assert len(pieces) > 1
    assert all(isinstance(piece, str) and piece for piece in pieces)


def test_max_tokens_is_honoured(backend: LocalBackend) -> None:
    text = "".join(backend.generate(ask("Write a long essay about the sea.", max_tokens=16)))
    assert text
    assert backend.last_stats is not None
    assert 1 <= backend.last_stats.tokens <= 16
    assert backend.last_stats.seconds > 0


def test_stopping_early_leaves_the_model_usable(backend: LocalBackend) -> None:
    stream = backend.generate(ask("Write a long essay about the sea.", max_tokens=200))
    assert next(stream)
    stream.close()
    assert "".join(backend.generate(ask("Say hello.", max_tokens=8)))


EXIT_MID_GENERATION = """
from assistant.backends.base import GenerationRequest
from assistant.backends.local import LocalBackend
from assistant.settings import LLMSettings

stream = LocalBackend(LLMSettings()).generate(
    GenerationRequest(question="Write a long essay about the sea.", sources=[], max_tokens=400)
)
print(next(stream), flush=True)
"""


def test_exiting_mid_generation_does_not_abort_the_process() -> None:
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-c", EXIT_MID_GENERATION],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()


def test_the_deadline_stops_a_long_generation(backend: LocalBackend) -> None:
    assert "".join(backend.generate(ask("Hi", max_tokens=4)))  # the model is loaded
    essay = replace(
        ask("Write a long essay about the sea.", max_tokens=2000), deadline=Deadline(0.5)
    )
    with pytest.raises(BackendError) as caught:  # before or after its first piece (load)
        "".join(backend.generate(essay))
    found = re.search(
        r"no complete answer within (\d+\.\d) s \(deadline 0.5 s\)\.$", str(caught.value)
    )
    assert found and float(found.group(1)) >= 0.5, caught.value
    assert "".join(backend.generate(ask("Say hello.", max_tokens=8)))  # and stays usable


def test_sampling_with_temperature_still_answers(backend: LocalBackend) -> None:
    assert "".join(backend.generate(ask("Say hello.", max_tokens=8, temperature=0.8)))


def test_measure_tokens_per_second(backend: LocalBackend) -> None:
    assert measure_tokens_per_second(backend, "Count from one to ten.", max_tokens=32) > 0


def test_two_threads_generate_concurrently(backend: LocalBackend) -> None:
    results: dict[int, str] = {}
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            results[n] = "".join(backend.generate(ask(f"What is {n} plus {n}?", max_tokens=16)))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in (2, 3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=240)  # two generations on 2 busy CPUs
    assert not errors
    assert results[2].strip()
    assert results[3].strip()


def test_backends_with_the_same_settings_share_the_model(backend: LocalBackend) -> None:
    list(backend.generate(ask("Hi", max_tokens=4)))
    assert LocalBackend(LLMSettings()).status() == (
        "model loaded (SmolLM2-135M-Instruct.Q4_1.gguf)"
    )


def test_user_given_path_loads_silently(user_model: Path, capfd: pytest.CaptureFixture) -> None:
    local = LocalBackend(LLMSettings(model_path=user_model))
    assert local.status() == "model not loaded yet (x.gguf)"
    capfd.readouterr()
    assert "".join(local.generate(ask("What is the capital of France?")))
    captured = capfd.readouterr()
    assert captured.out == ""
    assert captured.err == ""
    assert local.status() == "model loaded (x.gguf)"


def test_missing_file_is_a_backend_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.gguf"
    missing.write_bytes(b"GGUF")
    local = LocalBackend(LLMSettings(model_path=missing))
    missing.unlink()  # settings refuse a missing file; here it disappears after start-up
    assert local.status() == f"model file missing: {missing}"
    with pytest.raises(BackendError, match=re.escape(str(missing))):
        list(local.generate(ask("Hi")))


@pytest.mark.parametrize("header", [b"", b"GGUF"], ids=["random-bytes", "gguf-magic-then-garbage"])
def test_corrupt_file_is_a_backend_error(tmp_path: Path, header: bytes) -> None:
    corrupt = tmp_path / "corrupt.gguf"
    corrupt.write_bytes(header + os.urandom(1 << 20))
    local = LocalBackend(LLMSettings(model_path=corrupt))
    with pytest.raises(BackendError, match=re.escape(str(corrupt))) as info:
        list(local.generate(ask("Hi")))
    assert "\n" not in str(info.value)
    assert local.status() == "model not loaded yet (corrupt.gguf)"


def test_prompt_longer_than_the_context_is_a_backend_error() -> None:
    local = LocalBackend(LLMSettings(context_tokens=512))
    with pytest.raises(BackendError, match="context"):
        list(local.generate(ask("word " * 1000)))


def test_missing_default_model_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("assistant.backends.local.DEFAULT_MODEL_PACKAGE", "no-such-dist-xyz")
    with pytest.raises(BackendError, match=re.escape(INSTALL_HINT)):
        default_model_path()
    status = LocalBackend(LLMSettings()).status()
    assert status.startswith("model file missing: ")
    assert INSTALL_HINT in status
