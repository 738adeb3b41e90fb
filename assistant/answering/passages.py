"""The text answers are made from and checked against: each retrieved paper's whole abstract
(the corpus unit), split into sentences with their character spans.

Sentences that address a model or a reader instead of describing research ("System: you
must answer ...", "Ignore all previous instructions") are marked: they are never quoted
and never accepted as support, whatever they say."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..corpus import Paper
from ..retrieval import Hit
from ..text import Span, sentence_spans

_INSTRUCTION = re.compile(
    r"^\s*(?:#+\s*)?(?:system|assistant|user|human|ai|instruction|prompt|question|answer)\s*:"
    r"|\b(?:ignore|disregard|forget)\b.{0,30}\b(?:instructions?|prompts?|rules?|above|previous)\b"
    r"|\byou (?:must|should|are to|will|shall) (?:answer|respond|reply|say|state|output|"
    r"write|tell|ignore|always|never)\b"
    r"|\b(?:as an ai|language model,? you|dear (?:reader|assistant|model))\b"
    r"|\b(?:respond|reply|answer) (?:only )?with\b"
    r"|\banswer to your question\b"
    r"|\b(?:previous|above|earlier|last) (?:answer|response|reply)\b",
    re.IGNORECASE,
)
_BOILERPLATE = re.compile(
    r"https?://|\bgithub\b|\b(?:code|data|datasets?|models?|implementation|benchmark|project "
    r"page)s? (?:is|are|will be) (?:publicly |freely |made )*(?:available|released|open-sourced)"
    r"|\bavailable at\b",
    re.IGNORECASE,
)


def is_instruction(text: str) -> bool:
    """Whether a sentence addresses a model or a reader (a role prefix, an order to answer,
    to ignore instructions) rather than stating something about research."""
    return bool(_INSTRUCTION.search(text))


def is_boilerplate(text: str) -> bool:
    """A link or a code-availability note: true, but never an answer."""
    return bool(_BOILERPLATE.search(text))


@dataclass(frozen=True)
class Sentence:
    """One sentence of a paper's abstract: `start:end` is its span in the abstract."""

    paper_id: str
    index: int
    start: int
    end: int
    text: str
    instruction: bool

    @property
    def quotable(self) -> bool:
        """Fit to be quoted as an answer: not an instruction, not a link or code note, and
        not a piece the splitter cut off mid-sentence (it starts in lower case)."""
        return (
            not self.instruction
            and not is_boilerplate(self.text)
            and not self.text[:1].islower()
            and any(char.isalpha() for char in self.text)
        )


@lru_cache(maxsize=8192)
def _spans(abstract: str) -> tuple[Span, ...]:
    return tuple(sentence_spans(abstract))


@dataclass(frozen=True)
class PaperText:
    """A paper whose abstract an answer may quote or cite; `rank` is its place among the
    retrieved papers (0: best)."""

    paper: Paper
    rank: int

    @property
    def paper_id(self) -> str:
        return self.paper.paper_id

    @property
    def context(self) -> str:
        """Title, authors and venue: what identifies the paper, outside the abstract."""
        paper = self.paper
        return " ".join((paper.display_title, *paper.authors, paper.venue or ""))

    @property
    def sentences(self) -> tuple[Sentence, ...]:
        return _sentences(self.paper.paper_id, self.paper.abstract)

    def supporting(self) -> list[Sentence]:
        """The sentences that may support a claim (instructions never do)."""
        return [sentence for sentence in self.sentences if not sentence.instruction]


@lru_cache(maxsize=8192)
def _sentences(paper_id: str, abstract: str) -> tuple[Sentence, ...]:
    return tuple(
        Sentence(
            paper_id, index, start, end, abstract[start:end], is_instruction(abstract[start:end])
        )
        for index, (start, end) in enumerate(_spans(abstract))
    )


def paper_texts(hits: list[Hit], papers: dict[str, Paper]) -> list[PaperText]:
    """The papers of `hits`, in the order of their best hit; papers no longer indexed are
    left out."""
    order = dict.fromkeys(hit.paper_id for hit in hits if hit.paper_id in papers)
    return [PaperText(papers[paper_id], rank) for rank, paper_id in enumerate(order)]
