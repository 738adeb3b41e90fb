"""The baseline: llama-index's `CitationQueryEngine` over the same chunks, with the same
embedder and the same LLM, scored like citeqa's own answers."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from llama_index.core.base.llms.types import (
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
)
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.llms import CustomLLM
from llama_index.core.llms.callbacks import llm_completion_callback
from pydantic import Field, PrivateAttr

from ..backends.base import GenerationRequest
from ..embeddings import Embedder
from ..errors import SettingsError
from ..openai_api import KEYLESS, ApiEndpoint
from ..settings import LLMSettings
from .dataset import EvalQuestion
from .metrics import Response, cited_claims

if TYPE_CHECKING:
    from ..assistant import Assistant


def baseline_llm(backend: str) -> str:
    """The LLM the baseline uses next to `backend`: the API for `openai`, else the local
    model (the extractive backend has no LLM)."""
    return "openai" if backend == "openai" else "local"


class BackendLLM(CustomLLM):
    """A citeqa `Backend` as a llama-index completion LLM: each prompt is sent as one
    user message."""

    backend: Any = Field(description="the citeqa Backend that generates")
    context_window: int = 4096
    max_tokens: int = 200
    temperature: float = 0.0

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(
            context_window=self.context_window,
            num_output=self.max_tokens,
            model_name=self.backend.name,
        )

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text="".join(self._generate(prompt)))

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        text = ""
        for piece in self._generate(prompt):
            text += piece
            yield CompletionResponse(text=text, delta=piece)

    def _generate(self, prompt: str) -> Iterator[str]:
        request = GenerationRequest(
            question=prompt,
            sources=[],
            messages=[{"role": "user", "content": prompt}],
            max_tokens=self.max_tokens,
            temperature=self.temperature,
        )
        return self.backend.generate(request)


class EmbedderAdapter(BaseEmbedding):
    """A citeqa `Embedder` (by default the ONNX MiniLM) as a llama-index embedding model."""

    _embedder: Embedder = PrivateAttr()

    def __init__(self, embedder: Embedder, **kwargs: Any) -> None:
        super().__init__(model_name=embedder.name, **kwargs)
        self._embedder = embedder

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vectors([query])[0]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vectors([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._vectors(texts)

    def _vectors(self, texts: list[str]) -> list[list[float]]:
        return self._embedder.embed(texts).tolist()


_SOURCE_LABEL = re.compile(r"^Source \d+:\n")


class CitationBaseline:
    """llama-index's `CitationQueryEngine` with a dense-only `VectorStoreIndex` of the same
    chunks, the same embedder and the same LLM; a follow-up gets the same standalone
    rewrite as citeqa's own chain."""

    def __init__(self, assistant: Assistant, llm: str) -> None:
        from llama_index.core import VectorStoreIndex
        from llama_index.core.query_engine import CitationQueryEngine

        self.assistant = assistant
        self.llm = llm
        index = VectorStoreIndex(
            _nodes(assistant), embed_model=EmbedderAdapter(assistant.index.embedder)
        )
        self.engine = CitationQueryEngine.from_args(
            index, llm=self._llm(), similarity_top_k=assistant.settings.retrieval.k
        )

    def _llm(self) -> Any:
        settings = self.assistant.settings.llm
        if self.llm == "openai":
            return _openai_like(settings)
        return BackendLLM(
            backend=self.assistant.answerer.backend("local"),
            context_window=settings.context_tokens,
            max_tokens=settings.max_tokens,
            temperature=settings.temperature,
        )

    def answer(self, question: EvalQuestion) -> Response:
        """The baseline's answer, scored as is: it has no grounding, so raw = final."""
        standalone = self.assistant.answerer.standalone_question(
            question.question, question.history, self.llm
        )
        result = self.engine.query(standalone)
        passages = [
            _SOURCE_LABEL.sub("", node.node.get_content()).strip() for node in result.source_nodes
        ]
        papers = [node.node.metadata["paper_id"] for node in result.source_nodes]
        claims = cited_claims(str(result.response or ""), passages, papers)
        return Response(
            answer=str(result.response or ""),
            refused=not claims,
            sentences=claims,
            raw_sentences=claims,
            papers=tuple(dict.fromkeys(papers)),
            text=str(result.response or ""),
        )


def _nodes(assistant: Assistant) -> list[Any]:
    """The index's chunks as llama-index nodes; the title is embedded with the chunk, as in
    citeqa's own dense index, but not shown to the LLM."""
    from llama_index.core.schema import TextNode

    snapshot = assistant.index.snapshot()
    return [
        TextNode(
            id_=chunk_id,
            text=text,
            metadata={"paper_id": metadata["paper_id"], "title": metadata.get("title") or ""},
            excluded_embed_metadata_keys=["paper_id"],
            excluded_llm_metadata_keys=["paper_id", "title"],
        )
        for chunk_id, text, metadata in zip(
            snapshot.chunk_ids, snapshot.chunk_texts, snapshot.chunk_metadata, strict=True
        )
    ]


def _openai_like(settings: LLMSettings) -> Any:
    try:
        from llama_index.llms.openai_like import OpenAILike
    except ImportError:
        raise SettingsError(
            "the openai baseline needs `pip install llama-index-llms-openai-like`; "
            "or pass --no-baseline"
        ) from None
    endpoint = ApiEndpoint(
        settings.base_url, settings.api_key, settings.model, settings.timeout, settings.max_retries
    )
    key = settings.api_key.get_secret_value() if settings.api_key else ""
    return OpenAILike(
        model=settings.model,
        api_base=endpoint.url,
        api_key=key or KEYLESS,
        is_chat_model=True,
        context_window=settings.context_tokens,
        max_tokens=settings.max_tokens,
        temperature=settings.temperature,
        timeout=settings.timeout,
        max_retries=settings.max_retries,
    )
