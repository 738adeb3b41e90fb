"""citeqa's web UI (Gradio): `citeqa ui`, or `build_app()` / `launch()` from Python."""

from .app import build_app, launch, start

__all__ = ["build_app", "launch", "start"]
