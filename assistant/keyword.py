"""BM25 over chunks with bm25s, saved per index generation so it is not rebuilt on start."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from .corpus import Paper

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
    """Papers and chunks of one index generation, with their BM25 index."""

    generation: str
    papers: dict[str, Paper]
    chunk_ids: list[str]
    chunk_texts: list[str]
    chunk_metadata: list[dict]
    bm25: object

    @classmethod
    def build(
        cls,
        generation: str,
        papers: Sequence[Paper],
        chunk_rows: Sequence[tuple[str, str, dict]],
        text_for_keywords: Callable[[str, dict], str],
    ) -> KeywordSnapshot:
        import bm25s

        bm25 = bm25s.BM25()
        texts = [text_for_keywords(document, metadata) for _, document, metadata in chunk_rows]
        bm25.index(tokenize(texts) if texts else [[""]], show_progress=False)
        return cls(
            generation=generation,
            papers={paper.paper_id: paper for paper in papers},
            chunk_ids=[row[0] for row in chunk_rows],
            chunk_texts=[row[1] for row in chunk_rows],
            chunk_metadata=[row[2] for row in chunk_rows],
            bm25=bm25,
        )

    def save(self, root: Path) -> None:
        """Write atomically into `root/<generation>` and drop older generations."""
        root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=root))
        self.bm25.save(str(staging / "bm25"), show_progress=False)
        payload = {
            "generation": self.generation,
            "papers": [paper.model_dump() for paper in self.papers.values()],
            "chunks": [self.chunk_ids, self.chunk_texts, self.chunk_metadata],
        }
        (staging / _DATA_FILE).write_text(json.dumps(payload, ensure_ascii=False))
        target = root / self.generation
        try:
            staging.rename(target)
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
        for old in root.iterdir():
            if old.name != self.generation and not old.name.startswith(".staging-"):
                shutil.rmtree(old, ignore_errors=True)

    @classmethod
    def load(cls, root: Path, generation: str) -> KeywordSnapshot | None:
        """The saved snapshot of `generation`, or None if there is none (or it is unreadable)."""
        import bm25s

        folder = root / generation
        try:
            payload = json.loads((folder / _DATA_FILE).read_text())
            bm25 = bm25s.BM25.load(str(folder / "bm25"), show_progress=False, verbosity=0)
        except (OSError, ValueError, KeyError):
            return None
        ids, texts, metadata = payload["chunks"]
        return cls(
            generation=generation,
            papers={row["paper_id"]: Paper(**row) for row in payload["papers"]},
            chunk_ids=ids,
            chunk_texts=texts,
            chunk_metadata=metadata,
            bm25=bm25,
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
