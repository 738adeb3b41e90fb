"""BM25 over chunks with bm25s, saved per index generation so it is not rebuilt on start.

A snapshot is also what readers may see of the index: its paper table and the chunks of
those papers whose text is the paper's abstract at their span, nothing else."""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path

import numpy as np

from .corpus import Paper

logger = logging.getLogger(__name__)

_DATA_FILE = "snapshot.json"


@cache
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


def tokenize(texts: list[str]) -> list[list[str]]:
    """Lowercased, stop-worded, stemmed word lists (the same for corpus and queries)."""
    import bm25s

    return bm25s.tokenize(
        texts, stopwords="en", stemmer=_stemmer(), return_ids=False, show_progress=False
    )


@dataclass
class KeywordSnapshot:
    """Papers and chunks of one index generation (of the build `build`), with their BM25 index."""

    generation: str
    build: str
    papers: dict[str, Paper]
    chunk_ids: list[str]
    chunk_texts: list[str]
    chunk_metadata: list[dict]
    bm25: object

    @classmethod
    def from_rows(
        cls,
        generation: str,
        build: str,
        papers: Sequence[Paper],
        chunk_rows: Sequence[tuple[str, str, dict]],
        text_for_keywords: Callable[[str, dict], str],
    ) -> KeywordSnapshot:
        """Index `chunk_rows`, keeping only chunks of `papers` that match their abstract
        (a chunk written by an ingest still running or killed is left out)."""
        import bm25s

        table = {paper.paper_id: paper for paper in papers}
        rows = [row for row in chunk_rows if _belongs(row, table)]
        bm25 = bm25s.BM25()
        texts = [text_for_keywords(document, metadata) for _, document, metadata in rows]
        bm25.index(tokenize(texts) if texts else [[""]], show_progress=False)
        return cls(
            generation=generation,
            build=build,
            papers=table,
            chunk_ids=[row[0] for row in rows],
            chunk_texts=[row[1] for row in rows],
            chunk_metadata=[row[2] for row in rows],
            bm25=bm25,
        )

    @cached_property
    def row_of(self) -> dict[str, int]:
        """Chunk id -> its row."""
        return {chunk_id: row for row, chunk_id in enumerate(self.chunk_ids)}

    def save(self, root: Path) -> None:
        """Write atomically into `root/<generation>`, replacing a copy `load` could not read."""
        root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=root))
        try:
            self.bm25.save(str(staging / "bm25"), show_progress=False)
            payload = {
                "generation": self.generation,
                "build": self.build,
                "papers": [paper.model_dump() for paper in self.papers.values()],
                "chunks": [self.chunk_ids, self.chunk_texts, self.chunk_metadata],
            }
            (staging / _DATA_FILE).write_text(json.dumps(payload, ensure_ascii=False))
            target = root / self.generation
            shutil.rmtree(target, ignore_errors=True)
            try:
                staging.rename(target)
            except OSError:
                logger.debug("another process saved the snapshot of %s first", self.generation)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    @staticmethod
    def prune(root: Path, keep: str) -> None:
        """Drop the saved snapshots of every generation but `keep`."""
        for folder in root.iterdir():
            if folder.name != keep and not folder.name.startswith(".staging-"):
                shutil.rmtree(folder, ignore_errors=True)

    @classmethod
    def load(cls, root: Path, generation: str) -> KeywordSnapshot | None:
        """The saved snapshot of `generation`, or None if there is none or it cannot be
        trusted (damaged, or written by an older citeqa): it is then rebuilt."""
        import bm25s

        folder = root / generation
        try:
            payload = json.loads((folder / _DATA_FILE).read_text())
            if "build" not in payload:
                return None  # written by a citeqa from before builds
            ids, texts, metadata = payload["chunks"]
            snapshot = cls(
                generation=generation,
                build=payload["build"],
                papers={row["paper_id"]: Paper(**row) for row in payload["papers"]},
                chunk_ids=ids,
                chunk_texts=texts,
                chunk_metadata=metadata,
                bm25=bm25s.BM25.load(str(folder / "bm25"), show_progress=False, verbosity=0),
            )
            if snapshot._consistent():
                return snapshot
        except FileNotFoundError:
            return None
        except Exception as exc:  # any damage to a cache file means: rebuild it
            logger.info("rebuilding the damaged keyword snapshot in %s (%s)", folder, exc)
        return None

    def _consistent(self) -> bool:
        rows = list(zip(self.chunk_ids, self.chunk_texts, self.chunk_metadata, strict=True))
        return self.bm25.scores["num_docs"] == max(len(rows), 1) and all(
            _belongs(row, self.papers) for row in rows
        )

    def search(
        self, query: str, n: int, allowed: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """Rows of the best-matching chunks with their BM25 scores, best first.

        `allowed` is a 0/1 mask over chunks (filters); zero-score rows are left out."""
        if not self.chunk_ids:
            return []
        vocab = self.bm25.vocab_dict
        tokens = [token for token in tokenize([query])[0] if token in vocab]
        if not tokens:
            return []
        n = min(n, len(self.chunk_ids))
        rows, scores = self.bm25.retrieve(
            [tokens], k=n, show_progress=False, n_threads=1, weight_mask=allowed
        )
        return [(int(r), float(s)) for r, s in zip(rows[0], scores[0], strict=True) if s > 0]


def _belongs(row: tuple[str, str, dict], papers: dict[str, Paper]) -> bool:
    """Whether a chunk row is a piece of a paper in `papers`, at the span it claims."""
    _, text, metadata = row
    paper = papers.get(metadata["paper_id"])
    return paper is not None and paper.abstract[metadata["start"] : metadata["end"]] == text
