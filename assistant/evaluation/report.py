"""Reports of an evaluation: tables, Markdown, JSON and a chart."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from .gate import gate_failures
from .metrics import METRIC_NAMES, cell

if TYPE_CHECKING:
    from .gate import Thresholds
    from .run import EvalReport, SystemResult
    from .verifier import VerifierReport

PLOTTED = (
    "faithfulness",
    "raw_faithfulness",
    "citation_recall",
    "citation_precision",
    "key_fact_recall",
    "retrieval_recall_at_5",
)

Table = tuple[list[str], list[list[str]]]


def overall_table(report: EvalReport, thresholds: Thresholds | None = None) -> Table:
    """Rows of metrics, a column per system (and the threshold, when given)."""
    header = ["metric", *(["minimum"] if thresholds else []), *(s.name for s in report.systems)]
    metrics = [asdict(system.metrics) for system in report.systems]
    rows = [
        [
            name,
            *([cell(thresholds.minimum.get(name))] if thresholds else []),
            *(cell(values[name]) for values in metrics),
        ]
        for name in METRIC_NAMES
    ]
    seconds = [cell(s.seconds / max(len(s.scores), 1)) for s in report.systems]
    rows.append(["seconds_per_question", *([""] if thresholds else []), *seconds])
    return header, rows


def type_table(system: SystemResult) -> Table:
    """Rows of metrics, a column for all questions and one per question type."""
    columns = {"all": system.metrics, **system.by_type()}
    values = {kind: asdict(metrics) for kind, metrics in columns.items()}
    return ["metric", *columns], [
        [name, *(cell(values[kind][name]) for kind in columns)] for name in METRIC_NAMES
    ]


def write_reports(
    report: EvalReport, folder: Path, name: str, thresholds: Thresholds | None = None
) -> list[Path]:
    """Write `<name>.json` (everything), `<name>.md` (summary) and `<name>.png` (per-type
    scores per system) into `folder`; returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{name}.{suffix}" for suffix in ("json", "md", "png")]
    data = report.to_json()
    if thresholds:
        data["gate"] = {
            "minimum": thresholds.minimum,
            "failures": gate_failures(report, thresholds),
        }
    paths[0].write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    paths[1].write_text(markdown(report, name, thresholds), encoding="utf-8")
    plot(report, paths[2])
    return paths


def markdown(report: EvalReport, name: str, thresholds: Thresholds | None = None) -> str:
    """The report as Markdown: setup, overall table, gate result, one table per system."""
    quality = report.judge_quality
    judged = (
        f" (balanced accuracy {quality.balanced_accuracy:.3f} on {quality.pairs} labelled pairs)"
        if quality
        else ""
    )
    count = len(report.systems[0].scores) if report.systems else 0
    lines = [
        f"# citeqa evaluation: {name}",
        "",
        f"{count} questions from `{report.questions_file}`; judge: {report.judge}{judged}.",
        "",
        "## Overall",
        "",
        *_markdown_table(overall_table(report, thresholds)),
    ]
    if thresholds:
        failures = gate_failures(report, thresholds)
        lines += ["", "Gate: " + ("passed." if not failures else "failed:"), ""]
        lines += [f"- {failure}" for failure in failures]
    for system in report.systems:
        lines += [
            "",
            f"## {system.name} by question type",
            "",
            *_markdown_table(type_table(system)),
        ]
    if report.verifier is not None:
        lines += ["", *verifier_markdown(report.verifier, thresholds)]
    return "\n".join(lines).rstrip() + "\n"


def verifier_table(verifier: VerifierReport, thresholds: Thresholds | None = None) -> Table:
    """Rows of the verifier's metrics on the labelled answers (and their minimum)."""
    measured = verifier.metrics()
    minimum = thresholds.verifier if thresholds else {}
    header = ["metric", *(["minimum"] if thresholds else []), verifier.verifier]
    rows = [
        [name, *([cell(minimum.get(name))] if thresholds else []), cell(value)]
        for name, value in measured.items()
    ]
    return header, rows


def verifier_markdown(verifier: VerifierReport, thresholds: Thresholds | None = None) -> list[str]:
    metrics = verifier.metrics()
    return [
        f"## Verifier on `{verifier.answers_file}`",
        "",
        f"{metrics['faithful_sentences']} faithful and {metrics['unfaithful_sentences']} "
        "unfaithful sentences in labelled generated answers, each verified against the papers "
        "it cites and passed through the relevance gate.",
        "",
        *_markdown_table(verifier_table(verifier, thresholds)),
    ]


def _markdown_table(table: Table) -> list[str]:
    header, rows = table
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def plot(report: EvalReport, path: Path) -> None:
    """A bar chart per metric in `PLOTTED`: question types along x, one bar per system;
    and, when the verifier was measured, its results per error kind."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(15, 12.5), layout="constrained")
    FigureCanvasAgg(figure)
    grid = figure.subplots(3, 3)
    by_type = {system.name: system.by_type() for system in report.systems}
    types = list(dict.fromkeys(kind for table in by_type.values() for kind in table))
    x = np.arange(len(types))
    width = 0.8 / max(len(by_type), 1)
    for axes, metric in zip(grid[:2].flat, PLOTTED, strict=True):
        for position, (system, table) in enumerate(by_type.items()):
            values = [getattr(table[kind], metric) if kind in table else None for kind in types]
            heights = [np.nan if value is None else value for value in values]
            axes.bar(x + (position - (len(by_type) - 1) / 2) * width, heights, width, label=system)
        axes.set_title(metric)
        axes.set_xticks(x, types, rotation=35, ha="right")
        axes.set_ylim(0, 1.05)
    if by_type:
        figure.axes[0].legend(loc="lower left", fontsize="small")
    for axes in grid[2]:
        axes.set_axis_off()
    if report.verifier is not None:
        _plot_verifier(grid[2][0], report.verifier)
    figure.savefig(path, dpi=100)


def _plot_verifier(axes, verifier: VerifierReport) -> None:
    metrics = verifier.metrics()
    names = ["faithful_kept", "unfaithful_removed", "faithful_answers_generated"]
    names += [name for name in metrics if name.startswith("removed_")]
    values = [metrics[name] if metrics[name] is not None else float("nan") for name in names]
    axes.set_axis_on()
    axes.bar(range(len(names)), values, color="tab:green")
    axes.set_xticks(
        range(len(names)), [n.removeprefix("removed_") for n in names], rotation=35, ha="right"
    )
    axes.set_ylim(0, 1.05)
    axes.set_title(f"verifier ({verifier.verifier}) on labelled answers")
