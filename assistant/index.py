"""The persistent index: chunks and papers in Chroma, plus a keyword snapshot on disk.

Chroma is the source of truth. The index lives in a *build*, two collections
(`<name>_chunks_<build>` and `<name>_papers_<build>`), that a pointer collection
(`<name>_live`) names in its metadata together with how it was built and the index's
*generation* (new with every ingest that changes something). Each switch of the pointer is
one write, so readers see a whole generation or the one before it.

- An ordinary ingest writes into the live build, each paper in two phases (a `pending`
  record, then its chunks under deterministic ids, then the `ready` record with its content
  hash), so an ingest killed at any point is finished by the next run with no duplicate chunk.
- `--rebuild` writes a new build beside the live one and switches the pointer to it when it
  is complete; killed before that, it leaves the old index whole. Builds the pointer does not
  name (the old one, or a killed rebuild's) are dropped by the next ingest.
- Before switching, an ingest saves the generation's keyword (BM25) snapshot: its paper table
  (`ready` papers) and their chunks. Searches and `papers` read only that snapshot; dense
  search ranks, but returns only chunks the snapshot holds.
- Readers re-read the pointer per query (well under a millisecond), so running processes
  follow a switch without restarting.

An index written before builds existed (collections without a build suffix, the manifest in
the chunks collection's metadata) is read as it is and adopted by the next ingest.
"""

from __future__ import annotations

import fcntl
import json
import logging
import re
import time
import uuid
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property, wraps
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import httpx
import numpy as np
from chromadb.errors import ChromaError, InternalError, NotFoundError

from .chunking import Chunk, Chunker
from .corpus import Duplicate, Paper
from .embeddings import Embedder, make_embedder
from .errors import CiteqaError, IndexMismatchError, IndexUnavailableError
from .keyword import KeywordSnapshot
from .settings import Settings

if TYPE_CHECKING:
    from chromadb.api.models.Collection import Collection

logger = logging.getLogger(__name__)

_SCHEMA = "1"
_BATCH_PAPERS = 32
_PAGE = 2000
_META_PREFIX = "citeqa:"
_BUILD_KEY = "build"
_LEGACY_BUILD = ""
_UNPUBLISHED = "empty"
_SWITCH_RETRIES = 3

ProgressCallback = Callable[[int, int], None]
T = TypeVar("T")


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


@dataclass(frozen=True)
class _Live:
    """What the pointer names: the live build (`""`: an index from before builds) and the
    manifest it was built with, including its generation once an ingest finished."""

    build: str
    manifest: dict[str, str]

    @property
    def generation(self) -> str | None:
        return self.manifest.get("generation")


@dataclass(frozen=True)
class _Build:
    """The two collections of one build."""

    name: str
    chunks: Collection
    papers: Collection


def _new_build_name() -> str:
    return f"g{uuid.uuid4().hex[:12]}"


def _unprefixed(metadata: dict | None) -> dict[str, str]:
    return {
        key.removeprefix(_META_PREFIX): str(value)
        for key, value in (metadata or {}).items()
        if key.startswith(_META_PREFIX)
    }


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _plain_errors(method: Callable[..., T]) -> Callable[..., T]:
    """Turn a failure of the data directory, Chroma or its server into one sentence."""

    @wraps(method)
    def wrapper(self: PaperIndex, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except CiteqaError:
            raise
        except OSError as exc:
            reason = exc.strerror or _first_line(exc)
            where = f"{reason}: {exc.filename}" if exc.filename else reason
            raise IndexUnavailableError(
                f"cannot use the data directory {self.settings.data_dir} ({where}); "
                "set CITEQA_DATA_DIR to a writable folder"
            ) from None
        except httpx.HTTPError as exc:
            raise IndexUnavailableError(
                f"cannot reach the Chroma server at {self.location}: {_first_line(exc)}"
            ) from None
        except ChromaError as exc:
            raise IndexUnavailableError(
                f"the index at {self.location} cannot be used ({_first_line(exc)}); if it is "
                "damaged, move it aside and run `citeqa ingest` to build a new one"
            ) from None

    return wrapper


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
        self._opened: _Build | None = None
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
                raise IndexUnavailableError(
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

    # ---- builds and the pointer -------------------------------------------------------

    def _collection_names(self, build: str) -> tuple[str, str]:
        base = self.settings.chroma.collection
        suffix = f"_{build}" if build else ""
        return f"{base}_chunks{suffix}", f"{base}_papers{suffix}"

    def _pointer_name(self) -> str:
        return f"{self.settings.chroma.collection}_live"

    def _live(self) -> _Live | None:
        """The live build, read afresh: another process may have switched it."""
        try:
            pointer = self.client.get_collection(self._pointer_name(), embedding_function=None)
        except NotFoundError:
            return self._legacy()
        manifest = _unprefixed(pointer.metadata)
        return _Live(manifest.pop(_BUILD_KEY, _LEGACY_BUILD), manifest)

    def _legacy(self) -> _Live | None:
        """An index from before builds, or None when there is no index at all."""
        try:
            name = self._collection_names(_LEGACY_BUILD)[0]
            chunks = self.client.get_collection(name, embedding_function=None)
        except NotFoundError:
            return None
        return _Live(_LEGACY_BUILD, _unprefixed(chunks.metadata))

    def _open(self, build: str, *, create: bool = False) -> _Build:
        """The collections of `build` (created when `create`, else they must exist)."""
        if self._opened is not None and self._opened.name == build:
            return self._opened
        names = self._collection_names(build)
        if create:
            # a low sync threshold flushes the vector index often, so that readers in other
            # processes see a writer's progress instead of an index not yet on disk
            configuration = {"hnsw": {"space": "cosine", "sync_threshold": 100}}
            chunks, papers = (
                self.client.get_or_create_collection(
                    name, configuration=configuration, embedding_function=None
                )
                for name in names
            )
        else:
            chunks, papers = (
                self.client.get_collection(name, embedding_function=None) for name in names
            )
        self._opened = _Build(build, chunks, papers)
        return self._opened

    def _read_live(self, read: Callable[[_Live | None], T]) -> T:
        """`read(live)`, again on the new build if a rebuild switched and dropped the one
        being read."""
        for _ in range(_SWITCH_RETRIES):
            live = self._live()
            try:
                return read(live)
            except NotFoundError:
                self._opened = None
        raise IndexUnavailableError(
            f"the index at {self.location} names collections that do not exist; "
            "rebuild it with `citeqa ingest --rebuild`"
        )

    def _switch(self, build: str, generation: str | None) -> None:
        """Point readers at `build` and `generation` in one write."""
        entries = {**self._wanted_manifest(), _BUILD_KEY: build}
        if generation:
            entries["generation"] = generation
        metadata = {f"{_META_PREFIX}{key}": value for key, value in entries.items()}
        try:
            pointer = self.client.get_collection(self._pointer_name(), embedding_function=None)
            pointer.modify(metadata=metadata)
        except NotFoundError:
            self.client.create_collection(
                self._pointer_name(), metadata=metadata, embedding_function=None
            )

    def _drop_unused_builds(self, live: _Live | None) -> None:
        """Drop every build the pointer does not name: the one a rebuild replaced, or what
        a killed rebuild left."""
        base = re.escape(self.settings.chroma.collection)
        pattern = re.compile(rf"{base}_(?:chunks|papers)(?:_(g[0-9a-f]{{12}}))?")
        for collection in self.client.list_collections():
            match = pattern.fullmatch(collection.name)
            if match and (live is None or (match.group(1) or _LEGACY_BUILD) != live.build):
                self.client.delete_collection(collection.name)

    # ---- manifest -------------------------------------------------------------------

    def _wanted_manifest(self) -> dict[str, str]:
        return {
            "embedding": self.embedder.name,
            "chunk_tokens": str(self.settings.chunking.chunk_tokens),
            "overlap_tokens": str(self.settings.chunking.overlap_tokens),
            "schema": _SCHEMA,
        }

    @_plain_errors
    def manifest(self) -> dict[str, str]:
        """What the index records about how it was built (empty for a new index)."""
        live = self._live()
        return dict(live.manifest) if live else {}

    def check_compatible(self) -> None:
        """Raise `IndexMismatchError` if the index was built with other settings."""
        self._check(self.manifest())

    def _check(self, recorded: dict[str, str]) -> None:
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
        return self.manifest().get("generation", _UNPUBLISHED)

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

    def _records(self, build: _Build) -> dict[str, dict]:
        records: dict[str, dict] = {}
        offset = 0
        while True:
            page = build.papers.get(include=["metadatas"], limit=_PAGE, offset=offset)
            for paper_id, metadata in zip(page["ids"], page["metadatas"], strict=True):
                records[paper_id] = metadata
            if len(page["ids"]) < _PAGE:
                return records
            offset += _PAGE

    @_plain_errors
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
        `papers` is removed. `rebuild` builds the index anew beside the old one, which stays
        in use until the new one is complete (needed after changing the embedding model or
        chunk settings)."""
        started = time.perf_counter()
        with self._writer_lock():
            live = self._live()
            self._drop_unused_builds(live)
            if live is None:
                # a new index is written in place (so a killed first ingest is resumed)
                build = self._open(_new_build_name(), create=True)
                self._switch(build.name, None)
            elif rebuild:
                build = self._open(_new_build_name(), create=True)
            else:
                self._check(live.manifest)
                build = self._open(live.build, create=True)
            report = self._apply(build, papers, sync, on_progress, files)
            if report.changed or rebuild or live is None or not live.generation:
                self._publish(build)
        report.seconds = time.perf_counter() - started
        return report

    def _publish(self, build: _Build) -> None:
        """Save a new generation's keyword snapshot, switch readers to it, drop the rest."""
        generation = uuid.uuid4().hex
        snapshot = self._build_snapshot(build, generation)
        root = self._snapshot_root()
        snapshot.save(root)
        self._switch(build.name, generation)
        self._snapshot = snapshot
        self._has_papers = bool(snapshot.papers)
        self._drop_unused_builds(_Live(build.name, {}))
        KeywordSnapshot.prune(root, keep=generation)

    def _apply(
        self,
        build: _Build,
        papers: Sequence[Paper],
        sync: bool,
        on_progress: ProgressCallback | None,
        files: Collection[str] | None,
    ) -> IngestReport:
        records = self._records(build)
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
        report.chunks_removed = self._remove(build, stale)
        total = len(todo)
        if on_progress:
            on_progress(0, total)
        for begin in range(0, total, _BATCH_PAPERS):
            batch = todo[begin : begin + _BATCH_PAPERS]
            report.chunks_written += self._write_batch(build, batch)
            if on_progress:
                on_progress(min(begin + _BATCH_PAPERS, total), total)
        return report

    def _remove(self, build: _Build, paper_ids: list[str]) -> int:
        removed = 0
        for begin in range(0, len(paper_ids), _PAGE):
            batch = paper_ids[begin : begin + _PAGE]
            where = {"paper_id": {"$in": batch}}
            removed += len(build.chunks.get(where=where, include=[])["ids"])
            build.chunks.delete(where=where)
            build.papers.delete(ids=batch)
            self._has_papers = False
        return removed

    def _write_batch(self, build: _Build, papers: list[Paper]) -> int:
        ids = [paper.paper_id for paper in papers]
        placeholder = np.zeros((len(papers), self._dimension()), dtype=np.float32)
        placeholder[:, 0] = 1.0
        build.papers.upsert(
            ids=ids,
            embeddings=placeholder,
            documents=[paper.abstract for paper in papers],
            metadatas=[_paper_metadata(paper, "pending") for paper in papers],
        )
        build.chunks.delete(where={"paper_id": {"$in": ids}})
        chunked = [(paper, chunk) for paper in papers for chunk in self.chunker.chunk(paper)]
        vectors = self.embedder.embed([embedding_text(chunk, paper) for paper, chunk in chunked])
        build.chunks.upsert(
            ids=[chunk.chunk_id for _, chunk in chunked],
            embeddings=vectors,
            documents=[chunk.text for _, chunk in chunked],
            metadatas=[_chunk_metadata(chunk, paper) for paper, chunk in chunked],
        )
        build.papers.upsert(
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

    @property
    def chunks(self):
        """The live build's chunk collection."""
        return self._live_build().chunks

    @property
    def paper_records(self):
        """The live build's paper collection (records `pending` or `ready`)."""
        return self._live_build().papers

    def _live_build(self) -> _Build:
        def open_live(live: _Live | None) -> _Build:
            if live is None:
                raise IndexUnavailableError(f"there is no index at {self.location} yet")
            return self._open(live.build)

        return self._read_live(open_live)

    @_plain_errors
    def count_chunks(self) -> int:
        return self._read_live(lambda live: self._open(live.build).chunks.count() if live else 0)

    @_plain_errors
    def is_empty(self) -> bool:
        # once papers are seen only this process's own removals can empty the index
        if not self._has_papers:
            self._has_papers = self._read_live(
                lambda live: live is not None and self._open(live.build).papers.count() > 0
            )
        return not self._has_papers

    @_plain_errors
    def dense_query(
        self, snapshot: KeywordSnapshot, vector: np.ndarray, n: int, paper_ids: list[str] | None
    ) -> list[tuple[str, float]]:
        """Ids and cosine distances of the nearest `n` chunks to `vector` in the build of
        `snapshot` (optionally only of `paper_ids`), nearest first.

        `n` must not exceed the number of stored chunks (the caller knows it from the snapshot,
        which saves a Chroma round trip per query). Ids the snapshot lacks may come back."""
        where = None
        if paper_ids is not None:
            where = (
                {"paper_id": {"$in": paper_ids}}
                if len(paper_ids) > 1
                else {"paper_id": paper_ids[0]}
            )
        try:
            result = self._open(snapshot.build).chunks.query(
                query_embeddings=[vector], n_results=n, where=where, include=["distances"]
            )
        except InternalError as exc:
            # another process is writing and has not flushed its vectors yet
            logger.warning("dense search unavailable during a concurrent ingest: %s", exc)
            return []
        except ChromaError:
            # A rebuild switched to a new build and dropped (or is dropping) this one since
            # the snapshot was read: not found, or from a server a bare "Missing metadata
            # segment". This one query is answered by keywords, the next follows the switch;
            # with no switch the error is a real fault.
            live = self._live()
            if live is None or live.build == snapshot.build:
                raise
            self._opened = None
            logger.info("dense search skipped: the index was rebuilt during the query")
            return []
        return list(zip(result["ids"][0], result["distances"][0], strict=True))

    def _all(self, collection, include: list[str]) -> Iterator[tuple[str, str, dict]]:
        offset = 0
        while True:
            page = collection.get(include=include, limit=_PAGE, offset=offset)
            yield from zip(page["ids"], page["documents"], page["metadatas"], strict=True)
            if len(page["ids"]) < _PAGE:
                return
            offset += _PAGE

    @_plain_errors
    def snapshot(self) -> KeywordSnapshot:
        """What searches and `papers` see: the keyword index and paper table of the live
        generation (cached in memory and on disk)."""
        return self._read_live(self._snapshot_of)

    def _snapshot_of(self, live: _Live | None) -> KeywordSnapshot:
        if live is None:
            return KeywordSnapshot.from_rows(_UNPUBLISHED, _LEGACY_BUILD, [], [], keyword_text)
        generation = live.generation or _UNPUBLISHED
        cached = self._snapshot
        if cached and (cached.generation, cached.build) == (generation, live.build):
            return cached
        self._check(live.manifest)
        root = self._snapshot_root()
        snapshot = KeywordSnapshot.load(root, generation) if live.generation else None
        if snapshot is None:
            snapshot = self._build_snapshot(self._open(live.build), generation)
            if live.generation:
                self._save_quietly(snapshot, root)
        self._snapshot = snapshot
        return snapshot

    @staticmethod
    def _save_quietly(snapshot: KeywordSnapshot, root: Path) -> None:
        """Save a snapshot a reader built; it is only a cache, so failing to is no error."""
        try:
            snapshot.save(root)
        except OSError as exc:
            logger.warning("cannot save the keyword snapshot in %s: %s", root, exc)

    def _snapshot_root(self) -> Path:
        chroma = self.settings.chroma
        where = f"{chroma.host}_{chroma.port}" if chroma.host else "local"
        return self.settings.data_dir / "keyword" / f"{where}_{chroma.collection}"

    @_plain_errors
    def papers(self) -> list[Paper]:
        """Every paper of the live build that is ready, read from Chroma (an ingest merges
        new records with them; searches read `snapshot` instead)."""
        return self._read_live(
            lambda live: self._ready_papers(self._open(live.build)) if live else []
        )

    def _ready_papers(self, build: _Build) -> list[Paper]:
        return [
            paper_from_record(document, metadata)
            for _, document, metadata in self._all(build.papers, ["documents", "metadatas"])
            if metadata.get("status") == "ready"
        ]

    def _build_snapshot(self, build: _Build, generation: str) -> KeywordSnapshot:
        papers = self._ready_papers(build)
        chunk_rows = list(self._all(build.chunks, ["documents", "metadatas"]))
        return KeywordSnapshot.from_rows(generation, build.name, papers, chunk_rows, keyword_text)
