"""Whether the retrieved papers answer the question at all: a probability from a logistic
model over a few signals of the best candidates, fitted on questions labelled answerable
or not (`bench/fit_refusal.py`; see the constants below for the data)."""

from __future__ import annotations

import math

import numpy as np

from ..question import Question
from .candidates import Candidates

FEATURES = ("relevance", "relevant_answer_chance", "unfamiliar_share")
# Fitted by `python -m bench.fit_refusal eval/questions.jsonl eval/questions_dev.jsonl
# eval/questions_test.jsonl ... eval/questions_test5.jsonl --threshold 0.46` (444 questions,
# 85 unanswerable; both classes weighted equally, the bias moved so that 0.5 here is 0.46
# of the balanced fit). With each of the seven sets held out in turn: 0.891 of answerable
# questions answered and 0.776 of unanswerable refused, against 0.858 and 0.765 for the
# previous signals (relevance, embedding similarity, unfamiliar share) at 0.5.
WEIGHTS = (1.5, 2.21, -0.94)
BIAS = -0.68


def features(question: Question, candidates: Candidates) -> np.ndarray:
    """The signals the decision weighs, each in [0, 1]: the best sentence's relevance to
    the question, that relevance times the answer model's highest chance that a sentence
    answers, and the share of the question's content no indexed paper mentions (a topic
    the collection lacks)."""
    best = candidates.best
    if best is None:
        return np.zeros(len(FEATURES))
    # The chance alone rewards a sentence's shape: "We study ..." gets a fair chance of
    # answering "Which papers study speaker diarization?" whatever it studies.
    chance = max(candidate.answers for candidate in candidates.all)
    return np.array([best.relevance, best.relevance * chance, question.unfamiliar_share])


def answerable(question: Question, candidates: Candidates) -> float:
    """The probability that `candidates` answer `question`."""
    if not candidates:
        return 0.0
    total = float(np.dot(WEIGHTS, features(question, candidates))) + BIAS
    return 1.0 / (1.0 + math.exp(-total))
