"""Answers from OpenAI or any OpenAI-compatible server (Ollama, vLLM, LM Studio, llama.cpp)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import httpx
import openai
from pydantic import SecretStr

from ..errors import BackendError
from ..settings import LLMSettings
from .base import GenerationRequest

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
KEYLESS = "not-needed"
STATUS_TIMEOUT = 2.0


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

    def scrub(self, text: str) -> str:
        """`text` with the API key, should a server echo it, replaced by asterisks."""
        key = self.api_key.get_secret_value() if self.api_key else ""
        return text.replace(key, "***") if key else text

    def error(self, exc: BaseException) -> BackendError:
        """The `BackendError` that explains `exc` in one sentence."""
        log.debug("API call to %s failed: %s", self.url, self.scrub(repr(exc)))
        return BackendError(self.scrub(self._describe(exc)))

    def cut_off(self) -> str:
        """The sentence for a response that stopped before its end."""
        return f"the connection to {self.url} dropped before the response was complete"

    def _describe(self, exc: BaseException) -> str:
        if isinstance(exc, openai.APITimeoutError | httpx.TimeoutException):
            return f"the API at {self.url} sent no answer within {self.timeout:g} s"
        if isinstance(exc, openai.APIConnectionError) and _broke_off(exc):
            return self.cut_off()
        if isinstance(exc, openai.APIConnectionError):
            return f"cannot reach the API at {self.url} ({_reason(exc)})"
        if isinstance(exc, openai.APIStatusError):
            return self._describe_status(exc)
        if isinstance(exc, openai.APIResponseValidationError | ValueError):
            return f"the API at {self.url} sent a malformed response ({_first_line(exc)})"
        if isinstance(exc, openai.APIError):
            return f"the API at {self.url} reported an error: {_first_line(exc)}"
        if isinstance(exc, httpx.TransportError):
            return self.cut_off()
        return f"unexpected failure talking to the API at {self.url}: {_first_line(exc)}"

    def _describe_status(self, exc: openai.APIStatusError) -> str:
        code = exc.status_code
        if code == 401 and not self.api_key:
            return f"the API at {self.url} needs an API key (HTTP 401) and none is set"
        if code == 401:
            return f"the API at {self.url} rejected the key (HTTP 401)"
        if code == 404:
            return f"model '{self.model}' not found at {self.url} (HTTP 404)"
        retried = f" after {self.max_retries} retries" if self.max_retries else ""
        if code == 429:
            return f"the API at {self.url} kept refusing with HTTP 429 (rate limit){retried}"
        if code >= 500:
            return f"the API at {self.url} kept failing with HTTP {code}{retried}"
        return f"the API at {self.url} refused the request with HTTP {code}: {_api_message(exc)}"


class OpenAIBackend:
    """Streams chat completions from an OpenAI-compatible API."""

    name = "openai"

    def __init__(self, settings: LLMSettings) -> None:
        self.source_tokens = settings.source_tokens or None
        self._endpoint = ApiEndpoint(
            base_url=settings.base_url,
            api_key=settings.api_key,
            model=settings.model,
            timeout=settings.timeout,
            max_retries=settings.max_retries,
        )
        self._client = self._endpoint.client()

    def __repr__(self) -> str:
        return f"OpenAIBackend(model={self._endpoint.model!r}, base_url={self._endpoint.url!r})"

    def generate(self, request: GenerationRequest) -> Iterator[str]:
        """Yield the answer in pieces; raise `BackendError` if it fails or comes back empty.

        A stream that breaks off raises after the pieces already yielded."""
        if not request.messages:
            raise ValueError("an OpenAI backend needs chat messages in the request")
        endpoint = self._endpoint
        answered = finished = False
        try:
            stream = self._client.chat.completions.create(
                model=endpoint.model,
                messages=request.messages,  # type: ignore[arg-type]
                max_tokens=request.max_tokens,
                temperature=request.temperature,
                stream=True,
            )
            with stream:
                for chunk in stream:
                    piece, done = _read_chunk(chunk)
                    finished = finished or done
                    if piece:
                        answered = answered or bool(piece.strip())
                        yield piece
        except (openai.OpenAIError, httpx.HTTPError, ValueError) as exc:
            raise endpoint.error(exc) from None
        if not finished:
            raise BackendError(endpoint.cut_off())
        if not answered:
            raise BackendError(f"model '{endpoint.model}' at {endpoint.url} gave an empty answer")

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
