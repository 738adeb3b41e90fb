"""Whether the retrieved papers answer the question at all: a probability from a logistic
model over a few signals of the best candidates, fitted on questions labelled answerable
or not (`bench/fit_refusal.py`; see the constants below for the data)."""

from __future__ import annotations

import math

import numpy as np

from ..question import Question
from .candidates import Candidates

FEATURES = ("relevance", "answer_evidence", "unfamiliar_share", "asks_for_list", "asks_which_paper")
# Fitted by `python -m bench.fit_refusal eval/questions.jsonl eval/questions_dev.jsonl
# eval/questions_test.jsonl ... eval/questions_test14.jsonl --threshold 0.46` (904
# questions, 175 unanswerable; both classes weighted equally, the bias moved so that 0.5
# here is 0.46 of the balanced fit). With each of the sixteen sets held out in turn: 0.920
# of answerable questions answered and 0.794 of unanswerable refused; on sets 8 to 14 so
# held out, 251 of 280 answered and 53 of 70 refused, against 241 and 54 for the previous
# weights (fitted on the sets up to 7, so never shown those).
WEIGHTS = (1.5, 2.47, -1.15, 0.48, -0.24)
BIAS = -0.95


def features(question: Question, candidates: Candidates) -> np.ndarray:
    """The signals the decision weighs, each in [0, 1]: the best sentence's relevance to
    the question; the answer model's highest chance that a sentence answers (times that
    relevance when the question asks which papers do something); the share of the
    question's content no indexed paper mentions (a topic the collection lacks); and
    whether it asks for a list, or for the one paper that does something."""
    best = candidates.best
    if best is None:
        return np.zeros(len(FEATURES))
    chance = max(candidate.answers for candidate in candidates.all)
    listing = question.intent == "list"
    which_paper = question.which_paper and not listing
    # There the chance alone rewards a sentence's shape: "We study ..." gets a fair chance
    # of answering "Which papers study speaker diarization?" whatever it studies.
    evidence = best.relevance * chance if listing or which_paper else chance
    return np.array(
        [best.relevance, evidence, question.unfamiliar_share, float(listing), float(which_paper)]
    )


def answerable(question: Question, candidates: Candidates) -> float:
    """The probability that `candidates` answer `question`."""
    if not candidates:
        return 0.0
    total = float(np.dot(WEIGHTS, features(question, candidates))) + BIAS
    return 1.0 / (1.0 + math.exp(-total))
