"""The two retrieval systems compared, behind one small interface.

`citeqa`: the `Assistant` (Chroma + BM25 snapshot in a data directory, hybrid or dense).
`llama-index`: a default `VectorStoreIndex` (in-memory store, default `SentenceSplitter`)
over the same papers with the same embedder, queried with `as_retriever(similarity_top_k=k)`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Protocol

from llama_index.core import Document, VectorStoreIndex

from assistant import Assistant, Paper, Settings, load_corpus
from assistant.embeddings import OnnxMiniLMEmbedder
from assistant.evaluation import EmbedderAdapter
from assistant.index import PaperIndex

from .adapters import CountingEmbedder

Searcher = Callable[[str], list[str]]
"""A question -> the paper id of each retrieved chunk, best first."""

MODES = ("hybrid", "dense")


class System(Protocol):
    """An index that ingests corpus files and answers searches."""

    embedder: CountingEmbedder

    def ingest(self, paths: Sequence[Path]) -> None: ...

    def reopen(self) -> System: ...

    def searchers(self, k: int) -> dict[str, Searcher]: ...


class CiteqaSystem:
    """citeqa's persistent index in `data_dir`."""

    def __init__(self, data_dir: Path, settings: Settings | None = None) -> None:
        self.settings = settings or Settings(data_dir=data_dir)
        self.embedder = CountingEmbedder(OnnxMiniLMEmbedder())
        self.assistant = Assistant(self.settings)
        self.assistant.index = PaperIndex(self.settings, self.embedder)

    def ingest(self, paths: Sequence[Path]) -> None:
        self.assistant.ingest(paths)

    def reopen(self) -> CiteqaSystem:
        """A new `Assistant` over the same data directory, as a second `citeqa ingest` gets."""
        return CiteqaSystem(self.settings.data_dir, self.settings)

    def searchers(self, k: int) -> dict[str, Searcher]:
        return {f"citeqa {mode}": partial(self._search, k=k, mode=mode) for mode in MODES}

    def _search(self, question: str, k: int, mode: str) -> list[str]:
        return [hit.paper_id for hit in self.assistant.search(question, k, mode=mode)]


def _document(paper: Paper) -> Document:
    """A paper as llama-index sees it: the abstract, with the title in the embedded text."""
    return Document(
        id_=paper.paper_id,
        text=paper.abstract,
        metadata={"title": paper.display_title},
    )


class LlamaIndexSystem:
    """llama-index's default `VectorStoreIndex`, in memory."""

    def __init__(self) -> None:
        self.embedder = CountingEmbedder(OnnxMiniLMEmbedder())
        self.embed_model = EmbedderAdapter(self.embedder)
        self.index: VectorStoreIndex | None = None

    def ingest(self, paths: Sequence[Path]) -> None:
        """Build the index; on a built one, `refresh_ref_docs` (re-embeds changed documents)."""
        documents = [_document(paper) for paper in load_corpus(paths)]
        if self.index is None:
            self.index = VectorStoreIndex.from_documents(documents, embed_model=self.embed_model)
        else:
            self.index.refresh_ref_docs(documents)

    def reopen(self) -> LlamaIndexSystem:
        """The same object: the default in-memory store cannot be reopened."""
        return self

    def searchers(self, k: int) -> dict[str, Searcher]:
        assert self.index is not None, "ingest first"
        retriever = self.index.as_retriever(similarity_top_k=k)
        return {"llama-index": lambda q: [hit.node.ref_doc_id for hit in retriever.retrieve(q)]}


def make_system(name: str, data_dir: Path) -> System:
    """A fresh, empty system by name (`citeqa` keeps its index in `data_dir`)."""
    return CiteqaSystem(data_dir) if name == "citeqa" else LlamaIndexSystem()
