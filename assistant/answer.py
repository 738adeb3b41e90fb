"""The answer a user gets: sentences, each with citations pointing at exact snippets."""

from __future__ import annotations

from pydantic import BaseModel, Field

from .corpus import short_authors
from .retrieval import Hit, PaperRef

REFUSAL = "The indexed papers do not answer this."
JSON_KEYS = frozenset(
    {"question", "answer", "refused", "backend", "sentences", "citations", "understood"}
    | {"dropped_sentences", "timings_ms", "note"}
)
SENTENCE_KEYS = frozenset({"text", "display", "citations", "kind", "heading"})
CITATION_KEYS = frozenset(
    {"n", "paper_id", "title", "authors", "venue", "url", "snippet", "display_snippet"}
    | {"start", "end"}
)


class Citation(PaperRef):
    """Source `[n]`: a paper and the sentence(s) of its abstract that support the answer.

    `start`/`end` is the character span of `snippet` in that paper's abstract;
    `display_snippet` is the snippet with LaTeX made readable."""

    n: int
    snippet: str
    display_snippet: str
    start: int
    end: int


class AnswerSentence(BaseModel):
    """One sentence of the answer and the numbers of the citations that support it.

    `kind` is `claim` (verified against its citations) or `framing` (made from a template
    and true by construction, such as the count before a list); `heading` is the paper a
    list line is about; `display` is `text` with LaTeX made readable."""

    text: str
    display: str
    citations: list[int]
    kind: str = "claim"
    heading: str | None = None


class Answer(BaseModel):
    """A verified answer (or a refusal) with its citations, sources and timings.

    `raw_answer` is what the backend generated before verification; `note` says, when it
    happens, that the answer fell back to extractive sentences and why; `understood` is
    what the question was taken to ask (intent, authors, venue, year, papers)."""

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
    understood: dict = Field(default_factory=dict)
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
            "understood": self.understood,
            "note": self.note,
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
            lines.append(f"[{citation.n}] {reference(citation)}")
            lines.append(f"    > {citation.display_snippet}")
        return "\n".join(lines).rstrip() + "\n"


def reference(paper: PaperRef) -> str:
    """'Title. A, B, C et al. (Venue). <link>' — one line naming a cited paper."""
    authors = short_authors(paper.authors).removesuffix(".")
    venue = f" ({paper.venue})" if paper.venue else ""
    link = f" <{paper.url}>" if paper.url else ""
    return f"{paper.display_title}. {authors}{venue}.{link}"


def read_as(understood: dict) -> str:
    """What `Answer.understood` says the question asks, in a few words: 'list question · by
    Yann LeCun · ICML 2024' ('' for a plain fact question that names nothing)."""
    intent = understood.get("intent")
    parts = [] if intent in (None, "fact") else [f"{intent.replace('yes_no', 'yes/no')} question"]
    if understood.get("authors"):
        parts.append("by " + ", ".join(understood["authors"]))
    when = " ".join(understood[key] for key in ("venue", "year") if understood.get(key))
    if when:
        parts.append(when)
    if understood.get("names"):
        parts.append("about " + ", ".join(understood["names"]))
    return " · ".join(parts)


def answer_text(sentences: list[AnswerSentence]) -> str:
    """The answer as one text: sentences with their `[n]` markers; list lines start on a
    line of their own with their paper's title."""
    parts = []
    for sentence in sentences:
        marked = sentence.display + "".join(f"[{n}]" for n in sentence.citations)
        parts.append(f"\n- {sentence.heading}: {marked}" if sentence.heading else marked)
    return " ".join(parts).replace(" \n", "\n").strip()


def contract_problems(data: dict) -> list[str]:
    """What is wrong with an answer in the JSON contract of `citeqa ask --json` (empty
    when nothing is): the exact keys, citations numbered 1..n, every claim of a
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
    problems += [
        f"sentence has keys {sorted(set(s) ^ SENTENCE_KEYS)} differing"
        for s in data["sentences"]
        if set(s) != SENTENCE_KEYS
    ]
    if data["refused"]:
        return problems
    if not any(sentence["kind"] == "claim" for sentence in data["sentences"]):
        problems.append("an answer without claims")
    for sentence in data["sentences"]:
        if sentence["kind"] == "claim" and not sentence["citations"]:
            problems.append(f"uncited claim {sentence['text'][:60]!r}")
        elif not set(sentence["citations"]) <= set(numbers):
            problems.append(f"sentence cites {sentence['citations']}, not all listed")
    return problems
