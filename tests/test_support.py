"""The offline support scorer: accuracy on the labelled judge pairs and targeted cases."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from assistant.answering.checks import problems
from assistant.answering.support import Support, SupportScorer, _as_the_authors
from assistant.corpus import load_corpus, shipped_seeds_dir
from assistant.text import sentence_spans

JUDGE_PAIRS = Path(__file__).resolve().parent.parent / "eval" / "judge_pairs.jsonl"

PASSAGE = (
    "We introduce FlowNet-S, a lightweight optical flow estimator. On the Sintel benchmark, "
    "FlowNet-S reduces the end-point error by 12.5% compared with the previous best method "
    "while running three times faster."
)
VERBATIM = (
    "On the Sintel benchmark, FlowNet-S reduces the end-point error by 12.5% compared with the "
    "previous best method while running three times faster."
)
PARAPHRASE = (
    "Compared with the previous best method, FlowNet-S cuts the end-point error on Sintel by "
    "12.5% and runs three times faster."
)


@pytest.fixture(scope="module")
def scorer() -> SupportScorer:
    return SupportScorer()


def balanced_accuracy(rows: list[dict], verdicts: list[Support]) -> float:
    hits = defaultdict(list)
    for row, verdict in zip(rows, verdicts, strict=True):
        hits[row["supported"]].append(verdict.supported == row["supported"])
    return (sum(hits[True]) / len(hits[True]) + sum(hits[False]) / len(hits[False])) / 2


def test_balanced_accuracy_on_judge_pairs(scorer):
    rows = [json.loads(line) for line in JUDGE_PAIRS.read_text().splitlines() if line.strip()]
    verdicts = scorer.check_many([(row["claim"], row["passage"]) for row in rows])
    even = [i for i, row in enumerate(rows) if int(row["id"].lstrip("j")) % 2 == 0]
    odd = [i for i, row in enumerate(rows) if int(row["id"].lstrip("j")) % 2 == 1]

    def accuracy_of(indices: list[int]) -> float:
        return balanced_accuracy([rows[i] for i in indices], [verdicts[i] for i in indices])

    overall, tuned, held_out = accuracy_of(range(len(rows))), accuracy_of(even), accuracy_of(odd)
    print(f"\nbalanced accuracy: all {overall:.3f}, even (tuned) {tuned:.3f}, odd {held_out:.3f}")
    by_kind = defaultdict(list)
    for row, verdict in zip(rows, verdicts, strict=True):
        by_kind[row["kind"]].append(verdict.supported == row["supported"])
    for kind, hits in sorted(by_kind.items()):
        print(f"  {kind:<11} {sum(hits) / len(hits):.3f} ({len(hits)} pairs)")
    # The verifier was tuned on the even rows together with the dev half of the labelled
    # answers (eval/answers_dev.jsonl), trading some of these pairs' paraphrases (0.90
    # before) for the answers' reworded sentences; the odd rows stay held out.
    assert overall >= 0.84
    assert held_out >= 0.85


def test_changed_number_is_unsupported(scorer):
    verdict = scorer.check("FlowNet-S reduces the end-point error on Sintel by 21.5%.", PASSAGE)
    assert not verdict.supported
    assert "21.5" in verdict.reason


def test_negated_sentence_is_unsupported(scorer):
    claim = "FlowNet-S does not reduce the end-point error on the Sintel benchmark."
    assert not scorer.check(claim, PASSAGE).supported


def test_opposite_word_is_unsupported(scorer):
    claim = "FlowNet-S runs three times slower than the previous best method."
    assert not scorer.check(claim, PASSAGE).supported


def test_an_absolute_the_passage_does_not_make_is_unsupported(scorer):
    claim = "FlowNet-S always reduces the end-point error on every benchmark."
    verdict = scorer.check(claim, PASSAGE)
    assert not verdict.supported and "says more than" in verdict.reason


def test_an_absolute_the_passage_softens_is_unsupported(scorer):
    passage = "C-Flat boosts continual-learning performance in almost all cases."
    assert scorer.check(
        "C-Flat boosts continual-learning performance in almost all cases.", passage
    ).supported
    verdict = scorer.check("C-Flat boosts continual-learning performance in all cases.", passage)
    assert not verdict.supported and "says more than" in verdict.reason


def test_an_absolute_the_passage_softens_is_unsupported_though_said_of_something_else(scorer):
    passage = [
        "C-Flat boosts continual-learning performance in almost all cases and applies to all "
        "CL categories."
    ]
    assert scorer.assess("C-Flat applies to all CL categories.", passage).supported
    verdict = scorer.assess("C-Flat boosts continual-learning performance in all cases.", passage)
    assert not verdict.supported and "'all' says more than" in verdict.reason


def test_inevitably_says_more_than_prone_to(scorer):
    passage = "Diffusion processes are prone to generating samples that reflect dataset biases."
    verdict = scorer.check(
        "Diffusion processes inevitably generate samples that reflect dataset biases.", passage
    )
    assert not verdict.supported and "'inevitably' says more than" in verdict.reason


@pytest.mark.parametrize(
    ("passage", "kept", "swapped"),
    [
        (
            "We evaluate on three datasets and four language models.",
            "It is evaluated on three datasets and four models.",
            "It is evaluated on four datasets and three models.",
        ),
        (
            # a paraphrase may move figures about; only reversing two is a swap
            "On three datasets and four LLMs, the method raises the AUC from 0.7 to 0.9.",
            "The method raises the AUC from 0.7 to 0.9 on three datasets and four LLMs.",
            "On three datasets and four LLMs, the AUC goes from 0.9 to 0.7.",
        ),
    ],
)
def test_swapped_figures_are_unsupported(scorer, passage, kept, swapped):
    assert scorer.check(kept, passage).supported
    verdict = scorer.check(swapped, passage)
    assert not verdict.supported and "swapped" in verdict.reason


def test_a_name_written_otherwise_than_in_the_passage_is_mentioned(scorer):
    passage = "We benchmark the classification of enzymes by their EC number with sign SGD."
    assert scorer.check("It benchmarks EC-number classification of enzymes.", passage).supported
    assert scorer.check("It benchmarks enzyme classification with sign-SGD.", passage).supported
    verdict = scorer.check("It benchmarks EC-number classification with Adam.", passage)
    assert not verdict.supported and "Adam" in verdict.reason


def test_a_synthesis_of_two_sentences_is_aligned_to_both(scorer):
    sentences = [
        "FlowNet-S reduces the end-point error by 12.5% on Sintel.",
        "Training takes two days on one GPU.",
        "FlowNet-S also runs three times faster than the previous best method.",
    ]
    claim = "FlowNet-S lowers the Sintel end-point error by 12.5% and runs three times faster."
    verdict = scorer.assess(claim, sentences)
    assert verdict.supported and sorted(verdict.evidence) == [0, 2]


def test_swapped_dataset_name_is_unsupported(scorer):
    claim = VERBATIM.replace("Sintel", "KITTI")
    verdict = scorer.check(claim, PASSAGE)
    assert not verdict.supported
    assert "KITTI" in verdict.reason


def test_verbatim_sentence_and_close_paraphrase_are_supported(scorer):
    for claim in (VERBATIM, PARAPHRASE, "FlowNet-S is a lightweight estimator of optical flow."):
        verdict = scorer.check(claim, PASSAGE)
        assert verdict.supported, (claim, verdict)
        assert 0.5 <= verdict.score <= 1.0


@pytest.mark.parametrize(("claim", "passage"), [("", PASSAGE), (VERBATIM, ""), (" ", " \n")])
def test_empty_claim_or_passage_is_unsupported(scorer, claim, passage):
    verdict = scorer.check(claim, passage)
    assert verdict == Support(False, 0.0, verdict.reason)
    assert "empty" in verdict.reason


def test_check_many_equals_check_one_by_one(scorer):
    rows = [json.loads(line) for line in JUDGE_PAIRS.read_text().splitlines()[:20]]
    pairs = [(row["claim"], row["passage"]) for row in rows]
    pairs += [(VERBATIM, PASSAGE), (PARAPHRASE, PASSAGE), ("", PASSAGE), (PARAPHRASE, "")]
    pairs += [(PARAPHRASE, VERBATIM), (rows[0]["claim"], PASSAGE)]
    assert scorer.check_many(pairs) == [scorer.check(claim, passage) for claim, passage in pairs]
    assert scorer.check_many([]) == []


@pytest.mark.parametrize(
    ("question", "claim", "stance"),
    [
        (
            "Does E-RLHF add training cost compared with RLHF?",
            "E-RLHF brings no additional training cost.",
            False,
        ),
        (
            "Do evidential deep learning methods provide reliable uncertainty quantification?",
            "EDL methods do well on downstream tasks despite their poor uncertainty "
            "quantification.",
            False,
        ),
        (
            "Does reshuffling the validation splits improve generalization?",
            "Reshuffling the resampling splits often improves generalization to unseen data.",
            True,
        ),
        (
            "Do label queries give a non-trivial improvement over passive learning?",
            "Any active learner needs a pool of 2^poly(d) examples to beat it.",
            None,
        ),
    ],
)
def test_a_claim_says_yes_no_or_neither_to_a_yes_no_question(question, claim, stance):
    from assistant.answering.question import Catalog, analyse
    from assistant.answering.verify import _stance

    assert _stance(analyse(question, question, Catalog([])), claim) is stance


@pytest.mark.parametrize(
    ("claim", "passage", "reason"),
    [
        (
            "TRIPLE casts prompt selection as fixed-confidence best arm identification.",
            "TRIPLE casts prompt selection as fixed-budget best arm identification.",
            "where the passage has 'fixed-budget'",
        ),
        (
            "Using Adam on two-layer networks, the paper solves sparse parity.",
            "We show that sign SGD on two-layer networks solves sparse parity.",
            "name Adam",
        ),
        (
            "Its core layer runs two to sixteen times faster.",
            "Our core layer is 2-8x faster.",
            "16",
        ),
        (
            "The method is trained with Adam on two-layer networks.",
            "We train our method with sign SGD on two-layer networks.",
            "name Adam",
        ),
        (
            "It can generate hundreds of traces for fine-tuning.",
            "It can easily generate thousands of traces for fine-tuning.",
            "number 100",
        ),
        (
            "The lower bound grows quadratically with depth.",
            "The lower bound grows linearly with depth.",
            "quadratically",
        ),
        (
            # "two-level" names a kind of quantization, it states no number 2
            "It cuts the gradients to 2 bits.",
            "It cuts the gradients to nearly 4 bits with two-level smooth quantization.",
            "number 2",
        ),
        (
            "Quantizing the eigenvectors benefits the computation of the inverse square root.",
            "Quantizing the eigenvectors benefits the computation of the inverse 4-th root.",
            "root 2",
        ),
        (
            "XRM trains twin networks, each on a random third of the training data.",
            "XRM trains twin networks, each learning from one random half of the training data.",
            "1/3",
        ),
        (
            "It reduces to Backpropagation when the speed of propagation goes to zero.",
            "It reduces to Backpropagation when the speed of propagation goes to infinity.",
            "'zero' contradicts",
        ),
    ],
)
def test_swapped_compounds_names_spelled_numbers_roots_and_limits(scorer, claim, passage, reason):
    verdict = scorer.check(claim, passage)
    assert not verdict.supported and reason in verdict.reason
    assert scorer.check(passage.replace("We show that", "The authors show that"), passage).supported


def test_an_acronym_that_spells_a_number_states_none(scorer):
    passage = "TRIPLE selects prompts under a limited budget of LLM calls."
    assert scorer.check(
        "TRIPLE selects prompts under a limited budget of LLM calls.", passage
    ).supported


SHAMPOO = (
    "We show that quantizing the eigenvector matrix of the preconditioner in 4-bit Shampoo is "
    "remarkably better than quantizing the preconditioner itself."
)
SPV = "The attack relies on a membership signal grounded in memorization rather than overfitting."


def test_what_a_claim_sets_aside_with_rather_than_need_not_be_denied_by_the_passage(scorer):
    claim = (
        "Rather than quantizing the preconditioner itself, 4-bit Shampoo quantizes the "
        "preconditioner's eigenvector matrix, which works remarkably better."
    )
    assert scorer.assess(claim, [SHAMPOO]).supported


def test_a_contrast_turned_around_against_a_passage_that_draws_it_is_unsupported(scorer):
    claim = "The attack's membership signal is grounded in overfitting rather than memorization."
    verdict = scorer.assess(claim, [SPV])
    assert not verdict.supported and "overfitting" in verdict.reason


SUPPOSED = (
    "Although one might expect the error to grow with the depth of the network, this turns "
    "out not to be the case."
)


def test_what_the_passage_only_supposes_is_not_denied_by_a_claim_that_negates_it(scorer):
    assert scorer.assess(
        "The error does not grow with the depth of the network.", [SUPPOSED]
    ).supported


COUNTED = (
    "We evaluate on ResNet50, VGG16 and ViT Base. The supervised rule learns faster, while "
    "the reinforcement rule forgets more slowly."
)


@pytest.mark.parametrize(
    "claim",
    [
        "The experiments use three architectures: ResNet50, VGG16 and ViT Base.",
        "Of the two rules, the supervised rule learns faster.",
    ],
)
def test_a_count_of_what_the_claim_itself_names_is_not_a_new_number(scorer, claim):
    assert scorer.assess(claim, split(COUNTED)).supported


@pytest.mark.parametrize(
    "claim",
    [
        "The experiments use four architectures: ResNet50, VGG16 and ViT Base.",
        "The experiments use three architectures, among them ResNet50.",
    ],
)
def test_a_count_that_does_not_match_the_items_named_is_a_new_number(scorer, claim):
    verdict = scorer.assess(claim, split(COUNTED))
    assert not verdict.supported and "number" in verdict.reason


def split(passage: str) -> list[str]:
    return [sentence + "." for sentence in passage.rstrip(".").split(". ")]


@pytest.mark.parametrize(
    ("claim", "read"),
    [
        ("Yan and Tajer tackle the open case.", "The authors tackle the open case."),
        ("Chen, Zhao and Zou find two heads.", "The authors find two heads."),
        ("Yan et al. tackle the open case.", "The authors tackle the open case."),
        # one name is as likely a method; names not among the authors stay
        ("GaLore cuts memory.", "GaLore cuts memory."),
        ("Smith and Tajer tackle the open case.", "Smith and Tajer tackle the open case."),
    ],
)
def test_the_entailment_model_reads_a_claim_led_by_its_authors_names_as_the_authors(claim, read):
    known = "Causal Bandits Zirui Yan Ali Tajer Wei Chen Tianyu Zhao James Zou NeurIPS 2024"
    assert _as_the_authors(claim, known) == read


def seed_sentences(title_part: str) -> list[str]:
    """The sentences of the seed abstract whose title contains `title_part`."""
    (text,) = [
        p.abstract for p in load_corpus([shipped_seeds_dir()]) if title_part in (p.title or "")
    ]
    return [text[start:end] for start, end in sentence_spans(text)]


def test_a_name_may_come_from_another_sentence_of_the_cited_abstract(scorer):
    abstract = seed_sentences("Householder")
    # aligned to the sentences on Householder transformations, ranks and results; "SVD"
    # comes from two sentences before them
    claim = (
        "The Householder approach mimics an SVD, building the orthogonal factors from "
        "Householder transformations that each need only a vector and learning the diagonal "
        "values layer by layer, so that adaptation matrices can have different ranks in "
        "different layers; the authors report promising fine-tuning performance on standard "
        "downstream vision tasks."
    )
    assert scorer.assess(claim, abstract).supported
    verdict = scorer.assess(claim.replace("an SVD", "a QR decomposition (QRD)"), abstract)
    assert not verdict.supported and "name QRD" in verdict.reason


def test_a_negation_elsewhere_in_the_abstract_does_not_reject_a_claim_its_sentences_bear_out(
    scorer,
):
    abstract = seed_sentences("Asymmetric Valley")
    claim = (
        "The asymmetric valley study examines factors such as the dataset, architecture, "
        "initialization and hyperparameters, as well as the magnitude and direction of the "
        "noise used for 1D visualization, and finds that the degree of sign consistency "
        "between the noise and the convergence point is a critical indicator of valley "
        "symmetry."
    )
    assert scorer.assess(claim, abstract).supported


@pytest.mark.parametrize(
    ("formula", "supported"),
    [
        ("2^{Θ(k)}", True),
        ("2^Θ(k)", True),
        ("Θ(k)", False),
        ("Θ(k²)", False),
        ("O(k)", False),
    ],
)
def test_an_asymptotic_formula_must_be_the_abstracts_own(scorer, formula, supported):
    abstract = seed_sentences("Sparse Parity Problems")
    # the abstract writes "\tilde{O}(d^{k-1})" and "2^{\Theta(k)}" in LaTeX; the digits of
    # "Θ(k²)" are all in it, the formula is not
    claim = (
        "Sign SGD on two-layer fully-connected networks solves the k-sparse parity problem on "
        f"a d-dimensional hypercube with sample complexity Õ(d^{{k-1}}) using {formula} neurons."
    )
    verdict = scorer.assess(claim, abstract)
    assert verdict.supported == supported, verdict.reason
    assert supported or "formula" in verdict.reason


def test_a_root_may_be_spelled_out_or_written_in_latex():
    assert not problems("It computes the inverse fourth root.", "We compute the inverse 4-th root.")
    assert not problems("It grows with the square root of T.", r"It grows as $\sqrt{T}$.")


@pytest.mark.parametrize(
    ("claim", "supported"),
    [
        (
            "Bengs et al. found that the epistemic uncertainties EDL methods learn are "
            "unreliable, since they do not vanish even with infinite data.",
            True,
        ),
        (
            "Bengs et al. found that the epistemic uncertainties EDL methods learn are "
            "unreliable, since they vanish even with infinite data.",
            False,
        ),
    ],
)
def test_a_non_prefix_negates_the_word_it_is_hyphened_to(scorer, claim, supported):
    # the abstract: "... unreliable, e.g., in that they are non-vanishing even with infinite data"
    abstract = seed_sentences("Evidential Deep Learning a Mirage")
    assert scorer.assess(claim, abstract).supported is supported


def test_instead_of_sets_aside_its_whole_phrase(scorer):
    # the abstract: "Instead of updating projection matrix with eigenvectors, Online Subspace
    # Descent updates projection matrix with online PCA."
    claim = (
        "Online Subspace Descent updates the projection matrix with online PCA instead of "
        "eigenvectors from SVD, adding only minimal overhead to training."
    )
    assert scorer.assess(claim, seed_sentences("Online Subspace Descent")).supported


def test_et_al_after_an_authors_name_is_no_new_word(scorer):
    claim = "Smith et al. note that FlowNet-S runs three times faster."
    sentences = [PASSAGE[start:end] for start, end in sentence_spans(PASSAGE)]
    verdict = scorer.assess(claim, sentences, known="John Smith")
    assert verdict.supported, verdict.reason
