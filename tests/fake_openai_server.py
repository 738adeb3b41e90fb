"""A real HTTP server on 127.0.0.1 that speaks enough of the OpenAI protocol for tests.

Endpoints (under `server.base_url`, which ends in `/v1`): `POST /chat/completions`
(JSON or SSE streaming), `GET /models` and `POST /embeddings` (deterministic vectors).

Each request consumes the next scripted `Behaviour`, or `server.default` when the
script is empty, so a test says what should go wrong and when:

    fake_openai.script([Behaviour.rate_limited(), Behaviour.answer("Fine [1].")])
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import struct
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "fake-model"
EMBEDDING_DIM = 32


@dataclass(frozen=True)
class Behaviour:
    """How the server answers one request; build one with the class methods."""

    kind: str
    text: str | None = None
    status: int = 200
    message: str = ""
    seconds: float = 0.0
    pieces: int = 0
    graceful: bool = False
    chunks: tuple[str, ...] = ()

    @classmethod
    def answer(cls, text: str | None = None) -> Behaviour:
        """A normal answer: `text`, else `server.answer_text`, else an echo of the question."""
        return cls("answer", text=text)

    @classmethod
    def streamed(cls, *chunks: str) -> Behaviour:
        """A normal answer streamed as exactly these chunks (split anywhere, even in a word)."""
        return cls("answer", text="".join(chunks), chunks=chunks)

    @classmethod
    def keep_alive(cls, seconds: float) -> Behaviour:
        """Stream only SSE keep-alive comments (which clients skip) for `seconds`, then the
        answer (cut short when the server closes)."""
        return cls("keep_alive", seconds=seconds)

    @classmethod
    def trickle(cls, seconds: float, text: str | None = None) -> Behaviour:
        """A streamed answer whose pieces come `seconds` apart (cut short when the server
        closes)."""
        return cls("trickle", text=text, seconds=seconds)

    @classmethod
    def hallucination(cls, text: str) -> Behaviour:
        """A normal-looking answer whose text (given by the test) is not backed by the sources."""
        return cls("answer", text=text)

    @classmethod
    def error(cls, status: int, message: str) -> Behaviour:
        """An HTTP error with an OpenAI-style `{"error": {"message": ...}}` body."""
        return cls("error", status=status, message=message)

    @classmethod
    def rate_limited(cls) -> Behaviour:
        """HTTP 429, with retry-after headers that make the client retry at once."""
        return cls.error(429, "Rate limit reached, slow down.")

    @classmethod
    def server_error(cls, status: int = 500) -> Behaviour:
        """HTTP 5xx, with the same fast retry-after headers as `rate_limited`."""
        return cls.error(status, "The server had an error while processing your request.")

    @classmethod
    def unauthorized(cls) -> Behaviour:
        """HTTP 401 whose message echoes the bearer token, as careless servers do."""
        return cls("unauthorized", status=401)

    @classmethod
    def model_not_found(cls) -> Behaviour:
        """HTTP 404 naming the requested model."""
        return cls("model_not_found", status=404)

    @classmethod
    def stall(cls, seconds: float) -> Behaviour:
        """Say nothing for `seconds` (cut short when the server closes), then answer."""
        return cls("stall", seconds=seconds)

    @classmethod
    def malformed(cls) -> Behaviour:
        """HTTP 200 with a body that is not valid JSON (in an SSE event when streaming)."""
        return cls("malformed")

    @classmethod
    def cut(cls, pieces: int = 2, graceful: bool = False) -> Behaviour:
        """Send the first `pieces` pieces of the answer, then close the socket mid-body.

        With `graceful` (streams only) the HTTP body ends properly, yet without the final
        chunk and `[DONE]`."""
        return cls("cut", pieces=pieces, graceful=graceful)


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received; header names are lower-case."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


class FakeOpenAIServer:
    """Starts on a free port; use as a context manager or call `start()` and `close()`."""

    def __init__(self) -> None:
        self.default = Behaviour.answer()
        self.answer_text: str | None = None
        self.models = [MODEL]
        self.embedding_dim = EMBEDDING_DIM
        self.retry_after_ms = 10
        self._script: deque[Behaviour] = deque()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler, self)
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """The URL to give a client as `base_url`."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving; wakes up stalled requests so nothing lingers."""
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def script(self, behaviours: list[Behaviour]) -> None:
        """Queue behaviours, consumed one per request (any endpoint) before `default`."""
        with self._lock:
            self._script.extend(behaviours)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    def requests_to(self, endpoint: str) -> list[RecordedRequest]:
        """The requests whose path ends with `endpoint`, e.g. "/chat/completions"."""
        return [r for r in self.requests if r.path.endswith(endpoint)]

    def _serve(self) -> None:
        self._httpd.serve_forever(poll_interval=0.05)

    def _take(self, request: RecordedRequest) -> Behaviour:
        with self._lock:
            self._requests.append(request)
            return self._script.popleft() if self._script else self.default


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type, fake: FakeOpenAIServer) -> None:
        super().__init__(address, handler)
        self.fake = fake


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 5  # idle keep-alive connections must not pin threads forever
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def _handle(self) -> None:
        fake = self.server.fake
        request = RecordedRequest(
            self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, self._body()
        )
        behaviour = fake._take(request)
        try:
            self._respond(fake, request, behaviour)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _body(self) -> Any:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _respond(self, fake: FakeOpenAIServer, request: RecordedRequest, how: Behaviour) -> None:
        if how.kind == "stall":
            if fake._stopping.wait(how.seconds):
                self.close_connection = True
                return
            how = Behaviour.answer()
        if how.kind == "error":
            self._error(how.status, how.message, retry_after_ms=fake.retry_after_ms)
        elif how.kind == "unauthorized":
            token = request.headers.get("authorization", "").removeprefix("Bearer ")
            self._error(401, f"Incorrect API key provided: {token}.")
        elif how.kind == "model_not_found":
            model = _field(request.body, "model")
            self._error(404, f"The model `{model}` does not exist or you do not have access.")
        else:
            self._route(fake, request, how)

    def _route(self, fake: FakeOpenAIServer, request: RecordedRequest, how: Behaviour) -> None:
        path = request.path.split("?")[0]
        if self.command == "POST" and path == "/v1/chat/completions":
            self._chat(fake, request.body, how)
        elif self.command == "GET" and path == "/v1/models":
            models = [
                {"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in fake.models
            ]
            self._json(200, {"object": "list", "data": models}, how)
        elif self.command == "POST" and path == "/v1/embeddings":
            self._json(200, _embeddings(fake, request.body), how)
        else:
            self._error(404, f"No route for {self.command} {path}.")

    def _chat(self, fake: FakeOpenAIServer, body: Any, how: Behaviour) -> None:
        text = how.text or fake.answer_text or _echo(body)
        model = _field(body, "model") or MODEL
        if _field(body, "stream"):
            self._stream(model, text, how)
        else:
            self._json(200, _completion(model, text), how)

    def _stream(self, model: str, text: str, how: Behaviour) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if how.kind == "malformed":
            self._chunk(b'data: {"id": "chatcmpl-fake", "choices": [\n\n')
            self._chunk(b"data: [DONE]\n\n")
            self._chunk(b"")
            return
        pieces = list(how.chunks) or _pieces(text)
        if how.kind == "cut":
            pieces = pieces[: how.pieces]
        if how.kind == "keep_alive" and not self._keep_alive(how.seconds):
            return
        self._event(_chunk(model, {"role": "assistant", "content": ""}))
        for piece in pieces:
            if how.kind == "trickle" and self.server.fake._stopping.wait(how.seconds):
                self.close_connection = True
                return
            self._event(_chunk(model, {"content": piece}))
        if how.kind == "cut" and how.graceful:
            self._chunk(b"")
            return
        if how.kind == "cut":
            self.close_connection = True
            return
        self._event(_chunk(model, {}, finish_reason="stop"))
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")

    def _keep_alive(self, seconds: float) -> bool:
        """Send a keep-alive comment every 0.1 s for `seconds`; False if the server closed."""
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            if self.server.fake._stopping.wait(0.1):
                self.close_connection = True
                return False
            self._chunk(b": keep-alive\n\n")
        return True

    def _event(self, payload: dict[str, Any]) -> None:
        self._chunk(f"data: {json.dumps(payload)}\n\n".encode())

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")

    def _json(self, status: int, body: dict[str, Any], how: Behaviour) -> None:
        data = json.dumps(body).encode()
        if how.kind == "malformed":
            data = data[: len(data) // 2]
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if how.kind == "cut":
            self.wfile.write(data[: len(data) // 2])
            self.close_connection = True
            return
        self.wfile.write(data)

    def _error(self, status: int, message: str, retry_after_ms: int | None = None) -> None:
        data = json.dumps({"error": {"message": message, "type": "fake", "code": status}})
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if retry_after_ms is not None:
            self.send_header("retry-after", "0")
            self.send_header("retry-after-ms", str(retry_after_ms))
        self.end_headers()
        self.wfile.write(data.encode())


def _field(body: Any, name: str) -> Any:
    return body.get(name) if isinstance(body, dict) else None


def _echo(body: Any) -> str:
    """A fixed sentence quoting (up to 200 characters of) the last user message."""
    messages = _field(body, "messages") or []
    user = [m.get("content") for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    said = " ".join(str(user[-1]).split())[:200] if user else ""
    return f'You asked: "{said}".'


def _pieces(text: str) -> list[str]:
    """Word-sized pieces that join back to exactly `text`."""
    return [piece for piece in re.findall(r"\S*\s*", text) if piece]


def _chunk(model: str, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
    return _envelope("chat.completion.chunk", model, choice)


def _completion(model: str, text: str) -> dict[str, Any]:
    message = {"role": "assistant", "content": text}
    body = _envelope("chat.completion", model, {"index": 0, "message": message})
    body["choices"][0]["finish_reason"] = "stop"
    body["usage"] = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    return body


def _envelope(kind: str, model: str, choice: dict[str, Any]) -> dict[str, Any]:
    created = int(time.time())
    return {
        "id": "chatcmpl-fake",
        "object": kind,
        "created": created,
        "model": model,
        "choices": [choice],
    }


def _embeddings(fake: FakeOpenAIServer, body: Any) -> dict[str, Any]:
    texts = _field(body, "input")
    texts = [texts] if isinstance(texts, str) else list(texts or [])
    as_base64 = _field(body, "encoding_format") == "base64"
    data = []
    for index, text in enumerate(texts):
        vector = hash_vector(str(text), fake.embedding_dim)
        encoded = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
        embedding = encoded if as_base64 else vector
        data.append({"object": "embedding", "index": index, "embedding": embedding})
    model = _field(body, "model") or MODEL
    usage = {"prompt_tokens": len(texts), "total_tokens": len(texts)}
    return {"object": "list", "data": data, "model": model, "usage": usage}


def hash_vector(text: str, dim: int = EMBEDDING_DIM) -> list[float]:
    """The (not normalised) vector the server returns for `text`: same text, same vector."""
    values = []
    for i in range(dim):
        digest = hashlib.sha256(f"{i}:{text}".encode()).digest()
        values.append(int.from_bytes(digest[:4], "little") / 2**31 - 1.0)
    return values
