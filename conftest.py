"""The one rule pytest must know for every path it is given, so it lives here, at the root
(setup.cfg's directory), not in tests/conftest.py: pytest reads a conftest.py only in a given
path's own directory and the directories above it, and a run that names a module of the
packages (``pytest fabric/_units.py``, its doctests) never read tests/conftest.py (session 33:
it started 2 workers). Everything else of the test harness is in tests/conftest.py."""


def pytest_xdist_auto_num_workers(config):
    """``-n auto`` (setup.cfg's addopts): one worker per core (pytest-xdist's own count), but a
    run that names ONE file (or tests of one file: a test file or a module's doctests) runs in
    this process: its workers would each import the packages and collect it again
    (tests/test_cli.py: 1.8 -> 5.0 s CPU), and ``--dist loadfile`` gives one file to one worker
    anyway."""
    named = {arg.split("::")[0] for arg in config.args}
    if len(named) == 1 and (config.invocation_params.dir / named.pop()).is_file():
        return 0
    return None
