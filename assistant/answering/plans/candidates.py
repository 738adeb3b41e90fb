"""The sentences an extractive answer may quote, scored once per question."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from ..claims import Claim, Evidence
from ..cross_encoder import CrossEncoder, passage_text
from ..passages import PaperText, Sentence
from ..question import Question
from ..relevance import NO_FIGURE, RelevanceScorer

# "We propose X", "this paper introduces": the sentence that says what a paper does.
CONTRIBUTION = re.compile(
    r"\b(?:we|this (?:paper|work|study)|our (?:work|method|approach|paper|study)|here)\b[^.]*?\b"
    r"(?:propose|introduce|present|develop|design|show|prove|find|establish|demonstrate|"
    r"study|analy[sz]e|investigate|provide|derive|formulate|explore|characteri[sz]e|address|"
    r"tackle|overcome|mitigate)"
    r"|\b(?:is|are) (?:a|an) (?:new|novel|simple|general)\b",
    re.IGNORECASE,
)
# "However, ...", "remains a challenge": a sentence that says what is wrong or missing.
PROBLEM = re.compile(
    r"\b(?:however|challenge|challenging|problem|limited|limitation|remains?|lack|difficult|"
    r"struggle|costly|expensive|bottleneck|open question|poorly understood|unclear|hinder|"
    r"unfortunately|suffers?|fails?)",
    re.IGNORECASE,
)

# The answer model's weight against relevance when choosing the sentence that answers.
# Chosen on the tuning question sets (eval/questions*.jsonl but _test4): the top-ranked
# sentence holds a key fact for 121 of 200 single-paper questions by relevance alone, 132
# by the answer model alone, 138 / 143 / 134 with weights 1 / 0.5 / 2.
ANSWER_WEIGHT = 0.5
# Only the sentences this high by relevance are read by the answer model (about 4 ms a
# sentence on 2 CPUs): on the same questions, the top sentence holds a key fact for 142 of
# 200 with 8, 139 with 4, 143 with all (33 on average). On the 24 tuning sets (all but
# _test24), 16 found 900.6 key facts of 1,149 against 897.6 with 8 and 899.0 with 12:
# 7 fewer paraphrases refused, comparisons 5 better and 2 worse.
ANSWER_CANDIDATES = 16
# Of each paper a comparison or summary covers, this many of its most relevant sentences are
# read by the answer model too.
PAPER_CANDIDATES = 4
# Choosing the one paper that answers, each place a paper stands below the first in
# retrieval costs its sentences this much fit: on the single-paper questions of the tuning
# sets (eval/questions*.jsonl but _test7), the best sentence comes from the gold paper for
# 233 of 241 with 0.15 (222 with 0, 230 with 0.1, 232 with 0.2; paraphrases 30 -> 40 of 48).
RANK_PENALTY = 0.15
# Asked several things, the reader gets the answering paper's sentence that the answer
# model gives at least this chance of answering each.
PART_CHANCE = 0.5


@dataclass(frozen=True)
class Candidate:
    """A quotable sentence, its paper, how well it addresses the question (`relevance`:
    words and embedding) and the answer model's probability that it answers it
    (`answers`), and each thing it asks (`answers_parts`)."""

    sentence: Sentence
    paper: PaperText
    relevance: float
    answers: float = 0.0
    answers_parts: tuple[float, ...] = ()

    @property
    def fit(self) -> float:
        """How well the sentence answers the question: its relevance plus the answer
        model's probability, weighted by `ANSWER_WEIGHT`."""
        return self.relevance + ANSWER_WEIGHT * self.answers

    @property
    def standing(self) -> float:
        """`fit`, less `RANK_PENALTY` for each place its paper stands below the first."""
        return self.fit - RANK_PENALTY * self.paper.rank

    @property
    def contributes(self) -> bool:
        return bool(CONTRIBUTION.search(self.sentence.text))

    @property
    def states_problem(self) -> bool:
        return bool(PROBLEM.search(self.sentence.text))

    def claim(self, heading: str | None = None) -> Claim:
        sentence = self.sentence
        evidence = Evidence(sentence.paper_id, sentence.start, sentence.end, self.relevance)
        return Claim(sentence.text, (evidence,), heading=heading)


class Candidates:
    """Every quotable sentence of the papers, with its relevance to the question."""

    def __init__(
        self,
        question: Question,
        papers: list[PaperText],
        scorer: RelevanceScorer,
        answer_model: CrossEncoder | None = None,
    ):
        self.question = question
        self.papers = papers
        pairs = [(s, p) for p in papers for s in p.sentences if s.quotable]
        scores = scorer.score(
            question,
            [s.text for s, _ in pairs],
            [p.context for _, p in pairs],
            [p.paper.abstract for _, p in pairs],
        )
        self.answer_model = answer_model
        unread = (0.0,) * len(question.parts)
        self.all = [
            Candidate(s, p, float(r), answers_parts=unread)
            for (s, p), r in zip(pairs, scores, strict=True)
        ]
        self._read: set[int] = set()
        self._read_answers([int(i) for i in np.argsort(-scores)[:ANSWER_CANDIDATES]])
        if papers:
            top = min(papers, key=lambda p: p.rank)
            self.read_papers([top.paper_id], per_paper=None)

    def _read_answers(self, indices: list[int]) -> None:
        """Have the answer model read the candidates at `indices` (once each) for the
        question and each of its parts."""
        indices = [i for i in indices if i not in self._read]
        if self.answer_model is None or not indices:
            return
        self._read.update(indices)
        question = self.question
        read = [self.all[i] for i in indices]
        passages = [passage_text(c.paper.paper.display_title, c.sentence.text) for c in read]
        chances = np.array(
            [
                self.answer_model.probabilities([(text, passage) for passage in passages])
                for text in [question.standalone, *question.parts]
            ]
        )
        if question.wants_number:
            chances *= [1.0 if question.gives_figure(c.sentence.text) else NO_FIGURE for c in read]
        for column, i in enumerate(indices):
            answers = chances[:, column]
            self.all[i] = replace(
                self.all[i], answers=float(answers[0]), answers_parts=tuple(map(float, answers[1:]))
            )

    def read_papers(self, paper_ids: list[str], per_paper: int | None = PAPER_CANDIDATES) -> None:
        """Have the answer model read each paper's `per_paper` most relevant sentences too
        (None: all of them): the question's closest sentences may all come from one of the
        papers it compares."""
        for paper_id in paper_ids:
            own = [i for i, c in enumerate(self.all) if c.sentence.paper_id == paper_id]
            own.sort(key=lambda i: self.all[i].relevance, reverse=True)
            self._read_answers(own[:per_paper])

    def __bool__(self) -> bool:
        return bool(self.all)

    @cached_property
    def best(self) -> Candidate | None:
        return max(self.all, key=lambda c: c.relevance, default=None)

    def answering_parts(self, paper_id: str) -> list[Candidate]:
        """For a question that asks several things (`Question.parts`), the paper's sentence
        likeliest to answer each, when the answer model gives it at least `PART_CHANCE`;
        a sentence that answers two parts is listed once."""
        own = self.of(paper_id)
        best = [
            max(own, key=lambda c: c.answers_parts[part])
            for part in range(len(self.question.parts))
        ]
        answering = [c for part, c in enumerate(best) if c.answers_parts[part] >= PART_CHANCE]
        return list({id(c): c for c in answering}.values())

    def of(self, paper_id: str) -> list[Candidate]:
        """The candidates of one paper, in abstract order."""
        return [c for c in self.all if c.sentence.paper_id == paper_id]

    def first_contribution(self, paper_id: str) -> Candidate | None:
        """The first sentence of the paper that says what it does."""
        return next((c for c in self.of(paper_id) if c.contributes), None)

    def paper_relevance(self) -> dict[str, float]:
        """Each paper's best sentence relevance."""
        best: dict[str, float] = {}
        for candidate in self.all:
            paper_id = candidate.sentence.paper_id
            best[paper_id] = max(best.get(paper_id, 0.0), candidate.relevance)
        return best

    @cached_property
    def best_fit(self) -> Candidate | None:
        """The candidate that best answers the question (`Candidate.standing`)."""
        return max(self.all, key=lambda c: c.standing, default=None)

    def ranked(self, bonus=None) -> list[Candidate]:
        """The candidates best first, by standing plus `bonus(candidate)`."""
        key = (lambda c: c.standing + bonus(c)) if bonus else (lambda c: c.standing)
        return sorted(self.all, key=key, reverse=True)
