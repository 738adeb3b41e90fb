"""Make every default work with no network, without overriding what the user set."""

from __future__ import annotations

import os
from importlib.util import find_spec
from pathlib import Path


def _llama_index_tiktoken_cache() -> str | None:
    spec = find_spec("llama_index.core")
    if spec is None or not spec.submodule_search_locations:
        return None
    cache = Path(next(iter(spec.submodule_search_locations))) / "_static" / "tiktoken_cache"
    return str(cache) if cache.is_dir() else None


def apply_offline_defaults() -> None:
    """Set the environment so no library phones home or downloads at run time."""
    defaults = {
        "HF_HUB_OFFLINE": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "ANONYMIZED_TELEMETRY": "False",
        "GRADIO_ANALYTICS_ENABLED": "False",
        "TOKENIZERS_PARALLELISM": "false",
    }
    cache = _llama_index_tiktoken_cache()
    if cache:
        defaults["TIKTOKEN_CACHE_DIR"] = cache
    for name, value in defaults.items():
        os.environ.setdefault(name, value)
