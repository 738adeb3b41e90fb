"""Fit the refusal model of `assistant/answering/plans/refusal.py` on labelled questions.

    python -m bench.fit_refusal eval/questions.jsonl eval/questions_dev.jsonl ... \
        --threshold 0.4

Prints the weights to paste into refusal.py and, holding out each question set in turn
(a model fitted on the others decides it), the share of answerable questions answered and
of unanswerable ones refused. `--threshold` moves the bias so that the shipped decision
(probability ≥ 0.5) is the balanced fit's probability ≥ threshold. Never give it a held-out
set that has not been scored yet."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from assistant import Assistant
from assistant.answering.passages import paper_texts
from assistant.answering.plans import asks_about_named_paper
from assistant.answering.plans.refusal import FEATURES, features
from assistant.evaluation import load_questions
from assistant.retrieval import Filters

from .fitting import fit, signals_per_set


def _signals(assistant: Assistant, path: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each question's features, whether it is answerable, and whether the named-paper
    rule answers it whatever the model says."""
    answerer = assistant.answerer
    rows, labels, named = [], [], []
    for question in load_questions(Path(path)):
        understood = answerer.understand(question.question, question.history, "extractive")
        hits = answerer.retrieve(understood, None, Filters())
        papers = paper_texts(hits, assistant.index.snapshot().papers)
        rows.append(features(understood, answerer.composer.candidates(understood, papers)))
        labels.append(float(question.answerable))
        named.append(asks_about_named_paper(understood))
    return np.array(rows), np.array(labels), np.array(named)


def main() -> None:
    args, signals = signals_per_set(_signals)
    shift = math.log(args.threshold / (1 - args.threshold))
    answered, refused = [], []
    for held, (x, y, named) in enumerate(signals):
        train = [s for i, s in enumerate(signals) if i != held]
        w = fit(np.vstack([s[0] for s in train]), np.concatenate([s[1] for s in train]))
        decided = (x @ w[:-1] + w[-1] >= shift) | named
        answered += list(decided[y == 1])
        refused += list(~decided[y == 0])
    x = np.vstack([s[0] for s in signals])
    y = np.concatenate([s[1] for s in signals])
    for label in (1, 0):
        print("answerable" if label else "unanswerable", x[y == label].mean(axis=0).round(2))
    w = fit(x, y)
    print("WEIGHTS =", tuple(round(float(v), 2) for v in w[:-1]), " # ", FEATURES)
    print("BIAS =", round(float(w[-1] - shift), 2))
    print(
        f"each set held out: answered {np.mean(answered):.3f} of {len(answered)} answerable, "
        f"refused {np.mean(refused):.3f} of {len(refused)} unanswerable"
    )


if __name__ == "__main__":
    main()
