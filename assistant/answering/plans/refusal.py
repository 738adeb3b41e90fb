"""Whether the retrieved papers answer the question at all: a probability from a logistic
model over a few signals of the best candidates, fitted on questions labelled answerable
or not (`bench/fit_refusal.py`; see the constants below for the data)."""

from __future__ import annotations

import math

import numpy as np

from ...lexicon import looks_like_name, tokens
from ..question import Question
from ..relevance import Focus
from .candidates import Candidates

FEATURES = ("relevance", "name_coverage", "asked_for")
# Fitted by `python -m bench.fit_refusal eval/questions_dev.jsonl eval/questions.jsonl`
# (133 questions, 27 of them unanswerable; both classes weighted equally). Leave-one-out
# there: 0.84 of answerable questions answered, 0.74 of unanswerable ones refused. The
# similarity and topic-coverage signals were tried and added nothing over relevance.
WEIGHTS = (2.99, 0.88, 1.42)
BIAS = -3.24


def features(question: Question, candidates: Candidates) -> np.ndarray:
    """The signals the decision weighs, each in [0, 1]: the best sentence's relevance to
    the question, the share of the names the question mentions (GPT-4, A100) that one
    paper has, and how fully the best sentence states the thing asked for."""
    best = candidates.best
    if best is None:
        return np.zeros(len(FEATURES))
    names = {w.lower() for w in tokens(question.search_text) if looks_like_name(w) and len(w) > 2}
    named = 1.0
    if names:
        texts = [f"{p.paper.title or ''} {p.paper.abstract}".lower() for p in candidates.papers]
        named = max(sum(name in text for name in names) / len(names) for text in texts)
    asked = Focus.of(question).answers_asked_for(best.sentence.text)
    return np.array([best.relevance, named, asked])


def answerable(question: Question, candidates: Candidates) -> float:
    """The probability that `candidates` answer `question`."""
    if not candidates:
        return 0.0
    total = float(np.dot(WEIGHTS, features(question, candidates))) + BIAS
    return 1.0 / (1.0 + math.exp(-total))
