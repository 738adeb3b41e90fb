"""Fit which retrieved papers a list answer names (`assistant/answering/plans/listing.py`)
on the answerable list questions of labelled question sets.

    python -m bench.fit_listing eval/questions.jsonl eval/questions_dev.jsonl ... \
        --threshold 0.35

Prints the weights to paste into listing.py and, holding out each question set in turn,
how many gold and other retrieved papers are listed at `--threshold`. Never give it a
held-out set that has not been scored yet."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from assistant import Assistant
from assistant.answering.passages import paper_texts
from assistant.answering.plans.listing import LISTED_WEIGHTS, paper_signals
from assistant.evaluation import load_questions
from assistant.retrieval import Filters

from .fitting import fit, signals_per_set


def _signals(assistant: Assistant, path: str) -> tuple[np.ndarray, np.ndarray]:
    """Each retrieved paper's signals for each answerable list question, and whether it is
    a gold paper."""
    answerer = assistant.answerer
    rows, labels = [], []
    for question in load_questions(Path(path)):
        understood = answerer.understand(question.question, question.history, "extractive")
        if not question.answerable or understood.intent != "list":
            continue
        hits = answerer.retrieve(understood, None, Filters())
        papers = paper_texts(hits, assistant.index.snapshot().papers)
        candidates = answerer.composer.candidates(understood, papers)
        for paper_id, signals in paper_signals(understood, candidates).items():
            rows.append(signals)
            labels.append(float(paper_id in question.gold_papers))
    return np.array(rows).reshape(-1, len(LISTED_WEIGHTS)), np.array(labels)


def main() -> None:
    args, signals = signals_per_set(_signals)
    gold = other = 0
    for held, (x, y) in enumerate(signals):
        train = [s for i, s in enumerate(signals) if i != held]
        w = fit(
            np.vstack([s[0] for s in train]), np.concatenate([s[1] for s in train]), balanced=False
        )
        listed = 1 / (1 + np.exp(-(x @ w[:-1] + w[-1]))) >= args.threshold
        gold += int(listed[y == 1].sum())
        other += int(listed[y == 0].sum())
    w = fit(
        np.vstack([s[0] for s in signals]), np.concatenate([s[1] for s in signals]), balanced=False
    )
    print("LISTED_WEIGHTS =", tuple(round(float(v), 2) for v in w[:-1]))
    print("LISTED_BIAS =", round(float(w[-1]), 2))
    total = int(sum(s[1].sum() for s in signals))
    print(f"each set held out: {gold} of {total} gold papers listed, {other} others")


if __name__ == "__main__":
    main()
