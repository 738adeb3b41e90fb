"""Judges decide whether a passage supports a claim: `LocalJudge` (citeqa's own offline
scorer) or `LLMJudge` (an OpenAI-compatible model, RAGAS-style). A judge's own quality is
measured on labelled pairs."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ..answering.support import SupportScorer
from ..embeddings import Embedder
from ..errors import SettingsError
from ..openai_api import ApiEndpoint
from ..prompts import render
from ..settings import Settings
from .dataset import JudgePair

Pair = tuple[str, str]
"""A (claim, passage) pair put to a judge."""


class Judge(Protocol):
    """Decides whether passages support claims."""

    name: str

    def supports(self, pairs: list[Pair]) -> list[bool]:
        """One verdict per `(claim, passage)` pair, in order."""
        ...


class LocalJudge:
    """citeqa's own offline entailment scorer (`SupportScorer`): deterministic and free."""

    name = "local"

    def __init__(self, embedder: Embedder | None = None) -> None:
        self.scorer = SupportScorer(embedder)

    def supports(self, pairs: list[Pair]) -> list[bool]:
        return [verdict.supported for verdict in self.scorer.check_many(pairs)]


_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")
_VERDICT = re.compile(r"^\s*(\d+)\s*[:.)-]\s*(yes|no)\b", re.IGNORECASE | re.MULTILINE)


class LLMJudge:
    """An OpenAI-compatible model as judge, RAGAS-style: the claim is split into atomic
    statements (`prompts/judge_decompose.txt`), then all of them are checked against the
    passage in one call (`prompts/judge_verify.txt`). Supported when every statement is."""

    name = "llm"

    def __init__(self, endpoint: ApiEndpoint, max_tokens: int = 256) -> None:
        self.endpoint = endpoint
        self.max_tokens = max_tokens
        self._client = endpoint.client()
        self._statements: dict[str, list[str]] = {}

    @classmethod
    def from_settings(cls, settings: Settings) -> LLMJudge:
        """The judge configured in `[judge]`, each unset field taken from `[llm]`."""
        judge, llm = settings.judge, settings.llm
        endpoint = ApiEndpoint(
            base_url=judge.base_url or llm.base_url,
            api_key=judge.api_key or llm.api_key,
            model=judge.model or llm.model,
            timeout=llm.timeout,
            max_retries=llm.max_retries,
        )
        return cls(endpoint)

    def supports(self, pairs: list[Pair]) -> list[bool]:
        return [self._verify(claim, passage) for claim, passage in pairs]

    def statements(self, claim: str) -> list[str]:
        """The atomic statements of `claim` (asked once per claim)."""
        if claim not in self._statements:
            reply = self._complete(render("judge_decompose", claim=claim))
            lines = (_BULLET.sub("", line).strip() for line in reply.splitlines())
            self._statements[claim] = [line for line in lines if line] or [claim]
        return self._statements[claim]

    def _verify(self, claim: str, passage: str) -> bool:
        statements = self.statements(claim)
        listing = "\n".join(f"{n}. {text}" for n, text in enumerate(statements, start=1))
        reply = self._complete(render("judge_verify", passage=passage, statements=listing))
        verdicts = {int(m.group(1)): m.group(2).lower() == "yes" for m in _VERDICT.finditer(reply)}
        return all(verdicts.get(n, False) for n in range(1, len(statements) + 1))

    def _complete(self, prompt: str) -> str:
        return self.endpoint.complete(self._client, prompt, self.max_tokens)


def make_judge(name: str, settings: Settings, embedder: Embedder | None = None) -> Judge:
    """The judge called `name`: `local` or `llm`."""
    if name == "local":
        return LocalJudge(embedder)
    if name == "llm":
        return LLMJudge.from_settings(settings)
    raise SettingsError(f"unknown judge {name!r}; choose local or llm")


@dataclass(frozen=True)
class JudgeQuality:
    """How often a judge agrees with labelled pairs; balanced accuracy is the mean of the
    true positive and true negative rates, so the class balance does not flatter it."""

    balanced_accuracy: float
    true_positive_rate: float
    true_negative_rate: float
    pairs: int


def judge_quality(judge: Judge, pairs: Sequence[JudgePair]) -> JudgeQuality:
    """Measure `judge` on labelled pairs (e.g. `eval/judge_pairs.jsonl`)."""
    verdicts = judge.supports([(pair.claim, pair.passage) for pair in pairs])
    hits = {True: [], False: []}
    for pair, verdict in zip(pairs, verdicts, strict=True):
        hits[pair.supported].append(verdict == pair.supported)
    if not hits[True] or not hits[False]:
        raise ValueError("judge quality needs both supported and unsupported pairs")
    positive, negative = (sum(hits[label]) / len(hits[label]) for label in (True, False))
    return JudgeQuality((positive + negative) / 2, positive, negative, len(pairs))
