"""citeqa benchmarks against llama-index baselines: `python -m bench [retrieval|answers|all]`.

Each system runs in its own subprocess (`bench.worker`) so that its peak memory is its
own; the parent times the cold command-line runs, prints the tables and writes the JSON.
"""
