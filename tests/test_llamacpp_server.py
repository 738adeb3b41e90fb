"""The openai backend against a real OpenAI-compatible server: llama.cpp's own HTTP server
(xllamacpp.Server, the engine Ollama and LM Studio embed) serving the shipped SmolLM2 GGUF
on 127.0.0.1. The fake server stays for the faults a real one will not produce on demand."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace

import pytest
import xllamacpp
from conftest import REPO

from assistant import Assistant, Settings
from assistant.backends.base import Deadline, GenerationRequest
from assistant.backends.local import default_model_path, server_params
from assistant.backends.openai_compat import OpenAIBackend
from assistant.errors import BackendError
from assistant.settings import LLMSettings

KEY = "sk-llamacpp-test-5150"
ALIAS = "smollm2"
FRANCE = GenerationRequest(
    question="What is the capital of France?",
    sources=[],
    messages=[
        {"role": "system", "content": "You are a concise assistant."},
        {"role": "user", "content": "What is the capital of France?"},
    ],
    max_tokens=24,
)


@pytest.fixture(scope="module")
def llama_url() -> Iterator[str]:
    """The `/v1` URL of llama.cpp's server on 127.0.0.1 (a free port), keyed with KEY."""
    params = server_params(default_model_path(), context_tokens=4096, threads=2)
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # the system picks a free one
    params.api_keys = [KEY]
    params.model_alias = {ALIAS}
    server = xllamacpp.Server(params)
    address = server.listening_address
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", address), address
    yield f"{address}/v1"
    del server  # stops serving


def backend(url: str, **overrides: object) -> OpenAIBackend:
    options = {"base_url": url, "api_key": KEY, "model": ALIAS, "max_retries": 0, "timeout": 300}
    return OpenAIBackend(LLMSettings(**(options | overrides)))


FRESH_ANSWER = """
import json, sys
from assistant.backends.base import GenerationRequest
from assistant.backends.local import LocalBackend
from assistant.settings import LLMSettings

request = GenerationRequest(**json.loads(sys.argv[1]))
print(json.dumps("".join(LocalBackend(LLMSettings()).generate(request))))
"""


@pytest.fixture(scope="module")
def in_process() -> str:
    """The same model's greedy answer to FRANCE, run in-process by the local backend in a
    fresh process (a model that has already answered reuses its prompt cache, which can
    change a greedy answer)."""
    request = {k: v for k, v in vars(FRANCE).items() if k in ("question", "messages", "max_tokens")}
    done = subprocess.run(
        [sys.executable, "-c", FRESH_ANSWER, json.dumps({**request, "sources": []})],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_streams_the_same_answer_as_the_model_in_process(llama_url, in_process):
    """The server's first request, so that it too answers from a fresh prompt cache."""
    pieces = list(backend(llama_url).generate(FRANCE))
    assert len(pieces) > 1 and all(isinstance(piece, str) for piece in pieces)
    assert in_process.strip() and "".join(pieces) == in_process


def test_status_lists_the_served_model(llama_url):
    assert backend(llama_url).status() == f"API reachable (model {ALIAS})"


def test_an_unknown_model_name_is_served_by_the_one_model_loaded(llama_url):
    """llama.cpp serves its single model whatever name is asked (no 404); the backend
    answers, and its status says the name is not in the server's list."""
    unknown = backend(llama_url, model="no-such-model")
    assert "".join(unknown.generate(FRANCE)).strip()
    assert unknown.status() == "API reachable (model no-such-model is not in its model list)"


def test_a_wrong_key_is_one_sentence_without_the_key(llama_url):
    with pytest.raises(BackendError) as caught:
        "".join(backend(llama_url, api_key="sk-wrong-key-000").generate(FRANCE))
    assert str(caught.value) == f"the API at {llama_url} rejected the key (HTTP 401)"


@pytest.fixture(scope="module")
def served(seeded_dir, llama_url) -> Assistant:
    """An `Assistant` over the seeded index whose `openai` backend is the llama.cpp server."""
    llm = LLMSettings(
        base_url=llama_url, api_key=KEY, model=ALIAS, timeout=300, deadline=600, max_tokens=48
    )
    return Assistant(Settings(data_dir=seeded_dir, llm=llm))


def test_a_plain_ask_keeps_the_models_text_and_answers_with_citations(served):
    answer = served.ask("What does GaLore do?", backend="openai")
    assert answer.raw_answer.strip()  # what the model wrote, before verification
    assert not answer.refused and all(s.citations for s in answer.sentences if s.kind == "claim")
    assert answer.backend == "openai" or "openai backend wrote" in (answer.note or "")


def test_a_follow_up_is_rewritten_by_the_model(served):
    first = "which papers study neural collapse?"
    history = [
        {"role": "user", "content": first},
        {"role": "assistant", "content": served.ask(first, backend="extractive").answer},
    ]
    follow_up = "and in language models?"
    rewritten = served.ask(follow_up, history, backend="openai").standalone_question
    assert rewritten and "\n" not in rewritten
    assert rewritten not in (follow_up, f"{first} {follow_up}")  # not the offline fallback
    said = {word.lower() for turn in history for word in re.findall(r"\w{5,}", turn["content"])}
    # SmolLM2-135M states the conversation's subject rather than asking about it
    assert said & {word.lower() for word in re.findall(r"\w{5,}", rewritten)}


def test_the_deadline_cuts_a_long_answer(llama_url):
    essay = replace(
        FRANCE,
        messages=[{"role": "user", "content": "Write a long essay about the sea."}],
        max_tokens=300,
        deadline=Deadline(1.0),
    )
    # Cut before the first piece (on a loaded machine) or after some. Last in this file:
    # a request abandoned before its first piece still runs to its end on the server.
    with pytest.raises(BackendError) as caught:
        "".join(backend(llama_url).generate(essay))
    message = str(caught.value)
    assert re.search(r"(did not finish its answer|sent no answer) within [\d.]+ s", message)
    assert message.endswith("(deadline 1 s)")
