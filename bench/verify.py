"""Verification and extractive answering speed, in this process, on the seeds:

- verifying a generated answer of 3-4 sentences against 5 papers' abstracts, once it is
  written: each answer is new (its claims were never embedded); what the pipeline prepares
  while the backend writes (`Answerer.prepare`) is timed apart; the labelled dev answers
  (eval/answers_dev.jsonl) are the answers, each question's papers padded with retrieved
  ones to five;
- extractive answers to the dev questions (eval/questions_dev.jsonl), each asked once, the
  models loaded (one question asked first).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from assistant import Assistant, Settings
from assistant.answering.passages import PaperText
from assistant.answering.question import analyse
from assistant.evaluation import load_answer_set, load_questions
from assistant.retrieval import Filters

from .corpora import REPO
from .stats import load_average, summary_ms

SOURCES = 5
MIN_SENTENCES = 3


def _sources(assistant: Assistant, question: str, papers: list[str]) -> list[PaperText]:
    answerer = assistant.answerer
    understood = answerer.understand(question, [], "extractive")
    hits = answerer.retrieve(understood, SOURCES * 2, Filters())
    snapshot = assistant.index.snapshot().papers
    order = list(dict.fromkeys([*papers, *(hit.paper_id for hit in hits)]))[:SOURCES]
    return [PaperText(snapshot[paper_id], rank) for rank, paper_id in enumerate(order)]


def verification(assistant: Assistant) -> tuple[dict, dict]:
    """How long checking a written answer takes, and preparing for it (per question)."""
    answerer = assistant.answerer
    timings, preparing = [], []
    for row in load_answer_set(REPO / "eval" / "answers_dev.jsonl"):
        papers = _sources(assistant, row.question, row.papers)
        question = analyse(row.question, row.question, answerer.catalog())
        started = time.perf_counter()
        answering = answerer.prepare(question, papers)
        preparing.append(time.perf_counter() - started)
        for labelled in row.answers:
            if len(labelled.sentences) < MIN_SENTENCES:
                continue
            started = time.perf_counter()
            verified = answerer.verify(question, labelled.text, papers)
            kept = answerer.addressing(question, verified.claims, papers, answering)
            answerer.acceptable(question, kept, papers)
            timings.append(time.perf_counter() - started)
    return summary_ms(timings), summary_ms(preparing)


def extractive(assistant: Assistant) -> dict:
    questions = load_questions(REPO / "eval" / "questions_dev.jsonl")
    assistant.ask(questions[0].question, backend="extractive")
    timings = []
    for question in questions[1:]:
        started = time.perf_counter()
        assistant.ask(question.question, backend="extractive")
        timings.append(time.perf_counter() - started)
    return summary_ms(timings)


def run() -> dict:
    """The figures of this part."""
    with tempfile.TemporaryDirectory(prefix="citeqa-bench-verify-") as folder:
        assistant = Assistant(Settings(data_dir=Path(folder)))
        assistant.ensure_index()
        load_start = load_average()
        verify, prepare = verification(assistant)
        return {
            "load_start": load_start,
            "verify": verify,
            "prepare": prepare,
            "extractive_distinct": extractive(assistant),
            "load_end": load_average(),
        }
