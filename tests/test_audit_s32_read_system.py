"""Audit session 32: ``read_system`` given something other than TOML text.

``topologies.read_system(pathlib.Path("plan.toml"))``, the natural slip for
``load_system``, raised "AttributeError: 'PosixPath' object has no attribute 'removeprefix'"
(the byte order mark strip), as did None, an int or a list; bytes raised "a bytes-like object
is required, not 'str'", the wrong way round. Now a TypeError naming what it takes, and for a
path or bytes, what to call.
"""
import pathlib

import pytest

import topologies


@pytest.mark.parametrize("value, hint", [
    (pathlib.Path("plan.toml"), (r"got PosixPath\('plan.toml'\) \(a PosixPath\) \(to read a "
                                 r"file, load_system\(path\)\)")),
    (b"[system]", r"\(a bytes\) \(decode it first, or load_system\(path\) for a file\)"),
    (None, r"got None \(a NoneType\)$"), (123, r"got 123 \(an int\)$")])
def test_read_system_takes_text(value, hint):
    # (session 37: kind_error's sentence, its tail the hint; was 'read_system takes the TOML
    # text of a system file, a str, got ...')
    with pytest.raises(TypeError, match=r"^read_system's text must be the TOML text of a system "
                                        r"file \(a str\), .*" + hint):
        topologies.read_system(value)
