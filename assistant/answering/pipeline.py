"""The answering chain, one stage after another:

1. a follow-up is rewritten into a standalone question; the question is understood
   (`question.analyse`: intent, authors, venue, year, papers named);
2. retrieval, restricted to the papers the question names by author, venue or year;
3. with a language model: the answer is generated from the retrieved papers, read into
   sentences, verified against what each cites (`verify`), and each verified sentence
   must address the question; without one (`extractive`), or when nothing generated is
   both verified and relevant, the answer is composed from the papers' own sentences
   (`plans`), which also decide to refuse;
4. the claims become an `Answer` with numbered citations of exact spans.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from ..answer import REFUSAL, Answer, AnswerSentence, Citation, answer_text
from ..backends import EXTRACTIVE, make_backend
from ..backends.base import Backend, Deadline, GenerationRequest, Source
from ..corpus import Paper
from ..display import plain_text
from ..embeddings import CachedEmbedder, VectorStore, make_scoring_embedder
from ..errors import BackendError
from ..lexicon import QUESTION_WORDS, content_stems, quantities
from ..prompts import load_prompt, render
from ..retrieval import Filters, Hit, HybridRetriever
from ..settings import Settings
from ..text import count_tokens
from .claims import Claim, read_draft
from .cross_encoder import answer_model, entailment_model, passage_text
from .passages import PaperText, is_boilerplate, is_instruction, paper_texts
from .plans import Composer
from .question import Catalog, Question, analyse
from .relevance import RelevanceScorer
from .support import SupportScorer
from .verify import LLMVerifier, LocalVerifier, Verification, Verifier

if TYPE_CHECKING:
    from ..openai_api import ApiEndpoint

_FOLLOW_UP = re.compile(
    r"\b(it|its|they|them|their|this|that|these|those|he|she|his|her|the (paper|method|"
    r"model|approach|authors?))\b|^(and|what about|how about|also)\b",
    re.IGNORECASE,
)
# A generated sentence shorter than this, or cut off (ending in ":", an enumerator after a
# colon, an open bracket or a function word), is a fragment; "improves from 4 to 3." is not.
_MIN_WORDS = 5
_FRAGMENT_END = re.compile(
    r"(?::|[(\[{,;]|:\s*\(?\d{1,2}[.)]|\(\d{1,2}\)"
    r"|\b(?:in|of|and|or|the|a|an|to|for|with|by|on|as|from|such as)\.?"
    r"|\b(?:is|are|was|were|be|has|have|that|which|its|their|than|into|via|between))\s*$"
)
# A generated sentence in which a run of this many words comes twice is a small model's loop
# ("X is a generalization of X, which is a generalization of X").
_LOOP_WORDS = 6
# A generated sentence that asks something answers nothing.
_ASKS = re.compile(r"\?\s*(?:\[\d+\]\s*)*$")
# A generated answer stays when its best sentence addresses the question at least this
# share as well as the extractive answer's best (chosen on the dev halves: faithful strong-
# model answers pass, the 135M model's vague sentences do not).
FLOOR_SHARE = 0.8
# The entailment chance a weak backend's claim needs against its evidence spans. Set after
# reading the three SmolLM2 sentences kept on the held-out eval/questions_test4.jsonl (an
# inverted condition, "reduces the number of bits to 2" for "nearly 4 bits", "continuous"
# for "continual"): the model gave them 0.21, 0.11 and 0.07.
WEAK_ENTAILMENT = 0.5
# The relevance gate reads this many sentences of a cited paper, those closest to the
# question, with the answer model.
GATE_SENTENCES = 8

Message = dict[str, str]


@dataclass
class _Outcome:
    """What one way of answering produced, before it becomes an `Answer`."""

    backend: str
    claims: list[Claim] = field(default_factory=list)
    raw: str = ""
    dropped: int = 0
    generate_ms: float = 0.0
    note: str | None = None


class Answerer:
    """Runs the chain for one `Assistant`; backends are created once and reused."""

    def __init__(self, settings: Settings, retriever: HybridRetriever) -> None:
        self.settings = settings
        self.retriever = retriever
        self._backends: dict[str, Backend] = {}
        self._lock = threading.Lock()
        self._catalog: tuple[str, Catalog] | None = None
        self._background = ThreadPoolExecutor(max_workers=1, thread_name_prefix="citeqa-prepare")

    @cached_property
    def scoring_embedder(self) -> CachedEmbedder:
        return make_scoring_embedder(self.retriever.index.embedder)

    @cached_property
    def stored_vectors(self) -> VectorStore:
        return VectorStore(self.settings.data_dir / "vectors", self.scoring_embedder)

    @cached_property
    def relevance(self) -> RelevanceScorer:
        return RelevanceScorer(self.scoring_embedder)

    @cached_property
    def scorer(self) -> SupportScorer:
        entailment = entailment_model() if self.settings.answer.entailment else None
        return SupportScorer(self.scoring_embedder, entailment)

    @cached_property
    def composer(self) -> Composer:
        return Composer(self.relevance, self.settings.answer, answer_model())

    @cached_property
    def verifier(self) -> Verifier:
        local = LocalVerifier(self.scorer)
        if self.settings.answer.verifier == "llm":
            return LLMVerifier(_endpoint(self.settings), local)
        return local

    def backend(self, name: str) -> Backend:
        with self._lock:
            if name not in self._backends:
                self._backends[name] = make_backend(name, self.settings)
            return self._backends[name]

    def catalog(self) -> Catalog:
        """What question analysis matches against, rebuilt when the index changes (read
        first, with the sentence vectors earlier processes stored)."""
        snapshot = self.retriever.index.snapshot()
        with self._lock:
            if self._catalog is None or self._catalog[0] != snapshot.generation:
                if self._catalog is None:
                    self.stored_vectors.load()
                self._catalog = (snapshot.generation, Catalog(snapshot.papers.values()))
            return self._catalog[1]

    # ---- the chain --------------------------------------------------------------------

    def understand(
        self,
        question: str,
        history: list[Message],
        backend_name: str,
        deadline: Deadline | None = None,
    ) -> Question:
        """The question as understood, a follow-up first made standalone."""
        standalone = self.standalone_question(question, history, backend_name, deadline)
        return analyse(question, standalone, self.catalog())

    def stream(
        self,
        question: str,
        history: list[Message] | None,
        backend_name: str,
        k: int | None,
        filters: Filters,
        fallback: bool = True,
    ) -> Iterator[str | Answer]:
        """Yield the backend's text as it is generated, then the verified `Answer`."""
        started = time.perf_counter()
        deadline = Deadline(self.settings.llm.deadline)  # one for the whole answer
        understood = self.understand(question, history or [], backend_name, deadline)
        hits = self.retrieve(understood, k, filters)
        papers = paper_texts(hits, self.retriever.index.snapshot().papers)
        retrieve_ms = (time.perf_counter() - started) * 1000
        if backend_name == EXTRACTIVE or not papers:
            outcome = self._extract(understood, papers)
        else:
            outcome = yield from self._generate(
                backend_name, understood, papers, fallback, deadline
            )
        answer = self._compose(understood, hits, papers, outcome)
        answer.timings_ms = {
            "retrieve": retrieve_ms,
            "generate": outcome.generate_ms,
            "total": (time.perf_counter() - started) * 1000,
        }
        self.stored_vectors.add([s.text for paper in papers for s in paper.sentences])
        yield answer

    def retrieve(self, question: Question, k: int | None, filters: Filters) -> list[Hit]:
        """The passages for `question`: more of them for a list, restricted to the papers
        it names by author, venue or year, and including the papers it names by title."""
        k = k or self.settings.retrieval.k
        if question.intent == "list":
            k = max(k, self.settings.retrieval.list_k)
        allowed = question.paper_ids
        if filters.paper_ids is not None:
            allowed = filters.paper_ids if allowed is None else allowed & filters.paper_ids
        hits = self.retriever.search(question.search_text, k, replace(filters, paper_ids=allowed))
        missing = question.named_papers - {hit.paper_id for hit in hits}
        if missing and (allowed is None or missing & allowed):
            named = replace(filters, paper_ids=frozenset(missing & allowed if allowed else missing))
            extra = self.retriever.search(question.search_text, len(missing), named)
            hits = extra + [hit for hit in hits if hit.paper_id not in missing]
        return hits[: max(k, len(question.named_papers))]

    def _extract(self, question: Question, papers: list[PaperText]) -> _Outcome:
        started = time.perf_counter()
        composition = self.composer.compose(question, papers)
        ms = (time.perf_counter() - started) * 1000
        return _Outcome(EXTRACTIVE, composition.claims, generate_ms=ms)

    def _generate(
        self,
        name: str,
        question: Question,
        papers: list[PaperText],
        fallback: bool,
        deadline: Deadline,
    ) -> Iterator[str]:
        backend = self.backend(name)
        request = GenerationRequest(
            question=question.standalone,
            sources=self._sources(question, papers, backend.source_tokens),
            messages=[],
            max_tokens=self.settings.llm.max_tokens,
            temperature=self.settings.llm.temperature,
            deadline=deadline,
        )
        request = replace(request, messages=_messages(question.standalone, request.sources))
        # a weak backend is the in-process model, on the CPUs preparing would use
        preparing = (
            None if backend.weak else self._background.submit(self.prepare, question, papers)
        )
        started = time.perf_counter()
        pieces: list[str] = []
        try:
            for piece in backend.generate(request):
                pieces.append(piece)
                yield piece
        except BackendError as exc:
            if not fallback:
                raise
            outcome = self._extract(question, papers)
            outcome.raw = "".join(pieces)
            outcome.note = f"The {name} backend failed ({exc}); this answer quotes the papers."
            return outcome
        generate_ms = (time.perf_counter() - started) * 1000
        raw = "".join(pieces)
        verification = self.verify(question, raw, papers)
        answering = preparing.result() if preparing else None
        claims = self.addressing(question, verification.claims, papers, answering)
        if backend.weak:
            claims = self.standing_alone(claims, papers)
        outcome = _Outcome(name, claims, raw, len(verification.verdicts) - len(claims), generate_ms)
        outcome.note = verification.note
        if fallback and not self.acceptable(question, claims, papers, backend.weak):
            extracted = self._extract(question, papers)
            extracted.raw, extracted.generate_ms = raw, generate_ms + extracted.generate_ms
            extracted.dropped = len(verification.verdicts)
            instead = (
                "and the papers do not answer it either"
                if not extracted.claims
                else "this answer quotes the papers instead"
            )
            extracted.note = (
                f"Nothing the {name} backend wrote was both verified against the papers and "
                f"on the question; {instead}."
            )
            return extracted
        return outcome

    def verify(self, question: Question, text: str, papers: list[PaperText]) -> Verification:
        """The verdicts on a generated answer whose source `n` is `papers[n - 1]`."""
        return self.verifier.verify(question, read_draft(text, len(papers)), papers)

    def prepare(self, question: Question, papers: list[PaperText]) -> dict[str, float]:
        """What checking an answer over `papers` needs before the answer exists, done while
        the backend writes it: the papers' sentences and their clauses embedded, and the
        answer model's chance that each paper answers the question."""
        self.scorer.embed_sentences([s.text for paper in papers for s in paper.supporting()])
        return self._paper_answering(question, papers)

    def addressing(
        self,
        question: Question,
        claims: list[Claim],
        papers: list[PaperText],
        answering: dict[str, float] | None = None,
    ) -> list[Claim]:
        """The verified claims that address the question: those about a paper some sentence
        of which the answer model gives at least `answer.min_answer_chance` of answering
        it (`answering`, from `prepare`, or worked out here). What a strong model adds
        about such a paper (its method, its setting) stays; a sentence about a paper that
        has nothing to do with the question goes. Openers and framing stay when the claim
        after them stays."""
        cited = [p for p in papers if p.paper_id in {i for c in claims for i in c.papers}]
        chances = answering or self._paper_answering(question, cited)
        minimum = self.settings.answer.min_answer_chance
        on_topic = {paper_id for paper_id, chance in chances.items() if chance >= minimum}
        return _with_framing(
            claims,
            lambda claim: bool(set(claim.papers) & on_topic) and _substantive(claim, question),
        )

    def standing_alone(self, claims: list[Claim], papers: list[PaperText]) -> list[Claim]:
        """For a weak backend, the claims their evidence spans support with no words given
        for free (a small model pads with the question's and the titles' words, the words a
        strong model may reuse) and that the entailment model finds likelier entailed than
        not (a small model's slips are many and plausible). Framing stays when the claim
        after it stays."""
        texts = {paper.paper_id: paper.paper.abstract for paper in papers}
        checked = [claim for claim in claims if claim.kind == "claim"]
        pairs = [
            (claim.text, " ".join(texts[e.paper_id][e.start : e.end] for e in claim.evidence))
            for claim in checked
        ]
        supports = self.scorer.check_many(pairs)
        entailment = self.scorer.entailment
        chances = entailment.probabilities(pairs) if entailment else np.ones(len(pairs))
        standing = {
            id(claim)
            for claim, support, chance in zip(checked, supports, chances, strict=True)
            if support.supported and chance >= WEAK_ENTAILMENT
        }
        return _with_framing(claims, lambda claim: id(claim) in standing)

    def _paper_answering(self, question: Question, papers: list[PaperText]) -> dict[str, float]:
        """The answer model's best probability that a sentence of each paper answers the
        question, over the paper's `GATE_SENTENCES` sentences closest to it."""
        model = self.composer.answer_model
        if model is None:
            return {paper.paper_id: 1.0 for paper in papers}
        pairs = []
        for paper in papers:
            texts = [sentence.text for sentence in paper.supporting()]
            closeness = self.relevance.similarity(question, texts) if texts else []
            title = paper.paper.display_title
            pairs += [
                (paper.paper_id, (question.standalone, passage_text(title, texts[i])))
                for i in np.argsort(-np.asarray(closeness))[:GATE_SENTENCES]
            ]
        chances = model.probabilities([pair for _, pair in pairs])
        best = dict.fromkeys((paper.paper_id for paper in papers), 0.0)
        for (paper_id, _), chance in zip(pairs, chances, strict=True):
            best[paper_id] = max(best[paper_id], float(chance))
        return best

    def acceptable(
        self,
        question: Question,
        claims: list[Claim],
        papers: list[PaperText],
        against_extractive: bool = False,
    ) -> bool:
        """Whether the verified, relevant generated sentences make an answer: some claim is
        one (`_substantive`); and, `against_extractive` (a backend whose `weak` flag is
        set), the best of them addresses the question at least `FLOOR_SHARE` as well as
        the extractive answer's best, when there is one (a small model's verified but vague
        sentence is no better than a quote)."""
        stated = [c for c in claims if c.kind == "claim" and _substantive(c, question)]
        if not stated or not against_extractive:
            return bool(stated)
        quoted = [c for c in self.composer.compose(question, papers).claims if c.kind == "claim"]
        if not quoted:
            return True
        context = {paper.paper_id: paper.context for paper in papers}
        ours, theirs = (
            self.relevance.score(
                question,
                [claim.text for claim in group],
                [context.get(claim.papers[0], "") if claim.papers else "" for claim in group],
            ).max()
            for group in (stated, quoted)
        )
        return bool(ours >= FLOOR_SHARE * theirs)

    def _sources(
        self, question: Question, papers: list[PaperText], budget: int | None
    ) -> list[Source]:
        """One numbered source per retrieved paper: its whole abstract, or for a backend with
        a token budget per source (a CPU model, whose prompt processing is most of its
        time) the sentences most relevant to the question that fit, in their order."""
        sources = []
        for n, paper in enumerate(papers, 1):
            text = paper.paper.abstract if not budget else self._focused(question, paper, budget)
            sources.append(_source(n, paper.paper, text))
        return sources

    def _focused(self, question: Question, paper: PaperText, budget: int) -> str:
        sentences = [s for s in paper.sentences if not s.instruction]
        if not sentences:
            return ""
        scores = self.relevance.score(
            question, [s.text for s in sentences], [paper.context] * len(sentences)
        )
        kept, used = [], 0
        for i in np.argsort(-scores, kind="stable"):
            tokens = count_tokens(sentences[i].text)
            if not kept or used + tokens <= budget:
                kept.append(int(i))
                used += tokens
        return " ".join(sentences[i].text for i in sorted(kept))

    # ---- follow-ups -------------------------------------------------------------------

    def standalone_question(
        self,
        question: str,
        history: list[Message],
        backend_name: str,
        deadline: Deadline | None = None,
    ) -> str:
        """Rewrite a follow-up into a question that stands alone, using the history."""
        previous = [turn["content"] for turn in history if turn.get("role") == "user"]
        previous = previous[-self.settings.answer.max_history_turns :]
        if not previous or not _FOLLOW_UP.search(question):
            return question
        if backend_name == "openai":
            try:
                return self._rewrite_with_llm(question, history, deadline)
            except BackendError:
                pass
        return f"{previous[-1]} {question}"

    def _rewrite_with_llm(
        self, question: str, history: list[Message], deadline: Deadline | None
    ) -> str:
        turns = history[-2 * self.settings.answer.max_history_turns :]
        transcript = "\n".join(f"{turn['role']}: {turn['content']}" for turn in turns)
        prompt = render("rewrite_followup", history=transcript, question=question)
        request = GenerationRequest(
            question=question,
            sources=[],
            messages=[{"role": "user", "content": prompt}],
            max_tokens=96,
            temperature=0.0,
            deadline=deadline,
        )
        rewritten = "".join(self.backend("openai").generate(request)).strip().strip('"')
        return rewritten.splitlines()[0] if rewritten else question

    # ---- composing ----------------------------------------------------------------------

    def _compose(
        self, question: Question, hits: list[Hit], papers: list[PaperText], outcome: _Outcome
    ) -> Answer:
        common = {
            "question": question.text,
            "backend": outcome.backend,
            "raw_answer": outcome.raw,
            "standalone_question": question.standalone
            if question.standalone != question.text
            else None,
            "note": outcome.note,
            "understood": question.to_json(),
            "sources": hits,
            "dropped_sentences": outcome.dropped,
        }
        if not any(claim.kind == "claim" for claim in outcome.claims):
            refusal = AnswerSentence(text=REFUSAL, display=REFUSAL, citations=[])
            return Answer(answer=REFUSAL, refused=True, sentences=[refusal], **common)
        by_id = {paper.paper_id: paper.paper for paper in papers}
        numbers: dict[tuple[str, int, int], int] = {}
        citations: list[Citation] = []
        sentences: list[AnswerSentence] = []
        for claim in outcome.claims:
            cited = []
            for evidence in claim.evidence:
                key = (evidence.paper_id, evidence.start, evidence.end)
                if key not in numbers:
                    numbers[key] = len(numbers) + 1
                    citations.append(_citation(numbers[key], by_id[evidence.paper_id], key))
                cited.append(numbers[key])
            sentences.append(
                AnswerSentence(
                    text=claim.text,
                    display=plain_text(claim.text),
                    citations=list(dict.fromkeys(cited)),
                    kind=claim.kind,
                    heading=plain_text(claim.heading) if claim.heading else None,
                )
            )
        return Answer(
            answer=answer_text(sentences),
            refused=False,
            sentences=sentences,
            citations=citations,
            **common,
        )


def _with_framing(claims: list[Claim], keeps: Callable[[Claim], bool]) -> list[Claim]:
    """The claims `keeps` accepts, with each opener or framing sentence that the claim
    right after it (as kept) still follows."""
    kept: list[Claim] = []
    for claim in reversed(claims):
        follows = bool(kept) and kept[-1].kind == "claim"
        if keeps(claim) if claim.kind == "claim" else follows:
            kept.append(claim)
    return kept[::-1]


def _substantive(claim: Claim, question: Question) -> bool:
    """Not a fragment ("are: 1."), a code link or availability note, words to the reader
    ("The answer to your question is"), a question, nor the question restated (every
    content word from the question, no figure the question lacks)."""
    text = claim.text.rstrip()
    cut_off = _FRAGMENT_END.search(text) or text.count("(") > text.count(")")
    if len(text.split()) < _MIN_WORDS or cut_off or _ASKS.search(text) or _loops(text):
        return False
    if is_boilerplate(text) or is_instruction(text):
        return False
    asked = content_stems(question.standalone, QUESTION_WORDS)
    added = quantities(text) - quantities(question.standalone)
    return not content_stems(text, QUESTION_WORDS) <= asked or bool(added)


def _loops(text: str) -> bool:
    """Whether a run of `_LOOP_WORDS` words comes twice in `text`."""
    words = re.findall(r"\w+", text.lower())
    runs = [tuple(words[i : i + _LOOP_WORDS]) for i in range(len(words) - _LOOP_WORDS + 1)]
    return len(runs) != len(set(runs))


def _endpoint(settings: Settings) -> ApiEndpoint:
    from ..openai_api import ApiEndpoint  # openai loads in ~1 s: only for the LLM verifier

    llm = settings.llm
    return ApiEndpoint(llm.base_url, llm.api_key, llm.model, llm.timeout, llm.max_retries)


def _source(n: int, paper: Paper, text: str) -> Source:
    return Source(
        n=n,
        paper_id=paper.paper_id,
        title=paper.display_title,
        venue=paper.venue,
        text=text,
        authors=tuple(paper.authors),
    )


def _messages(question: str, sources: list[Source]) -> list[Message]:
    listing = "\n".join(
        render("source", n=s.n, title=s.title, venue=s.venue or "venue unknown", text=s.text)
        for s in sources
    )
    return [
        {"role": "system", "content": load_prompt("answer_system")},
        {"role": "user", "content": render("answer_user", sources=listing, question=question)},
    ]


def _citation(n: int, paper: Paper, span: tuple[str, int, int]) -> Citation:
    _, start, end = span
    snippet = paper.abstract[start:end]
    return Citation(
        n=n,
        paper_id=paper.paper_id,
        title=paper.title,
        display_title=paper.display_title,
        authors=paper.authors,
        venue=paper.venue,
        url=paper.url,
        snippet=snippet,
        display_snippet=plain_text(snippet),
        start=start,
        end=end,
    )
