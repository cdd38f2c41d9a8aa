"""Run scripts in fresh interpreters: side by side, and under different string-hash seeds.

Determinism tests use it: set and dict order of names must never reach an output, and a
second process with another ``PYTHONHASHSEED`` is the only way to see that it does not.
"""
import contextlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_together(commands, *, env=None, cwd=ROOT, timeout=300):
    """Run each command (an argv list) as its own process, all started at once; return
    their ``subprocess.CompletedProcess`` (text stdout and stderr) in the same order.

    The same runs as ``subprocess.run`` one after another, but while the suite (one
    process) waits for them the second core works too. Their output goes to temporary
    files, not pipes, so that none stops at a full pipe while another is read. ``env`` is
    one mapping for all, or a list of one per command."""
    envs = env if isinstance(env, list) else [env] * len(commands)
    procs, outs, done = [], [], []
    with contextlib.ExitStack() as files:
        try:
            for argv, e in zip(commands, envs, strict=True):
                out, err = (files.enter_context(tempfile.TemporaryFile("w+")) for _ in "oe")
                outs.append((out, err))
                procs.append(subprocess.Popen(argv, cwd=cwd, env=e, stdout=out, stderr=err))
            for argv, p, pair in zip(commands, procs, outs):
                p.wait(timeout=timeout)
                texts = []
                for f in pair:
                    f.seek(0)
                    texts.append(f.read())
                done.append(subprocess.CompletedProcess(argv, p.returncode, *texts))
        finally:
            for p in procs:          # a failed or timed-out run leaves no process behind
                if p.poll() is None:
                    p.kill()
                    p.wait()
    return done


def same_output_under_hash_seeds(script, seeds=("1", "2")):
    """Run ``python -c script`` from the project root once per seed (the runs side by
    side); assert every run succeeds and prints the same bytes; return that output."""
    envs = []
    for seed in seeds:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env["PYTHONHASHSEED"] = seed
        envs.append(env)
    runs = run_together([[sys.executable, "-c", script]] * len(seeds), env=envs)
    for p in runs:
        assert p.returncode == 0, p.stderr
    assert all(p.stdout == runs[0].stdout for p in runs[1:])
    return runs[0].stdout
