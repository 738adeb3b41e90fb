"""Cut abstracts into sentence-aligned chunks that remember where each sentence sits."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .corpus import Paper
from .settings import ChunkSettings
from .text import Span, sentence_spans, split_sentences


@dataclass(frozen=True)
class Chunk:
    """A piece of one abstract; `start`/`end` and `sentences` are spans in that abstract."""

    chunk_id: str
    paper_id: str
    index: int
    text: str
    start: int
    end: int
    sentences: tuple[Span, ...]


class Chunker:
    """llama-index's `SentenceSplitter` (token counts through tiktoken) on our sentence
    boundaries, with every chunk mapped back to its character span."""

    def __init__(self, settings: ChunkSettings) -> None:
        self.settings = settings

    @cached_property
    def _splitter(self):
        from llama_index.core.node_parser import SentenceSplitter

        return SentenceSplitter(
            chunk_size=self.settings.chunk_tokens,
            chunk_overlap=self.settings.overlap_tokens,
            chunking_tokenizer_fn=split_sentences,
        )

    def chunk(self, paper: Paper) -> list[Chunk]:
        abstract = paper.abstract
        sentences = sentence_spans(abstract)
        chunks: list[Chunk] = []
        cursor = 0
        for text in self._splitter.split_text(abstract):
            start = abstract.find(text, cursor)
            if start < 0:
                start = abstract.find(text)
            end = start + len(text)
            cursor = start + 1
            inside = tuple(
                (max(s, start), min(e, end)) for s, e in sentences if s < end and e > start
            )
            chunks.append(
                Chunk(
                    f"{paper.paper_id}:{len(chunks)}",
                    paper.paper_id,
                    len(chunks),
                    text,
                    start,
                    end,
                    inside,
                )
            )
        return chunks
