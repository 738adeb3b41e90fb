"""Whether the retrieved papers answer the question at all: a probability from a logistic
model over a few signals of the best candidates, fitted on questions labelled answerable
or not (`bench/fit_refusal.py`; see the constants below for the data)."""

from __future__ import annotations

import math

import numpy as np

from ..question import Question
from .candidates import Candidates

FEATURES = ("relevance", "similarity", "unfamiliar_share")
# Fitted by `python -m bench.fit_refusal eval/questions_dev.jsonl eval/questions.jsonl
# eval/questions_test.jsonl` (195 questions, 39 unanswerable; both classes weighted
# equally; leave-one-out there: 0.76 of answerable answered, 0.85 of unanswerable refused).
# Chosen by 10-fold cross-validation over subsets of eleven signals (also name and
# asked-for coverage, dense and keyword retrieval scores, the gap to the second paper):
# with the named-paper rule of `plans/__init__.py`, 0.85 answered and 0.85 refused on
# average over four fold splits, against 0.85 and 0.74 for the previous three signals.
WEIGHTS = (2.42, 0.82, -1.41)
BIAS = -1.27


def features(question: Question, candidates: Candidates) -> np.ndarray:
    """The signals the decision weighs, each in [0, 1]: the best sentence's relevance to
    the question, the closest sentence's embedding similarity to it, and the share of the
    question's content no indexed paper mentions (a topic the collection lacks)."""
    best = candidates.best
    if best is None:
        return np.zeros(len(FEATURES))
    similarity = float(candidates.similarity().max())
    return np.array([best.relevance, similarity, question.unfamiliar_share])


def answerable(question: Question, candidates: Candidates) -> float:
    """The probability that `candidates` answer `question`."""
    if not candidates:
        return 0.0
    total = float(np.dot(WEIGHTS, features(question, candidates))) + BIAS
    return 1.0 / (1.0 + math.exp(-total))
