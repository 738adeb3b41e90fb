"""The evaluation sets: questions with gold papers and key facts, labelled claim/passage
pairs that measure a judge, and labelled generated answers that measure the verifier."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from ..errors import SettingsError


class EvalQuestion(BaseModel):
    """One row of `eval/questions.jsonl`.

    `key_facts` lists the facts a correct answer states, each as its acceptable wordings."""

    id: str
    type: str
    question: str
    history: list[dict[str, str]] = Field(default_factory=list)
    gold_papers: list[str] = Field(default_factory=list)
    key_facts: list[list[str]] = Field(default_factory=list)
    answerable: bool


class JudgePair(BaseModel):
    """One row of `eval/judge_pairs.jsonl`: does `passage` support `claim`?"""

    id: str
    claim: str
    passage: str
    supported: bool
    kind: str = ""


def load_questions(path: Path) -> list[EvalQuestion]:
    """The questions of a JSONL file, validated."""
    return [EvalQuestion.model_validate_json(line) for line in _lines(path)]


def load_judge_pairs(path: Path) -> list[JudgePair]:
    """The labelled claim/passage pairs of a JSONL file, validated."""
    return [JudgePair.model_validate_json(line) for line in _lines(path)]


def _lines(path: Path) -> list[str]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise SettingsError(f"cannot read {path}: {exc.strerror}") from None
    return [line for line in text.splitlines() if line.strip()]


class LabelledSentence(BaseModel):
    """One sentence of a labelled answer: supported by what it cites, or not, and how not."""

    text: str
    supported: bool
    style: str | None = None
    kind: str | None = None
    true_paper: int | None = None
    note: str = ""


class LabelledAnswer(BaseModel):
    """One answer to a question of `eval/answers_*.jsonl`: `faithful` or an unfaithful
    variant, sentence by sentence."""

    variant: str
    sentences: list[LabelledSentence]

    @property
    def faithful(self) -> bool:
        return self.variant == "faithful"

    @property
    def text(self) -> str:
        return " ".join(sentence.text for sentence in self.sentences)


class AnswerSetQuestion(BaseModel):
    """A question, the papers its answers cite (`[n]` is `papers[n - 1]`) and its answers."""

    id: str
    question: str
    papers: list[str]
    answers: list[LabelledAnswer]


def load_answer_set(path: Path) -> list[AnswerSetQuestion]:
    """The labelled answers of a JSONL file, validated."""
    return [AnswerSetQuestion.model_validate_json(line) for line in _lines(path)]
