"""Fit the refusal model of `assistant/answering/plans/refusal.py` on labelled questions.

    python -m bench.fit_refusal eval/questions_dev.jsonl eval/questions.jsonl \
        eval/questions_test.jsonl

Prints the weights to paste into refusal.py, and leave-one-out accuracy on answerable and
unanswerable questions. Never give it a held-out set that has not been scored yet
(`questions_test.jsonl` became fitting data once its report was committed;
`questions_test2.jsonl` is held out)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

from assistant import Assistant, Settings
from assistant.answering.passages import paper_texts
from assistant.answering.plans.refusal import FEATURES, features
from assistant.evaluation import load_questions
from assistant.retrieval import Filters


def _fit(x: np.ndarray, y: np.ndarray, l2: float = 0.01, steps: int = 20000) -> np.ndarray:
    """Logistic regression by gradient descent, both classes weighted equally; returns the
    weights then the bias."""
    w = np.zeros(x.shape[1] + 1)
    xb = np.hstack([x, np.ones((len(x), 1))])
    balance = np.where(y == 1, 0.5 / y.mean(), 0.5 / (1 - y.mean()))
    for _ in range(steps):
        p = 1 / (1 + np.exp(-xb @ w))
        w -= 0.5 * (xb.T @ (balance * (p - y)) / len(y) + l2 * np.r_[w[:-1], 0])
    return w


def main(paths: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        assistant = Assistant(Settings(data_dir=Path(folder)))
        assistant.ensure_index()
        answerer = assistant.answerer
        rows, labels = [], []
        for path in paths:
            for question in load_questions(Path(path)):
                understood = answerer.understand(question.question, question.history, "extractive")
                hits = answerer.retrieve(understood, None, Filters())
                papers = paper_texts(hits, assistant.index.snapshot().papers)
                candidates = answerer.composer.candidates(understood, papers)
                rows.append(features(understood, candidates))
                labels.append(float(question.answerable))
    x, y = np.array(rows), np.array(labels)
    np.save("/tmp/refusal_xy.npy", np.hstack([x, y[:, None]]))
    for label in (1, 0):
        print("answerable" if label else "unanswerable", x[y == label].mean(axis=0).round(2))
    w = _fit(x, y)
    print("WEIGHTS =", tuple(round(float(v), 2) for v in w[:-1]), " # ", FEATURES)
    print("BIAS =", round(float(w[-1]), 2))
    held_out = []
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        wi = _fit(x[keep], y[keep], steps=5000)
        held_out.append(1 / (1 + np.exp(-(x[i] @ wi[:-1] + wi[-1]))) >= 0.5)
    held_out = np.array(held_out)
    print(
        f"leave-one-out: answered {held_out[y == 1].mean():.3f} of answerable, "
        f"refused {1 - held_out[y == 0].mean():.3f} of unanswerable"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
