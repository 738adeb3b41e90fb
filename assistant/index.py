"""The persistent index: chunks and papers in Chroma, plus a keyword snapshot on disk.

Chroma is the source of truth. Each paper is written in two phases (a `pending` record,
then its chunks under deterministic ids, then the `ready` record with its content hash),
so an ingest killed at any point is finished by the next run with no duplicate chunk.
The keyword (BM25) snapshot is rebuilt whenever the index's generation changes.
"""

from __future__ import annotations

import fcntl
import json
import logging
import time
import uuid
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
from chromadb.errors import InternalError

from .chunking import Chunk, Chunker
from .corpus import Duplicate, Paper
from .embeddings import Embedder, make_embedder
from .errors import CiteqaError, IndexMismatchError
from .keyword import KeywordSnapshot
from .settings import Settings

logger = logging.getLogger(__name__)

_SCHEMA = "1"
_BATCH_PAPERS = 32
_PAGE = 2000
_META_PREFIX = "citeqa:"

ProgressCallback = Callable[[int, int], None]


@dataclass
class IngestReport:
    """What an ingest changed."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    chunks_written: int = 0
    chunks_removed: int = 0
    seconds: float = 0.0
    removed_ids: list[str] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)  # file -> entries without abstract
    duplicates: list[Duplicate] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)


def _paper_metadata(paper: Paper, status: str) -> dict:
    return {
        "paper_id": paper.paper_id,
        "title": paper.title or "",
        "authors": json.dumps(paper.authors, ensure_ascii=False),
        "venue": paper.venue or "",
        "url": paper.url or "",
        "area": paper.area or "",
        "source": paper.source,
        "source_file": paper.source.rpartition(":")[0],
        "year": paper.year or 0,
        "doi": paper.doi or "",
        "links": json.dumps(paper.links),
        "also_in": json.dumps(paper.also_in, ensure_ascii=False),
        "content_hash": paper.content_hash,
        "status": status,
    }


def _chunk_metadata(chunk: Chunk, paper: Paper) -> dict:
    return {
        "paper_id": paper.paper_id,
        "chunk_index": chunk.index,
        "start": chunk.start,
        "end": chunk.end,
        "sentences": json.dumps(chunk.sentences),
        "title": paper.title or "",
        "display_title": paper.display_title,
        "authors": json.dumps(paper.authors, ensure_ascii=False),
        "venue": paper.venue or "",
        "url": paper.url or "",
        "area": paper.area or "",
    }


def paper_from_record(document: str, metadata: dict) -> Paper:
    """Rebuild a `Paper` from its Chroma record."""
    return Paper(
        paper_id=metadata["paper_id"],
        title=metadata.get("title") or None,
        authors=json.loads(metadata.get("authors") or "[]"),
        venue=metadata.get("venue") or None,
        url=metadata.get("url") or None,
        area=metadata.get("area") or None,
        abstract=document,
        source=metadata.get("source", ""),
        year=metadata.get("year") or None,
        doi=metadata.get("doi") or None,
        links=json.loads(metadata.get("links") or "[]"),
        also_in=json.loads(metadata.get("also_in") or "[]"),
    )


def embedding_text(chunk: Chunk, paper: Paper) -> str:
    """What the dense model sees: the title gives context; the snippet stays the chunk alone."""
    return f"{paper.title}\n{chunk.text}" if paper.title else chunk.text


def keyword_text(chunk_text: str, metadata: dict) -> str:
    """What BM25 sees: the chunk plus title, authors and area, so names match."""
    authors = " ".join(json.loads(metadata.get("authors") or "[]"))
    return " ".join((metadata.get("title", ""), chunk_text, authors, metadata.get("area", "")))


class PaperIndex:
    """Chunks and papers in Chroma (embedded, or a `chroma run` server) plus keyword search."""

    def __init__(self, settings: Settings, embedder: Embedder | None = None) -> None:
        self.settings = settings
        self.embedder = embedder or make_embedder(settings.embedding)
        self.chunker = Chunker(settings.chunking)
        self._snapshot: KeywordSnapshot | None = None
        self._has_papers = False

    @cached_property
    def client(self):
        import chromadb
        from chromadb.config import Settings as ChromaClientSettings

        chroma_settings = ChromaClientSettings(anonymized_telemetry=False, allow_reset=False)
        if self.settings.chroma.host:
            try:
                return chromadb.HttpClient(
                    host=self.settings.chroma.host,
                    port=self.settings.chroma.port,
                    settings=chroma_settings,
                )
            except Exception as exc:
                raise CiteqaError(
                    f"cannot reach the Chroma server at {self.location}: {exc}"
                ) from None
        path = self.settings.data_dir / "chroma"
        path.mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(path), settings=chroma_settings)

    @property
    def location(self) -> str:
        chroma = self.settings.chroma
        if chroma.host:
            return f"http://{chroma.host}:{chroma.port} (collection {chroma.collection})"
        return str(self.settings.data_dir / "chroma")

    @cached_property
    def chunks(self):
        return self._collection(f"{self.settings.chroma.collection}_chunks")

    @cached_property
    def paper_records(self):
        return self._collection(f"{self.settings.chroma.collection}_papers")

    def _collection(self, name: str):
        # a low sync threshold flushes the vector index often, so that readers in other
        # processes see a writer's progress instead of an index not yet on disk
        configuration = {"hnsw": {"space": "cosine", "sync_threshold": 100}}
        return self.client.get_or_create_collection(
            name, configuration=configuration, embedding_function=None
        )

    # ---- manifest -------------------------------------------------------------------

    def _wanted_manifest(self) -> dict[str, str]:
        return {
            "embedding": self.embedder.name,
            "chunk_tokens": str(self.settings.chunking.chunk_tokens),
            "overlap_tokens": str(self.settings.chunking.overlap_tokens),
            "schema": _SCHEMA,
        }

    def manifest(self) -> dict[str, str]:
        """What the index records about how it was built (empty for a new index)."""
        # read afresh (well under a millisecond): another process may have ingested since
        metadata = self.client.get_collection(self.chunks.name).metadata or {}
        return {
            key.removeprefix(_META_PREFIX): str(value)
            for key, value in metadata.items()
            if key.startswith(_META_PREFIX)
        }

    def check_compatible(self) -> None:
        """Raise `IndexMismatchError` if the index was built with other settings."""
        recorded = self.manifest()
        if not recorded.get("embedding"):
            return
        wanted = self._wanted_manifest()
        differing = [key for key in wanted if recorded.get(key) != wanted[key]]
        if differing:
            was = ", ".join(f"{key}={recorded.get(key)}" for key in differing)
            now = ", ".join(f"{key}={wanted[key]}" for key in differing)
            raise IndexMismatchError(
                f"the index at {self.location} was built with {was} but the settings now say "
                f"{now}; rebuild it with `citeqa ingest --rebuild`, or restore those settings"
            )

    def generation(self) -> str:
        return self.manifest().get("generation", "empty")

    def _write_manifest(self, generation: str) -> None:
        entries = {**self._wanted_manifest(), "generation": generation}
        self.chunks.modify(metadata={f"{_META_PREFIX}{k}": v for k, v in entries.items()})

    # ---- ingest ---------------------------------------------------------------------

    @contextmanager
    def _writer_lock(self) -> Iterator[None]:
        self.settings.data_dir.mkdir(parents=True, exist_ok=True)
        with open(self.settings.data_dir / "ingest.lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _records(self) -> dict[str, dict]:
        records: dict[str, dict] = {}
        offset = 0
        while True:
            page = self.paper_records.get(include=["metadatas"], limit=_PAGE, offset=offset)
            for paper_id, metadata in zip(page["ids"], page["metadatas"], strict=True):
                records[paper_id] = metadata
            if len(page["ids"]) < _PAGE:
                return records
            offset += _PAGE

    def ingest(
        self,
        papers: Sequence[Paper],
        *,
        sync: bool = False,
        rebuild: bool = False,
        on_progress: ProgressCallback | None = None,
        files: Collection[str] | None = None,
    ) -> IngestReport:
        """Bring the index in line with `papers`: embed new or changed papers only.

        Papers that were ingested from the same files (`files`, by default those of
        `papers`) but are gone now are removed; with `sync`, every indexed paper not in
        `papers` is removed. `rebuild` drops the index first (needed after changing the
        embedding model or chunk settings)."""
        started = time.perf_counter()
        with self._writer_lock():
            if rebuild:
                self._drop()
            self.check_compatible()
            report = self._apply(papers, sync, on_progress, files)
            if report.changed or not self.manifest().get("generation"):
                self._write_manifest(uuid.uuid4().hex)
                self._snapshot = None
        report.seconds = time.perf_counter() - started
        return report

    def _drop(self) -> None:
        for name in (self.chunks.name, self.paper_records.name):
            self.client.delete_collection(name)
        for attribute in ("chunks", "paper_records"):
            self.__dict__.pop(attribute, None)
        self._snapshot = None
        self._has_papers = False

    def _apply(
        self,
        papers: Sequence[Paper],
        sync: bool,
        on_progress: ProgressCallback | None,
        files: Collection[str] | None,
    ) -> IngestReport:
        records = self._records()
        wanted = {paper.paper_id: paper for paper in papers}
        files = set(files) if files is not None else {p.source.rpartition(":")[0] for p in papers}
        stale = [
            paper_id
            for paper_id, metadata in records.items()
            if paper_id not in wanted and (sync or metadata.get("source_file") in files)
        ]
        todo = [
            paper
            for paper in papers
            if records.get(paper.paper_id, {}).get("content_hash") != paper.content_hash
            or records[paper.paper_id].get("status") != "ready"
        ]
        report = IngestReport(removed=len(stale), removed_ids=stale)
        report.added = sum(paper.paper_id not in records for paper in todo)
        report.updated = len(todo) - report.added
        report.unchanged = len(papers) - len(todo)
        report.chunks_removed = self._remove(stale)
        total = len(todo)
        if on_progress:
            on_progress(0, total)
        for begin in range(0, total, _BATCH_PAPERS):
            batch = todo[begin : begin + _BATCH_PAPERS]
            report.chunks_written += self._write_batch(batch)
            if on_progress:
                on_progress(min(begin + _BATCH_PAPERS, total), total)
        return report

    def _remove(self, paper_ids: list[str]) -> int:
        removed = 0
        for begin in range(0, len(paper_ids), _PAGE):
            batch = paper_ids[begin : begin + _PAGE]
            where = {"paper_id": {"$in": batch}}
            removed += len(self.chunks.get(where=where, include=[])["ids"])
            self.chunks.delete(where=where)
            self.paper_records.delete(ids=batch)
            self._has_papers = False
        return removed

    def _write_batch(self, papers: list[Paper]) -> int:
        ids = [paper.paper_id for paper in papers]
        placeholder = np.zeros((len(papers), self._dimension()), dtype=np.float32)
        placeholder[:, 0] = 1.0
        self.paper_records.upsert(
            ids=ids,
            embeddings=placeholder,
            documents=[paper.abstract for paper in papers],
            metadatas=[_paper_metadata(paper, "pending") for paper in papers],
        )
        self.chunks.delete(where={"paper_id": {"$in": ids}})
        chunked = [(paper, chunk) for paper in papers for chunk in self.chunker.chunk(paper)]
        vectors = self.embedder.embed([embedding_text(chunk, paper) for paper, chunk in chunked])
        self.chunks.upsert(
            ids=[chunk.chunk_id for _, chunk in chunked],
            embeddings=vectors,
            documents=[chunk.text for _, chunk in chunked],
            metadatas=[_chunk_metadata(chunk, paper) for paper, chunk in chunked],
        )
        self.paper_records.upsert(
            ids=ids,
            embeddings=self._paper_vectors(papers, chunked, vectors),
            metadatas=[_paper_metadata(paper, "ready") for paper in papers],
        )
        return len(chunked)

    def _dimension(self) -> int:
        if not hasattr(self, "_dim"):
            self._dim = int(self.embedder.embed(["dimension probe"]).shape[1])
        return self._dim

    @staticmethod
    def _paper_vectors(papers, chunked, vectors: np.ndarray) -> np.ndarray:
        position = {paper.paper_id: row for row, paper in enumerate(papers)}
        sums = np.zeros((len(papers), vectors.shape[1]), dtype=np.float32)
        for (paper, _), vector in zip(chunked, vectors, strict=True):
            sums[position[paper.paper_id]] += vector
        norms = np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
        return sums / norms

    # ---- reading --------------------------------------------------------------------

    def count_chunks(self) -> int:
        return self.chunks.count()

    def is_empty(self) -> bool:
        # once papers are seen only this process's own removals can empty the index
        if not self._has_papers:
            self._has_papers = self.paper_records.count() > 0
        return not self._has_papers

    def dense_query(self, vector: np.ndarray, n: int, paper_ids: list[str] | None) -> dict:
        """Nearest `n` chunks to `vector` (optionally only of `paper_ids`), Chroma's raw result.

        `n` must not exceed the number of stored chunks (the caller knows it from the snapshot,
        which saves a Chroma round trip per query)."""
        where = None
        if paper_ids is not None:
            where = (
                {"paper_id": {"$in": paper_ids}}
                if len(paper_ids) > 1
                else {"paper_id": paper_ids[0]}
            )
        try:
            return self.chunks.query(
                query_embeddings=[vector],
                n_results=n,
                where=where,
                include=["documents", "metadatas", "distances"],
            )
        except InternalError as exc:
            # another process is writing and has not flushed its vectors yet
            logger.warning("dense search unavailable during a concurrent ingest: %s", exc)
            return {"ids": [[]], "documents": [[]], "metadatas": [[]], "distances": [[]]}

    def _all(self, collection, include: list[str]) -> Iterator[tuple[str, str, dict]]:
        offset = 0
        while True:
            page = collection.get(include=include, limit=_PAGE, offset=offset)
            yield from zip(page["ids"], page["documents"], page["metadatas"], strict=True)
            if len(page["ids"]) < _PAGE:
                return
            offset += _PAGE

    def snapshot(self) -> KeywordSnapshot:
        """The keyword index and paper table for the current generation (cached on disk)."""
        generation = self.generation()
        if self._snapshot is not None and self._snapshot.generation == generation:
            return self._snapshot
        self.check_compatible()
        folder = self._snapshot_root()
        snapshot = KeywordSnapshot.load(folder, generation)
        if snapshot is None:
            snapshot = self._build_snapshot(generation)
            snapshot.save(folder)
        self._snapshot = snapshot
        return snapshot

    def _snapshot_root(self) -> Path:
        chroma = self.settings.chroma
        where = f"{chroma.host}_{chroma.port}" if chroma.host else "local"
        return self.settings.data_dir / "keyword" / f"{where}_{chroma.collection}"

    def papers(self) -> list[Paper]:
        """Every indexed paper, read from Chroma."""
        return [
            paper_from_record(document, metadata)
            for _, document, metadata in self._all(self.paper_records, ["documents", "metadatas"])
            if metadata.get("status") == "ready"
        ]

    def _build_snapshot(self, generation: str) -> KeywordSnapshot:
        papers = self.papers()
        chunk_rows = list(self._all(self.chunks, ["documents", "metadatas"]))
        return KeywordSnapshot.build(generation, papers, chunk_rows, keyword_text)
