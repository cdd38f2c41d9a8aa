"""The small report's inputs: two small systems, every section, a small sweep.

conftest.py builds it once per test run (fixtures ``small_report`` and
``small_report_dir``); test_report.py checks its content and files, test_browser.py
opens it in a browser. Small sweeps keep the tests fast; the code paths are those of
the default report.
"""

SMALL = ("torus:3x3x3", "fattree:k=4")
OPS = ("all-reduce",)
SIZES = ("1KiB:1MiB:x32",)
