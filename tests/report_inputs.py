"""The small report's inputs: two small systems, every section, a small sweep.

conftest.py builds it once per test run (fixtures ``small_report`` and
``small_report_dir``); test_report.py checks its content and files, test_browser.py
opens it in a browser. Small sweeps keep the tests fast; the code paths are those of
the default report. ``CLI`` is the same report as ``cofabric report`` takes it, and
``COMMAND`` the command line the CLI writes into it: the fixture is built with that command,
so that the CLI's files (test_report.py, ``--jobs 2``) can be compared with it byte for byte.
"""

SMALL = ("torus:3x3x3", "fattree:k=4")
OPS = ("all-reduce",)
SIZES = ("1KiB:1MiB:x32",)

#: The same inputs as ``cofabric report`` arguments (after ``report``).
CLI = (*SMALL, "--sizes", *SIZES, "--ops", *OPS)
#: What the CLI records as the report's command (analysis._cli_report._command).
COMMAND = " ".join(("cofabric", "report", *CLI))
