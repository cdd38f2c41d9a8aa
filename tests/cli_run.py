"""Run the ``cofabric`` command line in this process and capture what it prints.

One helper for the tests that check the CLI's exit status and its output (a bad input gets one
line on stderr and exit 2; a JSON answer on stdout), instead of a copy in each file.
"""
import io
from contextlib import redirect_stderr, redirect_stdout

from analysis._cli import main


def run_cli(argv):
    """``(exit status, stdout, stderr)`` of ``cofabric *argv``; an argparse exit is a status."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            rc = main(list(argv))
        except SystemExit as e:  # argparse: --help, a malformed option
            rc = e.code
    return rc, out.getvalue(), err.getvalue()
