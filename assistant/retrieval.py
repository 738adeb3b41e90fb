"""Hybrid retrieval: dense (Chroma) and keyword (BM25) fused by reciprocal rank fusion."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import BaseModel

from .corpus import Paper
from .index import PaperIndex
from .keyword import KeywordSnapshot
from .settings import RetrievalSettings

Mode = Literal["hybrid", "dense", "keyword"]


class PaperRef(BaseModel):
    """What identifies a paper to a reader: id, title (or a stand-in), authors, venue, link."""

    paper_id: str
    title: str | None
    display_title: str
    authors: list[str]
    venue: str | None
    url: str | None


class Hit(PaperRef):
    """One retrieved chunk with its paper's metadata and its scores.

    `start`/`end` and `sentences` are character spans in the paper's abstract; `score` is
    the fused score used for ranking (higher is better), `dense_score` the cosine
    similarity and `keyword_score` the BM25 score, each None when that side missed it."""

    area: str | None
    chunk_id: str
    text: str
    start: int
    end: int
    sentences: list[tuple[int, int]]
    score: float
    dense_score: float | None = None
    keyword_score: float | None = None


@dataclass(frozen=True)
class Filters:
    """Filters on paper metadata; None means no filter. Text filters are case-insensitive
    substrings (`source`: of any file the paper was found in); `year` is exact;
    `paper_ids` is the set of papers the authors, venue or year a question names allow."""

    venue: str | None = None
    author: str | None = None
    area: str | None = None
    year: int | None = None
    source: str | None = None
    paper_ids: frozenset[str] | None = None

    def active(self) -> bool:
        return (
            any((self.venue, self.author, self.area, self.year, self.source))
            or self.paper_ids is not None
        )

    def matches(self, paper: Paper) -> bool:
        def contains(value: str | None, needle: str | None) -> bool:
            return needle is None or needle.casefold() in (value or "").casefold()

        def any_contains(values: list[str], needle: str | None) -> bool:
            return needle is None or any(contains(value, needle) for value in values)

        return (
            (self.paper_ids is None or paper.paper_id in self.paper_ids)
            and contains(paper.venue, self.venue)
            and contains(paper.area, self.area)
            and any_contains(paper.authors, self.author)
            and any_contains(paper.source_files, self.source)
            and (self.year is None or paper.publication_year == self.year)
        )


@dataclass
class _Candidate:
    chunk_id: str
    text: str
    metadata: dict
    dense_rank: int | None = None
    dense_score: float | None = None
    keyword_rank: int | None = None
    keyword_score: float | None = None


class HybridRetriever:
    """Dense + BM25 retrieval over a `PaperIndex`, with filters and a per-paper cap.

    Fusion is written here rather than with llama-index's `QueryFusionRetriever`: it is
    a few lines, and the library's async fan-out costs more than the 50 ms budget."""

    def __init__(self, index: PaperIndex, settings: RetrievalSettings) -> None:
        self.index = index
        self.settings = settings

    def search(
        self,
        question: str,
        k: int | None = None,
        filters: Filters | None = None,
        mode: Mode = "hybrid",
    ) -> list[Hit]:
        """The best chunks of one snapshot of the index: every hit's paper is in its table."""
        k = k or self.settings.k
        filters = filters or Filters()
        snapshot = self.index.snapshot()
        allowed = self._allowed_papers(snapshot, filters)
        if allowed is not None and not allowed:
            return []
        candidates: dict[str, _Candidate] = {}
        n = max(self.settings.candidates, k * 4)
        if mode in ("hybrid", "dense") and snapshot.chunk_ids:
            self._add_dense(
                candidates, snapshot, question, min(n, len(snapshot.chunk_ids)), allowed
            )
        if mode in ("hybrid", "keyword"):
            self._add_keyword(candidates, snapshot, question, n, allowed)
        return self._fuse(candidates, k)

    @staticmethod
    def _allowed_papers(snapshot: KeywordSnapshot, filters: Filters) -> list[str] | None:
        if not filters.active():
            return None
        return [pid for pid, paper in snapshot.papers.items() if filters.matches(paper)]

    def _add_dense(
        self, candidates, snapshot: KeywordSnapshot, question: str, n: int, allowed
    ) -> None:
        vector = self.index.embedder.embed([question])[0]
        nearest = self.index.dense_query(snapshot, vector, n, allowed)
        # a chunk the snapshot lacks is not visible yet (its paper is not ready)
        rows = [(snapshot.row_of[i], d) for i, d in nearest if i in snapshot.row_of]
        for rank, (row, distance) in enumerate(rows):
            candidate = _candidate(candidates, snapshot, row)
            candidate.dense_rank, candidate.dense_score = rank, 1.0 - float(distance)

    @staticmethod
    def _add_keyword(candidates, snapshot: KeywordSnapshot, question: str, n: int, allowed) -> None:
        mask = None
        if allowed is not None:
            wanted = set(allowed)
            mask = np.array(
                [m["paper_id"] in wanted for m in snapshot.chunk_metadata], dtype=np.float32
            )
        for rank, (row, score) in enumerate(snapshot.search(question, n, mask)):
            candidate = _candidate(candidates, snapshot, row)
            candidate.keyword_rank, candidate.keyword_score = rank, score

    def _fused_score(self, candidate: _Candidate) -> float:
        score = 0.0
        if candidate.dense_rank is not None:
            score += self.settings.dense_weight / (self.settings.rrf_k + candidate.dense_rank + 1)
        if candidate.keyword_rank is not None:
            score += self.settings.keyword_weight / (
                self.settings.rrf_k + candidate.keyword_rank + 1
            )
        return score

    def _fuse(self, candidates: dict[str, _Candidate], k: int) -> list[Hit]:
        ranked = sorted(candidates.values(), key=self._fused_score, reverse=True)
        per_paper: dict[str, int] = {}
        hits: list[Hit] = []
        for candidate in ranked:
            paper_id = candidate.metadata["paper_id"]
            if per_paper.get(paper_id, 0) >= self.settings.per_paper_cap:
                continue
            per_paper[paper_id] = per_paper.get(paper_id, 0) + 1
            hits.append(_to_hit(candidate, self._fused_score(candidate)))
            if len(hits) == k:
                break
        return hits


def _candidate(candidates: dict[str, _Candidate], snapshot: KeywordSnapshot, row: int):
    chunk_id = snapshot.chunk_ids[row]
    if chunk_id not in candidates:
        candidates[chunk_id] = _Candidate(
            chunk_id, snapshot.chunk_texts[row], snapshot.chunk_metadata[row]
        )
    return candidates[chunk_id]


def _to_hit(candidate: _Candidate, score: float) -> Hit:
    metadata = candidate.metadata
    return Hit(
        paper_id=metadata["paper_id"],
        title=metadata.get("title") or None,
        display_title=metadata.get("display_title") or metadata.get("title") or "",
        authors=json.loads(metadata.get("authors") or "[]"),
        venue=metadata.get("venue") or None,
        url=metadata.get("url") or None,
        area=metadata.get("area") or None,
        chunk_id=candidate.chunk_id,
        text=candidate.text,
        start=int(metadata["start"]),
        end=int(metadata["end"]),
        sentences=[tuple(span) for span in json.loads(metadata.get("sentences") or "[]")],
        score=score,
        dense_score=candidate.dense_score,
        keyword_score=candidate.keyword_score,
    )
