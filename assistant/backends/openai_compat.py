"""Answers from OpenAI or any OpenAI-compatible server (Ollama, vLLM, LM Studio, llama.cpp)."""

from __future__ import annotations

import json
import logging
import queue
import random
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import httpx
import openai
from pydantic import SecretStr

from ..errors import BackendError
from ..settings import LLMSettings
from .base import Deadline, GenerationRequest

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
KEYLESS = "not-needed"
STATUS_TIMEOUT = 2.0
MASK = "***"
# Waits between retries, as the openai client does: 0.5 s doubling up to 8 s, less up to
# a quarter by jitter, unless the server says how long (retry-after) within a minute.
FIRST_WAIT, LONGEST_WAIT, LONGEST_RETRY_AFTER = 0.5, 8.0, 60.0
API_ERRORS = (openai.OpenAIError, httpx.HTTPError, ValueError)
_END = object()  # marks the end of a stream


@dataclass(frozen=True)
class ApiEndpoint:
    """One OpenAI-compatible API and model, and how patiently to talk to it.

    Turns every failure into a `BackendError` with one sentence that never contains the key.
    """

    base_url: str | None
    api_key: SecretStr | None = field(repr=False)
    model: str
    timeout: float
    max_retries: int

    @property
    def url(self) -> str:
        """The base URL as shown to users."""
        return (self.base_url or DEFAULT_BASE_URL).rstrip("/")

    def client(self) -> openai.OpenAI:
        """An `openai` client that retries 429, 5xx and connection errors with backoff."""
        key = self.api_key.get_secret_value() if self.api_key else ""
        return openai.OpenAI(
            base_url=self.url,
            api_key=key or KEYLESS,
            timeout=self.timeout,
            max_retries=self.max_retries,
        )

    def _key(self) -> str:
        return self.api_key.get_secret_value() if self.api_key else ""

    def scrub(self, text: str) -> str:
        """`text` with the API key, should a server echo it, replaced by asterisks."""
        key = self._key()
        return text.replace(key, MASK) if key else text

    def scrub_stream(self, pieces: Iterable[str]) -> Iterator[str]:
        """`pieces` with the key masked, also when it is split across pieces: a tail that
        could begin the key is held back until the next piece shows whether it does."""
        key = self._key()
        held = ""
        for piece in pieces:
            text = (held + piece).replace(key, MASK) if key else piece
            cut = len(text) - _key_prefix_at_end(text, key)
            held = text[cut:]
            if text[:cut]:
                yield text[:cut]
        if held:
            yield held

    def error(self, exc: BaseException, retries: int | None = None) -> BackendError:
        """The `BackendError` that explains `exc` in one sentence, after `retries` retries
        (default: `max_retries`, as the client retries for itself)."""
        log.debug("API call to %s failed: %s", self.url, self.scrub(repr(exc)))
        retries = self.max_retries if retries is None else retries
        return BackendError(self.scrub(self._describe(exc, retries)))

    def cut_off(self) -> str:
        """The sentence for a response that stopped before its end."""
        return f"the connection to {self.url} dropped before the response was complete"

    def _describe(self, exc: BaseException, retries: int) -> str:
        if _timed_out(exc):
            each = f" on each of {retries + 1} attempts" if retries else ""
            return f"the API at {self.url} sent no answer within {self.timeout:g} s{each}"
        if isinstance(exc, openai.APIConnectionError) and _broke_off(exc):
            return self.cut_off()
        if isinstance(exc, openai.APIConnectionError):
            return f"cannot reach the API at {self.url} ({_reason(exc)})"
        if isinstance(exc, openai.APIStatusError):
            return self._describe_status(exc, retries)
        if isinstance(exc, openai.APIResponseValidationError | ValueError):
            return f"the API at {self.url} sent a malformed response ({_first_line(exc)})"
        if isinstance(exc, openai.APIError):
            return f"the API at {self.url} reported an error: {_first_line(exc)}"
        if isinstance(exc, httpx.TransportError):
            return self.cut_off()
        return f"unexpected failure talking to the API at {self.url}: {_first_line(exc)}"

    def _describe_status(self, exc: openai.APIStatusError, retries: int) -> str:
        code = exc.status_code
        if code == 401 and not self.api_key:
            return f"the API at {self.url} needs an API key (HTTP 401) and none is set"
        if code == 401:
            return f"the API at {self.url} rejected the key (HTTP 401)"
        if code == 404:
            return f"model '{self.model}' not found at {self.url} (HTTP 404)"
        retried = f" after {retries} {'retry' if retries == 1 else 'retries'}" if retries else ""
        if code == 429:
            return f"the API at {self.url} kept refusing with HTTP 429 (rate limit){retried}"
        if code >= 500:
            return f"the API at {self.url} kept failing with HTTP {code}{retried}"
        return f"the API at {self.url} refused the request with HTTP {code}: {_api_message(exc)}"


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
        if _timed_out(exc) and (late or deadline.expired()):
            return BackendError(f"the API at {endpoint.url} sent no answer {deadline.missed()}")
        if _timed_out(exc):
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


def _key_prefix_at_end(text: str, key: str) -> int:
    """The length of the longest end of `text` that begins `key` (shorter than `key`)."""
    for size in range(min(len(key) - 1, len(text)), 0, -1):
        if text.endswith(key[:size]):
            return size
    return 0


def _timed_out(exc: BaseException) -> bool:
    return isinstance(exc, openai.APITimeoutError | httpx.TimeoutException)


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


def _broke_off(exc: openai.APIConnectionError) -> bool:
    """Whether the connection opened but closed before the response was complete."""
    return isinstance(exc.__cause__, httpx.RemoteProtocolError | httpx.ReadError)


def _reason(exc: openai.APIConnectionError) -> str:
    cause = exc.__cause__
    if "refused" in str(cause).lower():
        return "connection refused"
    return _first_line(cause or exc)


def _api_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        body = body.get("message")
    return _first_line(body if isinstance(body, str) else exc.message)


def _first_line(value: object) -> str:
    if isinstance(value, json.JSONDecodeError):
        return f"invalid JSON: {value.msg}"
    text = str(value).strip().splitlines()
    return text[0][:200] if text else type(value).__name__
