"""Chunking, the Chroma index and its incremental ingest."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid

import numpy as np
import pytest
from conftest import write_abstracts

from assistant import (
    Assistant,
    CorpusError,
    IndexMismatchError,
    IndexUnavailableError,
    Settings,
    load_corpus,
)
from assistant.chunking import Chunker
from assistant.corpus import shipped_seeds_dir
from assistant.embeddings import CachedEmbedder, OnnxMiniLMEmbedder, VectorStore
from assistant.index import PaperIndex
from assistant.settings import ChromaSettings, ChunkSettings
from assistant.text import sentence_spans


class CountingEmbedder(OnnxMiniLMEmbedder):
    """The real embedder, counting how many texts it was asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.texts = 0

    def embed(self, texts):
        self.texts += len(texts)
        return super().embed(texts)


def _index(data_dir, **settings) -> PaperIndex:
    embedder = CountingEmbedder()
    return PaperIndex(Settings(data_dir=data_dir, **settings), embedder)


@pytest.mark.parametrize("abbreviation", ["e.g.", "i.e.", "i.i.d.", "et al."])
def test_an_abbreviation_common_in_abstracts_does_not_end_a_sentence(abbreviation):
    text = f"It holds only under strong assumptions, such as {abbreviation} instances. It ends."
    assert len(sentence_spans(text)) == 2


def test_chunk_and_sentence_spans_point_at_the_exact_abstract_text():
    chunker = Chunker(ChunkSettings())
    for paper in load_corpus([shipped_seeds_dir()]):
        chunks = chunker.chunk(paper)
        assert chunks, paper.paper_id
        assert chunks[0].start == 0 and chunks[-1].end == len(paper.abstract)
        for chunk in chunks:
            assert paper.abstract[chunk.start : chunk.end] == chunk.text
            assert chunk.sentences
            for start, end in chunk.sentences:
                assert chunk.start <= start < end <= chunk.end
                assert paper.abstract[start:end].strip() == paper.abstract[start:end]


def test_titles_and_authors_stay_out_of_the_snippet(assistant):
    hit = assistant.search("GaLore gradient low-rank projection memory", k=1)[0]
    assert hit.title.startswith("GaLore")
    assert hit.title not in hit.text and "Jiawei Zhao" not in hit.text
    assert "Jiawei Zhao" in hit.authors


def test_reingesting_an_unchanged_corpus_embeds_nothing(fresh_dir):
    index = _index(fresh_dir)
    report = index.ingest(load_corpus([shipped_seeds_dir()]))
    assert (report.added, report.updated, report.removed, report.unchanged) == (0, 0, 0, 76)
    assert index.embedder.texts == 0


def test_changed_and_removed_papers_are_updated_and_deleted(fresh_dir):
    index = _index(fresh_dir)
    papers = load_corpus([shipped_seeds_dir()])
    chunks_before = index.count_chunks()
    changed = papers[0].model_copy(update={"abstract": papers[0].abstract + " We add a sentence."})
    kept = [changed, *papers[1:-1]]
    report = index.ingest(kept, sync=True)
    assert (report.added, report.updated, report.removed) == (0, 1, 1)
    assert report.removed_ids == [papers[-1].paper_id]
    indexed = index.snapshot().papers
    assert len(indexed) == 75 and papers[-1].paper_id not in indexed
    assert indexed[changed.paper_id].abstract.endswith("We add a sentence.")
    removed_chunks = index.chunks.get(where={"paper_id": papers[-1].paper_id})["ids"]
    assert removed_chunks == []
    assert index.count_chunks() < chunks_before
    assert index.embedder.texts == len(index.chunker.chunk(changed)) + 1  # + dimension probe


def test_a_broken_file_leaves_the_index_untouched(fresh_dir, tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps({"title": "New paper", "abstract": "A new idea."}) + "\n")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"title": "x", "abstract": "y"}\n{oops\n')
    assistant = Assistant(Settings(data_dir=fresh_dir))
    before = (assistant.index.count_chunks(), assistant.index.generation())
    with pytest.raises(CorpusError, match=r"bad\.jsonl, line 2"):
        assistant.ingest([good, bad])
    assert (assistant.index.count_chunks(), assistant.index.generation()) == before


def test_another_embedding_model_is_refused_with_a_rebuild_hint(fresh_dir):
    class OtherModel(CountingEmbedder):
        name = "some-other-model"

    index = PaperIndex(Settings(data_dir=fresh_dir), OtherModel())
    with pytest.raises(IndexMismatchError, match="citeqa ingest --rebuild"):
        index.snapshot()
    with pytest.raises(IndexMismatchError, match="some-other-model"):
        index.ingest(load_corpus([shipped_seeds_dir()]))


def test_other_chunk_settings_are_refused(fresh_dir):
    index = _index(fresh_dir, chunking=ChunkSettings(chunk_tokens=200))
    with pytest.raises(IndexMismatchError, match="chunk_tokens"):
        index.snapshot()


def test_rebuild_starts_over_with_new_settings(fresh_dir):
    index = _index(fresh_dir, chunking=ChunkSettings(chunk_tokens=200, overlap_tokens=0))
    report = index.ingest(load_corpus([shipped_seeds_dir()]), rebuild=True)
    assert report.added == 76
    assert index.manifest()["chunk_tokens"] == "200"
    assert len(index.snapshot().papers) == 76


def test_keyword_snapshot_is_persisted_not_rebuilt(seeded_dir):
    first = PaperIndex(Settings(data_dir=seeded_dir))
    generation = first.generation()
    saved = seeded_dir / "keyword" / "local_citeqa" / generation
    assert (saved / "snapshot.json").is_file()
    second = PaperIndex(Settings(data_dir=seeded_dir))
    second._build_snapshot = None  # would raise if called: the snapshot must come from disk
    assert len(second.snapshot().papers) == 76


class _CountingEmbedder:
    name = OnnxMiniLMEmbedder.name

    def __init__(self) -> None:
        self.model = OnnxMiniLMEmbedder()
        self.texts: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.texts += texts
        return self.model.embed(texts)


def _counting_assistant(data_dir) -> tuple[Assistant, _CountingEmbedder]:
    assistant = Assistant(Settings(data_dir=data_dir))
    counting = assistant.answerer.scoring_embedder.embedder = _CountingEmbedder()
    return assistant, counting


def test_a_new_process_reuses_the_sentence_vectors_an_earlier_one_stored(fresh_dir):
    shutil.rmtree(fresh_dir / "vectors", ignore_errors=True)
    question = "Which papers study neural collapse, and in what settings?"
    first, first_embedded = _counting_assistant(fresh_dir)
    answer = first.ask(question, backend="extractive")
    second, second_embedded = _counting_assistant(fresh_dir)
    assert second.ask(question, backend="extractive").answer == answer.answer
    # the second embeds the question and a few clauses, not the retrieved abstracts again
    assert len(first_embedded.texts) > 30 and len(second_embedded.texts) < 15
    assert not set(second_embedded.texts) & {c.snippet for c in answer.citations}


def test_stored_vectors_of_another_model_or_a_damaged_file_are_not_used(tmp_path):
    path = tmp_path / "vectors.npz"
    embedder = CachedEmbedder(OnnxMiniLMEmbedder())
    embedder.embed(["a sentence", "another sentence"])
    assert embedder.write(path, ["a sentence", "another sentence", "never embedded"]) == [
        "a sentence",
        "another sentence",
    ]
    fresh = CachedEmbedder(_CountingEmbedder())
    assert fresh.read(path) == ["a sentence", "another sentence"]
    assert np.allclose(fresh.embed(["a sentence"]), embedder.embed(["a sentence"]))
    assert fresh.embedder.texts == []
    other = CachedEmbedder(_CountingEmbedder())
    other.name = "another-model"
    assert other.read(path) == []
    path.write_bytes(path.read_bytes()[:100])
    assert CachedEmbedder(OnnxMiniLMEmbedder()).read(path) == []
    assert CachedEmbedder(OnnxMiniLMEmbedder()).read(tmp_path / "missing.npz") == []


def test_many_stored_vector_files_are_merged_into_one(tmp_path):
    embedder = CachedEmbedder(OnnxMiniLMEmbedder())
    texts = [f"sentence number {n}" for n in range(VectorStore.MERGE_AT + 2)]
    embedder.embed(texts)
    for text in texts:
        VectorStore(tmp_path, embedder).add([text])
    folder = tmp_path / embedder.name
    assert len(list(folder.glob("*.npz"))) == len(texts)
    reader = CachedEmbedder(_CountingEmbedder())
    VectorStore(tmp_path, reader).load()
    assert len(list(folder.glob("*.npz"))) == 1
    reader.embed(texts)
    assert reader.embedder.texts == []


def test_a_long_running_process_merges_the_files_it_writes(tmp_path):
    embedder = CachedEmbedder(OnnxMiniLMEmbedder())
    texts = [f"sentence number {n}" for n in range(2 * VectorStore.MERGE_AT)]
    embedder.embed(texts)
    store = VectorStore(tmp_path, embedder)
    for text in texts:
        store.add([text])
    assert len(list((tmp_path / embedder.name).glob("*.npz"))) <= VectorStore.MERGE_AT
    reader = CachedEmbedder(_CountingEmbedder())
    VectorStore(tmp_path, reader).load()
    reader.embed(texts)
    assert reader.embedder.texts == []


def test_first_search_on_an_empty_index_ingests_the_seeds(tmp_path):
    assistant = Assistant(Settings(data_dir=tmp_path / "new"))
    hits = assistant.search("neural collapse in language models", k=3)
    assert hits and len(assistant.papers()) == 76


def test_a_running_process_sees_papers_another_process_ingested(fresh_dir, tmp_path):
    reader = Assistant(Settings(data_dir=fresh_dir))
    assert len(reader.papers()) == 76
    extra = tmp_path / "extra.jsonl"
    record = {
        "title": "Quokka Attention for Marsupial Vision",
        "authors": ["A. Writer"],
        "abstract": "We introduce quokka attention, a mechanism for marsupial image recognition.",
        "venue": "Nowhere 2024",
        "url": "https://example.org/quokka",
    }
    extra.write_text(json.dumps(record) + "\n")
    Assistant(Settings(data_dir=fresh_dir)).ingest([extra])  # a second process, e.g. the CLI
    assert len(reader.papers()) == 77
    assert reader.search("quokka attention marsupial")[0].title == record["title"]


# ---- rebuilds: built beside the live index, switched in one write ---------------------


def _collection_names(index: PaperIndex) -> set[str]:
    prefix = index.settings.chroma.collection + "_"
    return {c.name for c in index.client.list_collections() if c.name.startswith(prefix)}


@pytest.mark.parametrize("server", [False, True], ids=["embedded", "chroma-server"])
def test_a_running_assistant_follows_a_rebuild_by_another_process(request, tmp_path, server):
    chroma, env = ChromaSettings(), {}
    if server:
        host, port = request.getfixturevalue("chroma_server")
        chroma = ChromaSettings(host=host, port=port, collection=f"t{uuid.uuid4().hex[:8]}")
        env = {
            "CITEQA_CHROMA__HOST": host,
            "CITEQA_CHROMA__PORT": str(port),
            "CITEQA_CHROMA__COLLECTION": chroma.collection,
        }
    data_dir = tmp_path / "data"
    old_corpus = write_abstracts(tmp_path / "old.jsonl", 12)
    new_corpus = write_abstracts(tmp_path / "new.jsonl", 40, start=100)
    old_ids = {paper.paper_id for paper in load_corpus([old_corpus])}
    new = load_corpus([new_corpus])
    reader = Assistant(Settings(data_dir=data_dir, chroma=chroma))  # e.g. a running `citeqa ui`
    reader.ingest([old_corpus])
    collections_before = _collection_names(reader.index)

    rebuild = subprocess.Popen(
        [sys.executable, "-m", "assistant", "ingest", "--rebuild", str(new_corpus)],
        env={**os.environ, "CITEQA_DATA_DIR": str(data_dir), **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen = []
    while rebuild.poll() is None:
        seen.append({paper.paper_id for paper in reader.papers()})
        for hit in reader.search(new[len(seen) % len(new)].title, k=5):
            assert hit.paper_id in old_ids | {paper.paper_id for paper in new}
    assert rebuild.wait() == 0, rebuild.stderr.read()

    new_ids = {paper.paper_id for paper in new}
    assert all(ids in (old_ids, new_ids) for ids in seen), "a reader saw a half-built index"
    assert {paper.paper_id for paper in reader.papers()} == new_ids
    for paper in new[:5]:
        assert reader.search(paper.title, k=1)[0].paper_id == paper.paper_id
    assert reader.ask(new[0].title, backend="extractive").sources
    after = _collection_names(reader.index)
    assert len(after) == 3 and not after & (collections_before - {f"{chroma.collection}_live"})


def _make_legacy(data_dir) -> None:
    """Turn an index into what citeqa wrote before builds: `citeqa_chunks` and
    `citeqa_papers` without a suffix, the manifest on the chunks collection, no pointer."""
    index = PaperIndex(Settings(data_dir=data_dir))
    manifest = index.manifest()
    chunks, papers, client = index.chunks, index.paper_records, index.client
    chunks.modify(name="citeqa_chunks", metadata={f"citeqa:{k}": v for k, v in manifest.items()})
    papers.modify(name="citeqa_papers")
    client.delete_collection("citeqa_live")


def test_an_index_from_before_builds_is_read_and_adopted(fresh_dir):
    _make_legacy(fresh_dir)
    assistant = Assistant(Settings(data_dir=fresh_dir))
    assert _collection_names(assistant.index) == {"citeqa_chunks", "citeqa_papers"}
    assert len(assistant.papers()) == 76
    assert "Neural Collapse" in assistant.search("neural collapse in language models")[0].title
    assert assistant.ingest().unchanged == 76
    report = assistant.ingest(rebuild=True)
    assert report.added == 76
    names = _collection_names(assistant.index)
    assert "citeqa_chunks" not in names and len(names) == 3
    assert len(Assistant(Settings(data_dir=fresh_dir)).papers()) == 76


def test_leftovers_of_a_killed_rebuild_are_dropped_by_the_next_ingest(fresh_dir):
    index = _index(fresh_dir)
    live = _collection_names(index)
    # what a rebuild killed before its switch leaves: a complete-looking, unnamed build
    for kind in ("chunks", "papers"):
        index.client.create_collection(f"citeqa_{kind}_g0123456789ab", embedding_function=None)
    assert len(index.snapshot().papers) == 76
    assert index.ingest(load_corpus([shipped_seeds_dir()])).unchanged == 76
    assert _collection_names(index) == live


def test_a_damaged_keyword_snapshot_is_rebuilt(fresh_dir):
    root = fresh_dir / "keyword" / "local_citeqa"
    (saved,) = root.iterdir()
    (saved / "snapshot.json").write_text('{"generation": ')
    assistant = Assistant(Settings(data_dir=fresh_dir))
    assert len(assistant.papers()) == 76
    assert json.loads((saved / "snapshot.json").read_text())["generation"] == saved.name


def test_vectors_missing_from_the_live_build_are_an_error_not_a_silent_keyword_search(fresh_dir):
    assistant = Assistant(Settings(data_dir=fresh_dir))
    assert assistant.search("neural collapse in language models")
    (chunks,) = {name for name in _collection_names(assistant.index) if "_chunks_" in name}
    assistant.index.client.delete_collection(chunks)
    with pytest.raises(IndexUnavailableError, match="cannot be used"):
        assistant.search("neural collapse in language models")
