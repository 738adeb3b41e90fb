"""The OpenAI-compatible backend and embedder against a real local HTTP server (no mocks)."""

from __future__ import annotations

import itertools
import math
import re
import socket
import time
from dataclasses import replace

import numpy as np
import pytest
from fake_openai_server import Behaviour, FakeOpenAIServer, hash_vector
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import SecretStr

from assistant.backends.base import Backend, Deadline, GenerationRequest
from assistant.backends.openai_compat import OpenAIBackend
from assistant.embeddings_openai import OpenAIEmbedder
from assistant.errors import BackendError
from assistant.openai_api import MASK, ApiEndpoint
from assistant.settings import LLMSettings

KEY = "sk-secret-test-123"
MODEL = "fake-model"
REQUEST = GenerationRequest(
    question="What do transformers use?",
    sources=[],
    messages=[
        {"role": "system", "content": "Answer from the sources."},
        {"role": "user", "content": "What do transformers use?"},
    ],
    max_tokens=64,
    temperature=0.2,
)


def backend(base_url: str, **overrides: object) -> OpenAIBackend:
    options: dict[str, object] = {
        "base_url": base_url,
        "api_key": KEY,
        "model": MODEL,
        "timeout": 5.0,
        "max_retries": 1,
    }
    return OpenAIBackend(LLMSettings(**(options | overrides)))


def failure(server_url: str, **overrides: object) -> str:
    with pytest.raises(BackendError) as caught:
        "".join(backend(server_url, **overrides).generate(REQUEST))
    message = str(caught.value)
    assert KEY not in message
    return message


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_implements_backend_protocol(fake_openai: FakeOpenAIServer) -> None:
    assert isinstance(backend(fake_openai.base_url), Backend)
    assert backend(fake_openai.base_url).name == "openai"


def test_streams_answer_in_pieces(fake_openai: FakeOpenAIServer) -> None:
    text = "Transformers use self-attention [1] and positional encodings [2]."
    fake_openai.script([Behaviour.answer(text)])
    pieces = list(backend(fake_openai.base_url).generate(REQUEST))
    assert len(pieces) > 1
    assert "".join(pieces) == text


def test_sends_messages_settings_and_key(fake_openai: FakeOpenAIServer) -> None:
    answer = "".join(backend(fake_openai.base_url).generate(REQUEST))
    assert answer == 'You asked: "What do transformers use?".'
    (seen,) = fake_openai.requests_to("/chat/completions")
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.body["messages"] == REQUEST.messages
    assert seen.body["model"] == MODEL
    assert seen.body["stream"] is True
    assert seen.body["max_tokens"] == 64
    assert seen.body["temperature"] == 0.2


def test_keyless_server_gets_placeholder_key(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.answer_text = "Fine."
    assert "".join(backend(fake_openai.base_url, api_key=None).generate(REQUEST)) == "Fine."
    assert fake_openai.requests[0].headers["authorization"] == "Bearer not-needed"


def test_rate_limit_then_success_retries(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script([Behaviour.rate_limited(), Behaviour.answer("Done [1].")])
    assert "".join(backend(fake_openai.base_url).generate(REQUEST)) == "Done [1]."
    assert len(fake_openai.requests_to("/chat/completions")) == 2


def test_server_errors_exhaust_retries(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script([Behaviour.server_error()] * 3)
    message = failure(fake_openai.base_url, max_retries=2)
    assert "HTTP 500" in message
    assert "after 2 retries" in message
    assert len(fake_openai.requests) == 3


def test_rate_limit_exhausts_retries(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script([Behaviour.rate_limited()] * 2)
    assert "HTTP 429" in failure(fake_openai.base_url)


def test_rejected_key(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script([Behaviour.unauthorized()])
    message = failure(fake_openai.base_url)
    assert "rejected the key" in message
    assert "401" in message


def test_missing_model(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script([Behaviour.model_not_found()])
    message = failure(fake_openai.base_url, model="no-such-model")
    assert message.startswith("model 'no-such-model' not found at ")
    assert fake_openai.base_url in message


def test_connection_refused() -> None:
    url = closed_port_url()
    message = failure(url, max_retries=0)
    assert message == f"cannot reach the API at {url} (connection refused)"


def test_malformed_stream(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script([Behaviour.malformed()])
    assert "malformed response" in failure(fake_openai.base_url)


def test_stream_cut_mid_answer(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script([Behaviour.cut(pieces=2)])
    generator = backend(fake_openai.base_url).generate(REQUEST)
    received = []
    with pytest.raises(BackendError, match="dropped before the response was complete") as caught:
        received.extend(generator)
    assert received == ["You ", "asked: "]
    assert KEY not in str(caught.value)


def test_stream_ending_without_final_chunk(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script([Behaviour.cut(pieces=3, graceful=True)])
    assert "dropped before the response was complete" in failure(fake_openai.base_url)


def test_empty_answer(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script([Behaviour.answer("  \n")])
    assert "empty answer" in failure(fake_openai.base_url)


def seconds_in(message: str, pattern: str) -> float:
    """The seconds a message states, found by `pattern` (with one group for them)."""
    found = re.search(pattern, message)
    assert found, message
    return float(found.group(1))


def test_timeout_is_quick(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script([Behaviour.stall(5)])
    message = failure(fake_openai.base_url, timeout=1.0, max_retries=0)
    spent = seconds_in(message, r"sent no answer within (\d+\.\d) s \(1 attempt of at most 1 s\)$")
    assert 1.0 <= spent < 3
    assert message.startswith(f"the API at {fake_openai.base_url} ")


def test_timeouts_state_the_real_time_across_retries(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.default = Behaviour.stall(5)
    message = failure(fake_openai.base_url, timeout=0.5, max_retries=2)
    spent = seconds_in(message, r"within (\d+\.\d) s \(3 attempts of at most 0.5 s\)$")
    assert spent >= 1.5
    assert len(fake_openai.requests_to("/chat/completions")) == 3


def test_the_deadline_stops_retries_of_a_silent_server(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.default = Behaviour.stall(30)
    message = failure(fake_openai.base_url, timeout=5.0, max_retries=3, deadline=1.5)
    spent = seconds_in(message, r"sent no answer within (\d+\.\d) s \(deadline 1.5 s\)$")
    assert 1.5 <= spent < 5  # one attempt cut at the deadline, not 4 x 5 s
    assert len(fake_openai.requests_to("/chat/completions")) == 1


def test_the_deadline_shared_by_requests_counts_from_its_start(fake_openai) -> None:
    fake_openai.default = Behaviour.stall(30)
    request = replace(REQUEST, deadline=Deadline(1.0, started=time.monotonic() - 0.6))
    with pytest.raises(BackendError) as caught:
        "".join(backend(fake_openai.base_url, timeout=5.0).generate(request))
    spent = seconds_in(str(caught.value), r"within (\d+\.\d) s \(deadline 1 s\)$")
    assert 1.0 <= spent < 5


def test_no_retry_is_started_that_would_end_after_the_deadline(fake_openai) -> None:
    fake_openai.retry_after_ms = 30_000
    fake_openai.default = Behaviour.rate_limited()
    message = failure(fake_openai.base_url, max_retries=3, deadline=2.0)
    assert "kept refusing with HTTP 429 (rate limit); no answer within " in message
    assert message.endswith("(deadline 2 s)")
    assert len(fake_openai.requests_to("/chat/completions")) == 1


def test_the_deadline_cuts_a_trickling_answer(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script([Behaviour.trickle(0.4, "one two three four five six seven eight")])
    received: list[str] = []
    with pytest.raises(BackendError) as caught:
        received.extend(backend(fake_openai.base_url, deadline=1.0).generate(REQUEST))
    message = str(caught.value)
    assert "did not finish its answer within " in message and message.endswith("(deadline 1 s)")
    assert 1 <= len(received) < 8


def test_the_deadline_holds_against_keep_alive_comments(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script([Behaviour.keep_alive(10)])
    message = failure(fake_openai.base_url, timeout=5.0, deadline=2.0)
    spent = seconds_in(message, r"did not finish its answer within (\d+\.\d) s \(deadline 2 s\)$")
    assert 2.0 <= spent < 5  # not held until the server's answer comes, 10 s later


def test_a_key_echoed_in_split_chunks_is_masked(fake_openai: FakeOpenAIServer) -> None:
    head, tail = KEY[:5], KEY[5:]
    fake_openai.script(
        [Behaviour.streamed("Your key is ", head, tail[:4], tail[4:] + " and", f" {KEY}.")]
    )
    pieces = list(backend(fake_openai.base_url).generate(REQUEST))
    assert "".join(pieces) == "Your key is *** and ***."
    assert len(pieces) > 1 and not any(head in piece and tail in piece for piece in pieces)


def test_text_that_only_begins_like_the_key_is_kept(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script([Behaviour.streamed("Use sk-", "secret-", "test-", "suites.")])
    pieces = list(backend(fake_openai.base_url).generate(REQUEST))
    assert "".join(pieces) == "Use sk-secret-test-suites."


def test_key_never_leaks(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script([Behaviour.error(400, f"Invalid request from key {KEY}.")])
    message = failure(fake_openai.base_url)
    assert "HTTP 400" in message
    assert "***" in message
    assert KEY not in repr(backend(fake_openai.base_url))


def test_status_of_running_server(fake_openai: FakeOpenAIServer) -> None:
    assert backend(fake_openai.base_url).status() == f"API reachable (model {MODEL})"
    other = backend(fake_openai.base_url, model="other").status()
    assert other == "API reachable (model other is not in its model list)"
    assert fake_openai.requests[0].path == "/v1/models"


def test_status_of_failing_server(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script([Behaviour.unauthorized()])
    status = backend(fake_openai.base_url).status()
    assert status.startswith("API unreachable: ")
    assert KEY not in status


def test_status_of_stopped_server() -> None:
    status = backend(closed_port_url()).status()
    assert status.startswith("API unreachable: cannot reach the API at ")


def embedder(server: FakeOpenAIServer, batch_size: int = 4) -> OpenAIEmbedder:
    return OpenAIEmbedder("fake-embed", server.base_url, SecretStr(KEY), batch_size, timeout=5)


def test_embedder_batches_and_normalises(fake_openai: FakeOpenAIServer) -> None:
    texts = [f"passage {i}" for i in range(10)]
    model = embedder(fake_openai, batch_size=4)
    vectors = model.embed(texts)
    assert model.name == "openai:fake-embed"
    assert vectors.shape == (10, 32)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    seen = fake_openai.requests_to("/embeddings")
    assert len(seen) == math.ceil(10 / 4)
    assert [len(r.body["input"]) for r in seen] == [4, 4, 2]
    expected = np.array(hash_vector("passage 7"))
    assert np.allclose(vectors[7], expected / np.linalg.norm(expected), atol=1e-6)
    assert model.dimension == 32
    assert len(fake_openai.requests) == 3


def test_embedder_dimension_is_discovered(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.embedding_dim = 8
    model = embedder(fake_openai)
    assert model.dimension == 8
    assert model.embed([]).shape == (0, 8)


def test_embedder_errors(fake_openai: FakeOpenAIServer) -> None:
    model = embedder(fake_openai)
    fake_openai.script([Behaviour.malformed(), Behaviour.model_not_found()])
    with pytest.raises(BackendError, match="malformed response"):
        model.embed(["a"])
    with pytest.raises(BackendError, match="model 'fake-embed' not found"):
        model.embed(["a"])
    assert KEY not in repr(model)


def test_embedder_unreachable() -> None:
    model = OpenAIEmbedder("m", closed_port_url(), None, 4, timeout=1, max_retries=0)
    with pytest.raises(BackendError, match="cannot reach the API"):
        model.embed(["a"])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["", KEY, KEY[:3], KEY[3:], "sk", "-", "x", " ", "secret"])).map(
        "".join
    ),
    st.lists(st.integers(0, 60), max_size=8),
)
def test_scrubbed_stream_equals_the_scrubbed_text(text: str, cuts: list[int]) -> None:
    bounds = sorted({0, len(text), *(min(cut, len(text)) for cut in cuts)})
    pieces = [text[start:end] for start, end in itertools.pairwise(bounds)]
    endpoint = ApiEndpoint(None, SecretStr(KEY), MODEL, 5.0, 0)
    scrubbed = list(endpoint.scrub_stream(pieces))
    assert "".join(scrubbed) == text.replace(KEY, MASK)
    assert all(piece for piece in scrubbed)
