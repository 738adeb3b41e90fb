"""Text embeddings from an OpenAI-compatible `/v1/embeddings` endpoint."""

from __future__ import annotations

from typing import Any

import httpx
import numpy as np
import openai
from pydantic import SecretStr

from .errors import BackendError
from .openai_api import ApiEndpoint

PROBE_TEXT = "dimension probe"


class OpenAIEmbedder:
    """Embeds texts in batches; rows come back as L2-normalised float32 vectors."""

    def __init__(
        self,
        model: str,
        base_url: str | None,
        api_key: SecretStr | None,
        batch_size: int,
        timeout: float = 60,
        max_retries: int = 2,
    ) -> None:
        self.name = f"openai:{model}"
        self.batch_size = batch_size
        self._endpoint = ApiEndpoint(base_url, api_key, model, timeout, max_retries)
        self._client = self._endpoint.client()
        self._dimension: int | None = None

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self._endpoint.model!r}, base_url={self._endpoint.url!r})"

    @property
    def dimension(self) -> int:
        """The vector size, learnt from the first response (embeds a probe if none yet)."""
        if self._dimension is None:
            return int(self.embed([PROBE_TEXT]).shape[1])
        return self._dimension

    def embed(self, texts: list[str]) -> np.ndarray:
        """One normalised row per text, shape (len(texts), dimension); `BackendError` on failure."""
        if not texts:
            return np.empty((0, self.dimension), dtype=np.float32)
        size = self.batch_size
        return np.vstack(
            [self._embed_batch(texts[i : i + size]) for i in range(0, len(texts), size)]
        )

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        endpoint = self._endpoint
        try:
            response = self._client.embeddings.create(
                model=endpoint.model, input=texts, encoding_format="float"
            )
            vectors = _vectors(response, len(texts))
        except (openai.OpenAIError, httpx.HTTPError, ValueError) as exc:
            raise endpoint.error(exc) from None
        found = vectors.shape[1]
        if self._dimension is None:
            self._dimension = found
        elif found != self._dimension:
            raise BackendError(
                f"the API at {endpoint.url} sent vectors of {found} dimensions, "
                f"expected {self._dimension}"
            )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, np.finfo(np.float32).tiny)


def _vectors(response: Any, expected: int) -> np.ndarray:
    """The response's vectors in input order; the client does not validate their shape."""
    rows = getattr(response, "data", None)
    if not isinstance(rows, list) or len(rows) != expected:
        raise ValueError(f"expected {expected} embeddings")
    rows = sorted(rows, key=lambda row: getattr(row, "index", 0))
    embeddings = [getattr(row, "embedding", None) for row in rows]
    if not all(isinstance(e, list) and e for e in embeddings):
        raise ValueError("an embedding is missing or not a list of numbers")
    if len({len(e) for e in embeddings}) != 1:
        raise ValueError("embeddings of different lengths in one batch")
    try:
        vectors = np.array(embeddings, dtype=np.float32)
    except TypeError:
        raise ValueError("an embedding holds something other than numbers") from None
    if not np.isfinite(vectors).all():
        raise ValueError("an embedding holds non-finite numbers")
    return vectors
