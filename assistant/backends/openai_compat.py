"""Answers from OpenAI or any OpenAI-compatible server (Ollama, vLLM, LM Studio, llama.cpp)."""

from __future__ import annotations

import logging
import queue
import random
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx
import openai

from ..errors import BackendError
from ..openai_api import ApiEndpoint, timed_out
from ..settings import LLMSettings
from .base import Deadline, GenerationRequest

log = logging.getLogger(__name__)

STATUS_TIMEOUT = 2.0
# Waits between retries, as the openai client does: 0.5 s doubling up to 8 s, less up to
# a quarter by jitter, unless the server says how long (retry-after) within a minute.
FIRST_WAIT, LONGEST_WAIT, LONGEST_RETRY_AFTER = 0.5, 8.0, 60.0
API_ERRORS = (openai.OpenAIError, httpx.HTTPError, ValueError)
_END = object()  # marks the end of a stream


class OpenAIBackend:
    """Streams chat completions from an OpenAI-compatible API.

    It retries 408/409/429/5xx and connection failures itself, with backoff, each attempt
    waiting at most `llm.timeout` and all of them together at most the deadline."""

    name = "openai"
    weak = False

    def __init__(self, settings: LLMSettings) -> None:
        self.source_tokens = settings.source_tokens or None
        self._endpoint = ApiEndpoint(
            base_url=settings.base_url,
            api_key=settings.api_key,
            model=settings.model,
            timeout=settings.timeout,
            max_retries=settings.max_retries,
        )
        self._deadline = settings.deadline
        self._client = self._endpoint.client().with_options(max_retries=0)

    def __repr__(self) -> str:
        return f"OpenAIBackend(model={self._endpoint.model!r}, base_url={self._endpoint.url!r})"

    def generate(self, request: GenerationRequest) -> Iterator[str]:
        """Yield the answer in pieces, the key masked; raise `BackendError` if it fails,
        comes back empty or misses the deadline.

        A stream that breaks off raises after the pieces already yielded."""
        if not request.messages:
            raise ValueError("an OpenAI backend needs chat messages in the request")
        deadline = request.deadline or Deadline(self._deadline)
        stream = self._open(request, deadline)
        yield from self._endpoint.scrub_stream(self._pieces(stream, deadline))

    def _open(self, request: GenerationRequest, deadline: Deadline) -> Any:
        """The response stream, once the server starts answering; retried on failures
        worth retrying while attempts and time are left."""
        endpoint = self._endpoint
        started = time.monotonic()
        retries = 0
        while True:
            try:
                return self._client.chat.completions.create(
                    model=endpoint.model,
                    messages=request.messages,  # type: ignore[arg-type]
                    max_tokens=request.max_tokens,
                    temperature=request.temperature,
                    stream=True,
                    timeout=max(min(endpoint.timeout, deadline.left()), 0.001),
                )
            except API_ERRORS as exc:
                if retries == endpoint.max_retries or not _retryable(exc):
                    raise self._failure(exc, retries, deadline, started) from None
                wait = _retry_wait(exc, retries)
                if wait >= deadline.left():
                    raise self._failure(exc, retries, deadline, started, late=True) from None
                time.sleep(wait)
                retries += 1

    def _pieces(self, stream: Any, deadline: Deadline) -> Iterator[str]:
        endpoint = self._endpoint
        answered = finished = False
        try:
            for chunk in _chunks_until(deadline, stream):
                piece, done = _read_chunk(chunk)
                finished = finished or done
                if piece:
                    answered = answered or bool(piece.strip())
                    yield piece
        except TimeoutError:
            raise self._unfinished(deadline) from None
        except API_ERRORS as exc:
            late = deadline.expired()
            raise self._unfinished(deadline) if late else endpoint.error(exc, 0) from None
        if not finished:
            raise BackendError(endpoint.cut_off())
        if not answered:
            raise BackendError(f"model '{endpoint.model}' at {endpoint.url} gave an empty answer")

    def _unfinished(self, deadline: Deadline) -> BackendError:
        return BackendError(
            f"the API at {self._endpoint.url} did not finish its answer {deadline.missed()}"
        )

    def _failure(
        self,
        exc: BaseException,
        retries: int,
        deadline: Deadline,
        started: float,
        late: bool = False,
    ) -> BackendError:
        """The sentence for a request that never got an answer, with the time it took."""
        endpoint = self._endpoint
        if timed_out(exc) and (late or deadline.expired()):
            return BackendError(f"the API at {endpoint.url} sent no answer {deadline.missed()}")
        if timed_out(exc):
            attempts = retries + 1
            return BackendError(
                f"the API at {endpoint.url} sent no answer within "
                f"{time.monotonic() - started:.1f} s ({attempts} "
                f"attempt{'s' if attempts > 1 else ''} of at most {endpoint.timeout:g} s)"
            )
        error = endpoint.error(exc, retries)
        if late or deadline.expired():
            return BackendError(f"{error}; no answer {deadline.missed()}")
        return error

    def status(self) -> str:
        """'API reachable (model x)' or 'API unreachable: why', from a quick GET /models."""
        endpoint = replace(self._endpoint, timeout=STATUS_TIMEOUT, max_retries=0)
        client = self._client.with_options(timeout=STATUS_TIMEOUT, max_retries=0)
        try:
            models = {model.id for model in client.models.list()}
        except openai.NotFoundError:
            return f"API unreachable: no model list at {endpoint.url}/models (HTTP 404)"
        except Exception as exc:  # status() must never raise
            return f"API unreachable: {endpoint.error(exc)}"
        if endpoint.model in models:
            return f"API reachable (model {endpoint.model})"
        return f"API reachable (model {endpoint.model} is not in its model list)"


def _chunks_until(deadline: Deadline, stream: Any) -> Iterator[Any]:
    """The chunks of `stream`, read on a worker thread so that waiting for the next one
    ends at the deadline (`TimeoutError`) whatever the server sends meanwhile: keep-alive
    comments, which the client skips, would hold a read loop past it. Closes the stream."""
    chunks: queue.Queue = queue.Queue()

    def read() -> None:
        try:
            for chunk in stream:
                chunks.put(chunk)
        except BaseException as exc:  # handed to the consuming thread
            chunks.put(exc)
        finally:
            chunks.put(_END)

    threading.Thread(target=read, daemon=True).start()
    try:
        while True:
            try:
                chunk = chunks.get(timeout=max(deadline.left(), 0.0))
            except queue.Empty:
                raise TimeoutError from None
            if chunk is _END:
                return
            if isinstance(chunk, BaseException):
                raise chunk
            yield chunk
    finally:
        stream.close()  # a read still waiting then fails, within its own timeout


def _retryable(exc: BaseException) -> bool:
    """Whether `exc` is worth another attempt (the openai client's own rule)."""
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500
    return isinstance(exc, openai.APIConnectionError)  # timeouts included


def _retry_wait(exc: BaseException, retries: int) -> float:
    """Seconds to wait before retry number `retries + 1`."""
    headers = exc.response.headers if isinstance(exc, openai.APIStatusError) else {}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            asked = float(headers.get(name, "")) * scale
        except ValueError:
            continue
        if 0 <= asked <= LONGEST_RETRY_AFTER:
            return asked
    return min(FIRST_WAIT * 2**retries, LONGEST_WAIT) * (1 - 0.25 * random.random())


def _read_chunk(chunk: Any) -> tuple[str, bool]:
    """The text in one streamed chunk, and whether it is the final one.

    Servers' chunks are not validated by the client, so their shape is checked here."""
    choices = getattr(chunk, "choices", None)
    if not isinstance(choices, list):
        raise ValueError("a streamed chunk has no choices")
    if not choices:
        return "", False
    choice = choices[0]
    content = getattr(getattr(choice, "delta", None), "content", None)
    if content is not None and not isinstance(content, str):
        raise ValueError("a streamed chunk carries non-text content")
    return content or "", getattr(choice, "finish_reason", None) is not None
