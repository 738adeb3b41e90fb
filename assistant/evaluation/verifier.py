"""How well verification keeps faithful sentences and removes unfaithful ones, measured on
labelled generated answers (`eval/answers_*.jsonl`).

Each labelled answer goes through exactly what a generated answer goes through in
`Assistant.ask`: verification against the papers it cites (source `n` is the row's
`papers[n - 1]`), the per-sentence relevance gate, and the check that what is left makes
an answer (otherwise the extractive answer would replace it)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from ..answering.claims import parse_citations, read_draft
from ..answering.passages import PaperText
from ..answering.question import analyse
from ..answering.verify import Verdict
from ..assistant import Assistant
from .dataset import AnswerSetQuestion, LabelledSentence

VERIFIER_METRICS = (
    "faithful_kept",
    "unfaithful_removed",
    "faithful_answers_generated",
    "removed_wrong_number",
    "removed_wrong_entity",
    "removed_negation",
    "removed_unsupported_addition",
    "removed_wrong_citation",
    "removed_overgeneralisation",
)
KINDS = (
    "wrong_number",
    "wrong_entity",
    "negation",
    "unsupported_addition",
    "wrong_citation",
    "overgeneralisation",
)


@dataclass(frozen=True)
class SentenceOutcome:
    """One labelled sentence and what verification did with it: `kept` means it reached
    the answer, `correctly_cited` that it then cites only papers that support it (a
    wrong-citation sentence re-attached to the paper that says it is handled)."""

    question: str
    variant: str
    text: str
    supported: bool
    kind: str | None
    style: str | None
    kept: bool
    correctly_cited: bool
    reason: str

    @property
    def handled(self) -> bool:
        """Faithful: kept and correctly cited; unfaithful: removed, or re-cited to the paper
        that supports it."""
        if self.supported:
            return self.kept and self.correctly_cited
        return not self.kept or self.correctly_cited


@dataclass(frozen=True)
class AnswerOutcome:
    question: str
    variant: str
    faithful: bool
    returned_as_generated: bool
    verify_ms: float


@dataclass
class VerifierReport:
    """The verifier's results on one labelled answer set."""

    answers_file: str
    verifier: str
    sentences: list[SentenceOutcome] = field(default_factory=list)
    answers: list[AnswerOutcome] = field(default_factory=list)

    def metrics(self) -> dict[str, float | int | None]:
        """Faithful sentences kept, unfaithful removed (overall and by kind), faithful
        answers returned as generated, and the median verification time."""
        faithful = [s for s in self.sentences if s.supported]
        unfaithful = [s for s in self.sentences if not s.supported]
        generated = [a for a in self.answers if a.faithful]
        result: dict[str, float | int | None] = {
            "faithful_sentences": len(faithful),
            "unfaithful_sentences": len(unfaithful),
            "faithful_kept": _share(s.handled for s in faithful),
            "unfaithful_removed": _share(s.handled for s in unfaithful),
            "faithful_answers_generated": _share(a.returned_as_generated for a in generated),
            "verify_ms_p50": statistics.median(a.verify_ms for a in self.answers)
            if self.answers
            else None,
        }
        for kind in KINDS:
            of_kind = [s for s in unfaithful if s.kind == kind]
            result[f"removed_{kind}"] = _share(s.handled for s in of_kind)
        return result

    def to_json(self) -> dict:
        return {
            "answers_file": self.answers_file,
            "verifier": self.verifier,
            "metrics": self.metrics(),
            "sentences": [asdict(sentence) for sentence in self.sentences],
            "answers": [asdict(answer) for answer in self.answers],
        }


def _share(flags) -> float | None:
    values = [bool(flag) for flag in flags]
    return sum(values) / len(values) if values else None


def evaluate_verifier(
    assistant: Assistant, rows: Sequence[AnswerSetQuestion], answers_file: str = ""
) -> VerifierReport:
    """Run every labelled answer of `rows` through verification and the relevance gate."""
    answerer = assistant.answerer
    assistant.ensure_index()
    papers = assistant.index.snapshot().papers
    report = VerifierReport(answers_file, answerer.verifier.name)
    for row in rows:
        texts = [PaperText(papers[paper_id], rank) for rank, paper_id in enumerate(row.papers)]
        question = analyse(row.question, row.question, answerer.catalog())
        for labelled in row.answers:
            started = time.perf_counter()
            verification = answerer.verify(question, labelled.text, texts)
            kept = answerer.addressing(question, verification.claims, texts)
            generated = answerer.acceptable(question, kept, texts)
            verify_ms = (time.perf_counter() - started) * 1000
            kept_ids = {id(claim) for claim in kept}
            by_text = {verdict.sentence.text: verdict for verdict in verification.verdicts}
            for sentence in labelled.sentences:
                verdict = _verdict(sentence.text, len(texts), by_text, kept_ids)
                claim = verdict.claim if verdict and id(verdict.claim) in kept_ids else None
                report.sentences.append(
                    SentenceOutcome(
                        row.id,
                        labelled.variant,
                        sentence.text,
                        sentence.supported,
                        sentence.kind,
                        sentence.style,
                        claim is not None,
                        claim is not None and _cites_support(sentence, claim, row, len(texts)),
                        verdict.reason if verdict else "not read as a sentence",
                    )
                )
            report.answers.append(
                AnswerOutcome(row.id, labelled.variant, labelled.faithful, generated, verify_ms)
            )
    return report


def _verdict(
    text: str, n_sources: int, by_text: dict[str, Verdict], kept_ids: set[int]
) -> Verdict | None:
    """The verdict on a labelled sentence. The reader may split it ("Yes. It does [1]."
    is an opener and a claim): then it reached the answer when every piece did, and the
    verdict is that of its last piece."""
    pieces = [piece.text for piece in read_draft(text, n_sources).sentences]
    verdicts = [by_text.get(piece) for piece in pieces]
    if not verdicts or None in verdicts:
        return by_text.get(parse_citations(text, n_sources)[0])
    removed = next((v for v in verdicts if id(v.claim) not in kept_ids), None)
    return removed or verdicts[-1]


def _cites_support(sentence: LabelledSentence, claim, row: AnswerSetQuestion, n: int) -> bool:
    """Whether a kept sentence cites only papers that support it: a faithful sentence the
    papers it cited itself (any, for an opener), a wrong-citation one the paper that does
    say it; other unfaithful sentences no paper at all."""
    _, numbers, _ = parse_citations(sentence.text, n)
    if sentence.kind == "wrong_citation" and sentence.true_paper:
        allowed = {row.papers[sentence.true_paper - 1]}
    elif sentence.supported:
        allowed = {row.papers[number - 1] for number in numbers} or set(row.papers)
    else:
        return False
    return set(claim.papers) <= allowed
