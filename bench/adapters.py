"""citeqa's embedder and local model behind llama-index's interfaces, for the baselines.

The baselines then differ from citeqa only in what llama-index does around the models:
chunking, storage, retrieval and prompting."""

from __future__ import annotations

from typing import Any

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding, Embedding
from llama_index.core.base.llms.types import CompletionResponse, CompletionResponseGen, LLMMetadata
from llama_index.core.llms import CustomLLM
from llama_index.core.llms.callbacks import llm_completion_callback
from pydantic import PrivateAttr

from assistant.backends.base import GenerationRequest
from assistant.backends.local import LocalBackend
from assistant.embeddings import Embedder
from assistant.settings import LLMSettings


class CountingEmbedder:
    """An `Embedder` that counts the texts it embeds (an unchanged re-ingest must embed none)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.texts = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.texts += len(texts)
        return self.inner.embed(texts)


class CiteqaEmbedding(BaseEmbedding):
    """A llama-index embedding model running citeqa's `Embedder` (llama-index's batch size)."""

    _embedder: Embedder = PrivateAttr()

    def __init__(self, embedder: Embedder) -> None:
        super().__init__(model_name=embedder.name)
        self._embedder = embedder

    def _get_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return self._embedder.embed(texts).tolist()

    def _get_text_embedding(self, text: str) -> Embedding:
        return self._get_text_embeddings([text])[0]

    def _get_query_embedding(self, query: str) -> Embedding:
        return self._get_text_embedding(query)

    async def _aget_query_embedding(self, query: str) -> Embedding:
        return self._get_query_embedding(query)


class CiteqaLocalLLM(CustomLLM):
    """A llama-index LLM generating with citeqa's `LocalBackend`: the same GGUF model, chat
    template, token budget and greedy decoding as `citeqa ask --backend local`."""

    context_window: int
    num_output: int
    temperature: float
    _backend: LocalBackend = PrivateAttr()

    def __init__(self, settings: LLMSettings) -> None:
        super().__init__(
            context_window=settings.context_tokens,
            num_output=settings.max_tokens,
            temperature=settings.temperature,
        )
        self._backend = LocalBackend(settings)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(
            context_window=self.context_window,
            num_output=self.num_output,
            model_name=self._backend.model_path().name,
        )

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        request = GenerationRequest(
            question=prompt,
            sources=[],
            messages=[{"role": "user", "content": prompt}],
            max_tokens=self.num_output,
            temperature=self.temperature,
        )
        return CompletionResponse(text="".join(self._backend.generate(request)))

    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        raise NotImplementedError("the benchmark measures whole answers, not streams")
