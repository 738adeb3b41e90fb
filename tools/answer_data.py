"""(question, sentence, label) pairs for the answer scorer (`tools/train_cross_encoder.py`
--task answer): does this sentence of an abstract answer the question?

The questions are `tools/data/questions_train_*.jsonl`, written by helpers about non-seed
abstracts of `bench/data/abstracts_2024.jsonl` (never the seed papers the evaluation sets
ask about), each with the abstract sentences that answer it. Every sentence of the
question's paper is a pair: label 1 when it is (or overlaps) an answer sentence, else 0,
so the model learns to pick the sentence with the asked detail over its neighbours. A near
miss (a detail the abstract does not give) has only negatives; so has an out-of-corpus
question. Each question also gets the sentences closest to it from the abstracts nearest
to it (other papers on the same topic) as negatives. The sentence is read with its paper's
title, as the app reads it (`assistant.answering.cross_encoder.passage_text`).

    .venv/bin/python tools/answer_data.py /tmp/answer_pairs.jsonl \
        tools/data/questions_train_*.jsonl

Deterministic; about three minutes on 2 CPU cores (it embeds every abstract once).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from assistant.answering.cross_encoder import passage_text
from assistant.corpus import Paper, load_corpus
from assistant.embeddings import OnnxMiniLMEmbedder
from assistant.text import sentence_spans

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "bench" / "data" / "abstracts_2024.jsonl"
# Other papers whose sentences are negatives for a question, and how many of their
# sentences closest to it are taken.
NEIGHBOURS = 4
NEIGHBOUR_SENTENCES = 8


def sentences(paper: Paper) -> list[tuple[int, int, str]]:
    return [(s, e, paper.abstract[s:e]) for s, e in sentence_spans(paper.abstract)]


def answer_spans(paper: Paper, answers: list[str]) -> list[tuple[int, int]]:
    spans = []
    for answer in answers:
        start = paper.abstract.find(answer.strip())
        if start >= 0:
            spans.append((start, start + len(answer.strip())))
    return spans


def pairs_of(row: dict, papers: dict[str, Paper], near: list[Paper], embedder) -> list[dict]:
    question = row["question"]
    out = []
    own = papers.get(row.get("paper_id") or "")
    if own is not None:
        spans = answer_spans(own, row.get("answer_sentences") or [])
        if row.get("answer_sentences") and not spans:
            return []  # an answer sentence not found verbatim: the row is unreliable
        for start, end, text in sentences(own):
            label = int(any(start < e and s < end for s, e in spans))
            out.append(_pair(question, own, text, label, row["type"]))
    others = [(p, text) for p in near for _, _, text in sentences(p)]
    if others:
        vectors = embedder.embed([question, *(text for _, text in others)])
        closeness = vectors[1:] @ vectors[0]
        for i in np.argsort(-closeness)[:NEIGHBOUR_SENTENCES]:
            paper, text = others[int(i)]
            out.append(_pair(question, paper, text, 0, row["type"] + "/other"))
    return out


def _pair(question: str, paper: Paper, sentence: str, label: int, kind: str) -> dict:
    return {
        "claim": question,
        "evidence": passage_text(paper.display_title, sentence),
        "label": label,
        "kind": kind,
    }


def main() -> None:
    out, files = Path(sys.argv[1]), sys.argv[2:]
    corpus = load_corpus([CORPUS])
    papers = {p.paper_id: p for p in corpus}
    embedder = OnnxMiniLMEmbedder()
    vectors = embedder.embed([f"{p.display_title}. {p.abstract}" for p in corpus])
    rows = [json.loads(line) for name in files for line in Path(name).read_text().splitlines()]
    questions = embedder.embed([row["question"] for row in rows])
    written = 0
    with out.open("w") as sink:
        for row, vector in zip(rows, questions, strict=True):
            ranked = np.argsort(-(vectors @ vector))
            near = [
                corpus[i]
                for i in ranked[: NEIGHBOURS + 1]
                if corpus[i].paper_id != row.get("paper_id")
            ]
            for pair in pairs_of(row, papers, near[:NEIGHBOURS], embedder):
                sink.write(json.dumps(pair) + "\n")
                written += 1
    print(f"{len(rows)} questions, {written} pairs -> {out}")


if __name__ == "__main__":
    main()
