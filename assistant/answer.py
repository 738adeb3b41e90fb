"""The answer a user gets: sentences, each with citations pointing at exact snippets."""

from __future__ import annotations

from pydantic import BaseModel, Field

from .corpus import short_authors
from .retrieval import Hit, PaperRef

REFUSAL = "The indexed papers do not answer this."
JSON_KEYS = frozenset(
    {"question", "answer", "refused", "backend", "sentences", "citations"}
    | {"dropped_sentences", "timings_ms"}
)
CITATION_KEYS = frozenset(
    {"n", "paper_id", "title", "authors", "venue", "url", "snippet", "start", "end"}
)


class Citation(PaperRef):
    """Source `[n]`: a paper and the sentence(s) of its abstract that support the answer.

    `start`/`end` is the character span of `snippet` in that paper's abstract."""

    n: int
    snippet: str
    start: int
    end: int


class AnswerSentence(BaseModel):
    """One sentence of the answer and the numbers of the citations that support it."""

    text: str
    citations: list[int]


class Answer(BaseModel):
    """A verified answer (or a refusal) with its citations, sources and timings.

    `raw_answer` is what the backend generated before grounding; `note` says, when it
    happens, that the answer fell back to extractive sentences and why."""

    question: str
    answer: str
    refused: bool
    backend: str
    sentences: list[AnswerSentence] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    dropped_sentences: int = 0
    timings_ms: dict[str, float] = Field(default_factory=dict)
    raw_answer: str = ""
    standalone_question: str | None = None
    note: str | None = None
    sources: list[Hit] = Field(default_factory=list)

    def to_json(self) -> dict:
        """The stable JSON contract of `citeqa ask --json`."""
        return {
            "question": self.question,
            "answer": self.answer,
            "refused": self.refused,
            "backend": self.backend,
            "sentences": [sentence.model_dump() for sentence in self.sentences],
            "citations": [
                {"n": citation.n, **citation.model_dump(exclude={"display_title", "n"})}
                for citation in self.citations
            ],
            "dropped_sentences": self.dropped_sentences,
            "timings_ms": {
                key: round(self.timings_ms.get(key, 0.0), 2)
                for key in ("retrieve", "generate", "total")
            },
        }

    def to_markdown(self) -> str:
        """The answer with `[n]` markers followed by a numbered reference list."""
        lines = [self.answer, ""]
        if self.citations:
            lines.append("**References**")
            lines.append("")
        for citation in self.citations:
            authors = short_authors(citation.authors)
            link = f" <{citation.url}>" if citation.url else ""
            venue = f" ({citation.venue})" if citation.venue else ""
            lines.append(f"[{citation.n}] {citation.display_title}. {authors}{venue}.{link}")
            lines.append(f"    > {citation.snippet}")
        return "\n".join(lines).rstrip() + "\n"


def contract_problems(data: dict) -> list[str]:
    """What is wrong with an answer in the JSON contract of `citeqa ask --json` (empty
    when nothing is): the exact keys, citations numbered 1..n, every sentence of a
    non-refused answer cited, every cited number listed."""
    problems = []
    if set(data) != JSON_KEYS:
        problems.append(f"keys {sorted(set(data) ^ JSON_KEYS)} differ from the contract")
        return problems
    numbers = [citation.get("n") for citation in data["citations"]]
    if numbers != list(range(1, len(numbers) + 1)):
        problems.append(f"citations are numbered {numbers}")
    problems += [
        f"citation {c.get('n')} has keys {sorted(set(c) ^ CITATION_KEYS)} differing"
        for c in data["citations"]
        if set(c) != CITATION_KEYS
    ]
    if data["refused"]:
        return problems
    if not data["sentences"]:
        problems.append("an answer without sentences")
    for sentence in data["sentences"]:
        if not sentence["citations"]:
            problems.append(f"uncited sentence {sentence['text'][:60]!r}")
        elif not set(sentence["citations"]) <= set(numbers):
            problems.append(f"sentence cites {sentence['citations']}, not all listed")
    return problems
