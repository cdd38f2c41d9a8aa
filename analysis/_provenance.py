"""Provenance: which cofabric, which commit and which libraries produced a result.

A report or a figure is only as checkable as its inputs; :func:`provenance`
names the code that made it: the cofabric version (``fabric.__version__``, the
one place it is written; ``setup.cfg`` reads it), the git commit of the source
tree when it is the top of a git checkout (``git describe --always --dirty``; ``None``
otherwise, e.g. an installed wheel, even inside someone else's repository), Python's version and the versions of the
libraries the numbers depend on.
"""

import dataclasses
import functools
import pathlib
import platform
import subprocess

__all__ = ["LIBRARIES", "Provenance", "provenance"]

#: The libraries whose versions can change a result (solver, graph algorithms, drawing;
#: fonttools subsets the fonts a PDF figure embeds, so its release sets the PDFs' bytes).
LIBRARIES = ("networkx", "numpy", "scipy", "matplotlib", "fonttools")


@dataclasses.dataclass(frozen=True)
class Provenance:
    """What produced a result (see :func:`provenance`).

    Attributes
    ----------
    version : str
        cofabric's version.
    commit : str or None
        ``git describe --always --dirty`` of the source tree, or None outside a checkout.
    python : str
    libraries : tuple of (str, str)
        ``(name, version)`` of each of :data:`LIBRARIES`; ``"not installed"`` if missing.
    """

    version: str
    commit: str
    python: str
    libraries: tuple

    def as_dict(self):
        """JSON-ready: ``{"version", "commit", "python", "libraries": {name: version}}``."""
        return {"version": self.version, "commit": self.commit, "python": self.python,
                "libraries": dict(self.libraries)}

    def __str__(self):
        libs = ", ".join(f"{n} {v}" for n, v in self.libraries)
        return (f"cofabric {self.version} (commit {self.commit or 'unknown: not a git checkout'}); "
                f"Python {self.python}; {libs}")


def _library_version(name):
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def _git(where, *args):
    """``git -C where *args``'s output, or None if it fails (no git, not a repository)."""
    try:
        out = subprocess.run(["git", "-C", str(where), *args], check=False,
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    text = out.stdout.strip()
    return text if out.returncode == 0 and text else None


def _git_commit(where):
    """The commit of the source tree at ``where``, or None unless ``where`` is the top of a git
    checkout: an installed cofabric whose site-packages lies inside someone's repository (a
    ``.venv`` in their project) would otherwise report that repository's commit as its own."""
    top = _git(where, "rev-parse", "--show-toplevel")
    if top is None or pathlib.Path(top).resolve() != pathlib.Path(where).resolve():
        return None
    return _git(where, "describe", "--always", "--dirty", "--abbrev=12")


@functools.cache
def provenance():
    """The :class:`Provenance` of this process's cofabric (cached: it does not change).

    Examples
    --------
    >>> p = provenance()
    >>> import fabric; p.version == fabric.__version__
    True
    >>> [name for name, _ in p.libraries]
    ['networkx', 'numpy', 'scipy', 'matplotlib', 'fonttools']
    """
    import fabric

    root = pathlib.Path(fabric.__file__).resolve().parent.parent
    return Provenance(version=fabric.__version__, commit=_git_commit(root),
                      python=platform.python_version(),
                      libraries=tuple((n, _library_version(n)) for n in LIBRARIES))
