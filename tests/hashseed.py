"""Run a script in fresh interpreters under different string-hash seeds.

Determinism tests use it: set and dict order of names must never reach an output, and a
second process with another ``PYTHONHASHSEED`` is the only way to see that it does not.
"""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def same_output_under_hash_seeds(script, seeds=("1", "2")):
    """Run ``python -c script`` from the project root once per seed; assert every run
    succeeds and prints the same bytes; return that output."""
    outs = []
    for seed in seeds:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env["PYTHONHASHSEED"] = seed
        p = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, check=False,
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        outs.append(p.stdout)
    assert all(out == outs[0] for out in outs[1:])
    return outs[0]
