"""Prompt templates, read from the `prompts/` folder (shipped inside the wheel)."""

from __future__ import annotations

from functools import cache
from pathlib import Path


def prompts_dir() -> Path:
    packaged = Path(__file__).parent / "_data" / "prompts"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parent.parent / "prompts"


@cache
def load_prompt(name: str) -> str:
    """The text of `prompts/<name>.txt`, trailing newline removed."""
    return (prompts_dir() / f"{name}.txt").read_text(encoding="utf-8").rstrip("\n")


def render(name: str, **values: object) -> str:
    """The prompt `name` with `{placeholders}` filled in (values are inserted verbatim)."""
    return load_prompt(name).format_map(values)
