"""Instrumentation for the benchmark (the llama-index adapters live in
`assistant.evaluation`, shared with the evaluation's baseline)."""

from __future__ import annotations

import numpy as np

from assistant.embeddings import Embedder


class CountingEmbedder:
    """An `Embedder` that counts the texts it embeds (an unchanged re-ingest must embed none)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.texts = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.texts += len(texts)
        return self.inner.embed(texts)
