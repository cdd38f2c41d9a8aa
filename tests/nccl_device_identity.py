"""Regenerate fabric._runtime._DEVICE_IDENTITY from an NVIDIA/nccl git clone.

For every change tag of a revision (:data:`fabric._runtime.PREDICTION_REVISIONS`) and every
kernel file a revision there describes (``fabric._runtime._change_files()``), the modelled
release tags older than the change tag whose file is identical to the change tag's:
``git diff -w v<old>-1 v<change>-1 -- src/device/<file>`` shows no change except in the
licence/copyright header (the leading comment block of both sides).

Run: ``PYTHONPATH=. python tests/nccl_device_identity.py /path/to/nccl.git`` (a bare clone is
enough); it prints the table to paste into fabric/_runtime.py.
tests/test_fidelity_releases.py checks the checked-in table against the clone when one is present.
"""

import re
import subprocess
import sys

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _git(git_dir, *args):
    return subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True,
                          text=True, check=False)


def _header_lines(text):
    """Number of lines of the leading comment block (licence/copyright header)."""
    n, inside = 0, False
    for line in text.splitlines():
        s = line.strip()
        if inside:
            n += 1
            if "*/" in s:
                inside = False
            continue
        if s.startswith("/*"):
            n += 1
            inside = "*/" not in s[2:]
            continue
        if s.startswith("//") or not s:
            n += 1
            continue
        break
    return n


def identical(git_dir, old, new, path):
    """True when ``path`` at tag ``old`` and at tag ``new`` differ at most in whitespace
    (``git diff -w``) and in their leading licence/copyright comment block."""
    a = _git(git_dir, "show", f"{old}:{path}")
    b = _git(git_dir, "show", f"{new}:{path}")
    if a.returncode or b.returncode:
        return False
    ha, hb = _header_lines(a.stdout), _header_lines(b.stdout)
    diff = _git(git_dir, "diff", "-w", "-U0", old, new, "--", path).stdout
    for line in diff.splitlines():
        m = HUNK.match(line)
        if not m:
            continue
        s1, n1 = int(m.group(1)), int(m.group(2) or 1)
        s2, n2 = int(m.group(3)), int(m.group(4) or 1)
        if (n1 and s1 + n1 - 1 > ha) or (n2 and s2 + n2 - 1 > hb):
            return False
    return True


FILE = re.compile(r"^diff --git a/(\S+) b/")


def _blobs(git_dir, specs):
    """``{"<rev>:<path>": text, or None where the file is absent}``, read by one ``git cat-file
    --batch`` process (the files of every tag at once)."""
    inp = "".join(s + "\n" for s in specs).encode()
    out = subprocess.run(["git", "--git-dir", git_dir, "cat-file", "--batch"], input=inp,
                         capture_output=True, check=True).stdout
    res, i = {}, 0
    for s in specs:
        nl = out.index(b"\n", i)
        head = out[i:nl].decode()
        i = nl + 1
        if head.endswith(" missing"):
            res[s] = None
            continue
        size = int(head.split()[2])
        res[s] = out[i:i + size].decode("utf-8", "replace")
        i += size + 1
    return res


def table(git_dir):
    """``{(file, change_version): tuple of older modelled versions identical}``: the rule of
    :func:`identical`, with every blob read in one ``git cat-file --batch`` and one ``git diff
    -w -U0`` per (older tag, change tag) over all of that change's files (review S8-R3: the
    same table, several times faster than one ``git`` call per file and tag)."""
    from fabric import _runtime as rt
    versions = sorted(rt.NCCL_RELEASE_DATES, key=rt._parse_version)
    changes = sorted(rt._change_files().items(), key=lambda i: rt._parse_version(i[0]))
    specs = sorted({f"v{v}-1:src/device/{f}" for change, files in changes for f in files
                    for v in versions if rt._parse_version(v) <= rt._parse_version(change)})
    blobs = _blobs(git_dir, specs)
    header = {s: _header_lines(t) for s, t in blobs.items() if t is not None}
    out = {}
    for change, files in changes:
        paths = [f"src/device/{f}" for f in sorted(files)]
        same = {f: [] for f in files}
        for v in versions:
            if rt._parse_version(v) >= rt._parse_version(change):
                continue
            old, new = f"v{v}-1", f"v{change}-1"
            diff = _git(git_dir, "diff", "-w", "-U0", old, new, "--", *paths).stdout
            changed, cur = set(), None
            for line in diff.splitlines():
                m = FILE.match(line)
                if m:
                    cur = m.group(1)
                    continue
                h = HUNK.match(line)
                if not h or cur is None:
                    continue
                s1, n1 = int(h.group(1)), int(h.group(2) or 1)
                s2, n2 = int(h.group(3)), int(h.group(4) or 1)
                ha, hb = header.get(f"{old}:{cur}"), header.get(f"{new}:{cur}")
                if ha is None or hb is None or (n1 and s1 + n1 - 1 > ha) or (
                        n2 and s2 + n2 - 1 > hb):
                    changed.add(cur)
            for f in files:
                p = f"src/device/{f}"
                if (blobs[f"{old}:{p}"] is not None and blobs[f"{new}:{p}"] is not None
                        and p not in changed):
                    same[f].append(v)
        out.update({(f, change): tuple(same[f]) for f in sorted(files)})
    return out


if __name__ == "__main__":
    for (f, change), same in table(sys.argv[1]).items():
        print(f"    ({f!r}, {change!r}): {' '.join(same)!r},")
