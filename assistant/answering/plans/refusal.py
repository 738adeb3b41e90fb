"""Whether the retrieved papers answer the question at all: a probability from a logistic
model over a few signals of the best candidates, fitted on questions labelled answerable
or not (`bench/fit_refusal.py`; see the constants below for the data)."""

from __future__ import annotations

import math

import numpy as np

from ...corpus import Paper
from ...lexicon import Mentions, names
from ..question import Question
from .candidates import Candidates

FEATURES = (
    "relevance",
    "answer_evidence",
    "unfamiliar_share",
    "asks_for_list",
    "asks_which_paper",
    "unmentioned_name",
    "part_evidence",
)
# Fitted by `python -m bench.fit_refusal eval/questions*.jsonl` (every set but the held-out
# test23; 1,344 questions, 255 unanswerable) `--threshold 0.51`: both classes weighted
# equally, the bias moved so that 0.5 here is 0.51 of the balanced fit. With each set held
# out in turn, 1,031 of 1,089 answerable questions answered and 201 of 255 unanswerable
# refused, against 1,031 and 192 for the six signals before `part_evidence` (fitted the
# same way).
WEIGHTS = (1.24, 1.91, -0.68, 0.46, -0.28, -1.97, 0.99)
BIAS = -0.77


def features(question: Question, candidates: Candidates) -> np.ndarray:
    """The signals the decision weighs, each in [0, 1]: the best sentence's relevance to
    the question; the answer model's highest chance that a sentence answers (times that
    relevance when the question asks which papers do something); the share of the
    question's content no indexed paper mentions (a topic the collection lacks); whether
    it asks for a list, or for the one paper that does something; whether it names
    something the papers it would be answered from never mention; and, when it asks several
    things, the answer model's highest chance that a sentence answers one of them."""
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
        [
            best.relevance,
            evidence,
            question.unfamiliar_share,
            float(listing),
            float(which_paper),
            float(names_unmentioned(question, candidates)),
            max((max(c.answers_parts) for c in candidates.all if c.answers_parts), default=0.0),
        ]
    )


def names_unmentioned(question: Question, candidates: Candidates) -> bool:
    """Whether the question names a method, model, dataset or metric that the paper it would
    be answered from (every retrieved paper, for a list or comparison) never mentions in its
    title, abstract, authors or venue: a near miss asks for a detail the abstract lacks ("its
    accuracy on CIFAR-10?")."""
    asked = names(question.search_text, min_letters=2)
    if not asked or candidates.best_fit is None:
        return False
    papers = candidates.papers if question.is_multi_paper else [candidates.best_fit.paper]
    mentions = Mentions(" ".join(_described(p.paper) for p in papers))
    return not all(mentions.of(name) for name in asked)


def _described(paper: Paper) -> str:
    return " ".join([paper.title_and_abstract, *paper.authors, paper.venue or ""])


def answerable(question: Question, candidates: Candidates) -> float:
    """The probability that `candidates` answer `question`."""
    if not candidates:
        return 0.0
    total = float(np.dot(WEIGHTS, features(question, candidates))) + BIAS
    return 1.0 / (1.0 + math.exp(-total))
