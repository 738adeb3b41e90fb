"""One OpenAI-compatible API and model (`ApiEndpoint`): its client, and every failure as
one sentence that never shows the key. Shared by the `openai` backend, the OpenAI
embedder, the LLM verifier and the LLM judge."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import httpx
import openai
from pydantic import SecretStr

from .errors import BackendError

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
KEYLESS = "not-needed"
MASK = "***"


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

    def complete(self, client: openai.OpenAI, prompt: str, max_tokens: int) -> str:
        """The reply to `prompt` as one user message, greedy and not streamed; a
        `BackendError` on any failure or an empty reply."""
        try:
            response = client.chat.completions.create(
                model=self.model,
                messages=[{"role": "user", "content": prompt}],
                temperature=0.0,
                max_tokens=max_tokens,
            )
            content = response.choices[0].message.content
        except (openai.OpenAIError, httpx.HTTPError, ValueError, IndexError) as exc:
            raise self.error(exc) from None
        if not content or not content.strip():
            raise BackendError(f"model '{self.model}' at {self.url} said nothing")
        return content

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
        if timed_out(exc):
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


def _key_prefix_at_end(text: str, key: str) -> int:
    """The length of the longest end of `text` that begins `key` (shorter than `key`)."""
    for size in range(min(len(key) - 1, len(text)), 0, -1):
        if text.endswith(key[:size]):
            return size
    return 0


def timed_out(exc: BaseException) -> bool:
    return isinstance(exc, openai.APITimeoutError | httpx.TimeoutException)


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
