"""The ``cofabric`` command line: a thin argparse shell over the public API.

Each subcommand lives in its own module ``analysis/_cli_<name>.py`` that
defines ``register(subparsers)``; the parser it adds sets ``func`` to a function
``run(args) -> int``. This module only assembles them and sorts what goes wrong:

* bad input (exit 2, one line on stderr, no traceback): a malformed argument
  (argparse), an error the project raises on purpose (:class:`fabric.FabricError`:
  a bad spec, an unknown name, a value out of range, no route left), or the
  operating system refusing a file (``OSError``);
* anything else is a bug in cofabric (exit 3): one line says so and names the
  exception; ``--debug`` shows the traceback instead.

Exit status 0 is success, 1 a command's findings (``cofabric check``).
``cofabric --version`` prints the version, the commit and the library versions
(:func:`analysis.provenance`).
"""

import argparse
import errno
import functools
import importlib
import itertools
import re
import sys

__all__ = ["main"]

# One entry per subcommand module, in the order ``cofabric --help`` lists them.
COMMAND_MODULES = (
    "analysis._cli_metrics",
    "analysis._cli_report",
    "analysis._cli_decode",
    "analysis._cli_serve",
    "analysis._cli_addr",
    "analysis._cli_route",
    "analysis._cli_cost",
    "analysis._cli_export",
    "analysis._cli_scaling",
)


#: argparse's message for a flag left without its value ("argument --size: expected one
#: argument"), which is all it says when the value starts with '-' ('-1KiB', '-1e3': argparse
#: reads only '-3' and '-0.5' as negative numbers, anything else as an option).
_MISSING_VALUE = re.compile(r"argument (\S+): expected (?:at least )?one argument")


class _Parser(argparse.ArgumentParser):
    def parse_known_args(self, args=None, namespace=None):
        self._arg_strings = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def format_help(self):
        # the epilog is an example command: kept on one line, unwrapped, so that it can be
        # copied whole (argparse would wrap it at the terminal's width, and at a hyphen)
        epilog, self.epilog = self.epilog, None
        try:
            text = super().format_help()
        finally:
            self.epilog = epilog
        return text + (f"\n{epilog}\n" if epilog else "")

    def _get_values(self, action, arg_strings):
        # an option's explicit value '--' ('--algorithm=--': the only way an option gets one)
        # is that text, as later Pythons read it; Python 3.11 drops it and hands the command
        # [] where a string was due (an internal error, exit 3). The type and the API refuse
        # '--' by name, as any other bad value.
        if action.option_strings and arg_strings == ["--"]:
            value = self._get_value(action, "--")
            self._check_value(action, value)
            return value if action.nargs in (None, argparse.OPTIONAL) else [value]
        return super()._get_values(action, arg_strings)

    def error(self, message):
        # argparse's default prints the usage too; one line is the contract. Its message may
        # quote an argument as given ("unrecognized arguments: --traffic=a<newline>b"): a
        # control character is written as its escape, so the line stays one and says it
        message = _explain(message, getattr(self, "_arg_strings", []))
        self.exit(2, f"{self.prog}: error: {_shortened(_one_line(message))}\n")


def _one_line(message):
    """``message`` with each character that is not printable written as its escape, so that
    the line stays one and says what the character was: a value quoted as given (a file name
    holding a newline, ``report --out 'a<newline>b'``: "a<newline>b already holds files", two
    lines) or a zero-width space, which would print as nothing.

    >>> print(_one_line("a\\nb already holds files"), _one_line("x\\u200b"))
    a\\nb already holds files x\\u200b
    """
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)


def _shortened(message):
    """``message`` with each run of non-blank characters cut as ``fabric._units.shorten`` cuts
    a long echoed value: argparse quotes an argument whole ("invalid choice: '<a
    5000-character argument>'" was a 5 KB line).

    >>> _shortened("argument --op: invalid choice: '" + "x" * 98 + "' (choose from 'a')")
    "argument --op: invalid choice: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... (100 characters) (choose from 'a')"
    """
    from fabric._units import shorten

    return re.sub(r"\S+", lambda m: shorten(m.group()), message)


def _explain(message, arg_strings):
    """argparse's ``message``, told why when a flag's value was taken for an option.

    >>> _explain("argument --size: expected one argument", ["--size", "-1KiB"])
    "argument --size: expected one argument, got '-1KiB', which reads as an option because it starts with '-'; write --size=-1KiB to pass it as the value"
    >>> _explain("argument --size: expected one argument", ["--size"])
    'argument --size: expected one argument'
    """
    found = _MISSING_VALUE.fullmatch(message)
    if found is None:
        return message
    names = found.group(1).split("/")
    for flag, value in itertools.pairwise(arg_strings):
        if flag in names and value.startswith("-") and value[1:2] in set("0123456789."):
            return (f"{message}, got {value!r}, which reads as an option because it starts "
                    f"with '-'; write {flag}={value} to pass it as the value")
    return message


def whole_number(text):
    """The ``type=`` of every integer flag: a whole number in ASCII digits 0-9, read by
    :func:`fabric._units.parse_integer` (the one reader of integers written as text).

    ``int`` would also read ``'\uff18'`` (fullwidth 8), Arabic-Indic digits, ``'+8'`` and
    ``'1_0'``; no integer flag takes a negative number. argparse puts the flag's name
    first: ``argument --batch: takes a whole number in ASCII digits 0-9, got '+8'``.
    Whether a number is in range is the API's to say (``decode_step`` refuses ``batch=0``
    by name).
    """
    from fabric import SpecError
    from fabric._units import integer_form, parse_integer, show_value

    try:
        return parse_integer(text, "")
    except SpecError as e:
        if text.strip().isascii() and text.strip().isdigit():   # digits, more than int reads
            raise argparse.ArgumentTypeError(str(e)) from None
        raise argparse.ArgumentTypeError(f"takes a whole number in {integer_form()}, got "
                                         f"{show_value(text)}") from None


def real_number(text):
    """The ``type=`` of every number flag that is not a count: read by
    :func:`fabric._units.parse_real` (ASCII digits, one '.', an exponent; ``nan`` and ``inf``
    pass to the API, whose finiteness check names the parameter). ``float`` would also read
    ``'\u0663'`` (Arabic-Indic 3) or fullwidth digits."""
    from fabric import SpecError
    from fabric._units import REAL_FORM, parse_real, show_value

    try:
        return parse_real(text, "")
    except SpecError:
        raise argparse.ArgumentTypeError(f"takes a number in {REAL_FORM}, got "
                                         f"{show_value(text)}") from None


#: Exit status of an internal error (a bug), apart from bad input (2) and findings (1).
EXIT_BUG = 3


class _Version(argparse.Action):
    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        from ._provenance import provenance

        print(provenance())
        parser.exit(0)


#: One example per subcommand, shown at the end of its ``--help``; each is a line of the
#: README's command-line block (tests/test_report_s21.py holds them to it, and
#: tests/test_audit_docs.py runs the README's lines).
EXAMPLES = {
    "metrics": "cofabric metrics torus:8x8x8 fattree:k=16",
    "report": "cofabric report sd200-ultra cluster-128 --out my-report",
    "figures": "cofabric figures",
    "decode": "cofabric decode sd200-ultra --model kimi-k2 --batch 64",
    "serve": "cofabric serve nvl72 --model kimi-k2 --isl 1024 --osl 1024",
    "check": "cofabric check examples/sd200-ultra.toml",
    "translate": "cofabric translate sd200-ultra --host host1 0x1000 --json",
    "route": "cofabric route sd200-ultra 0 127",
    "latency": "cofabric latency cluster-128 --transport rdma",
    "throughput": "cofabric throughput torus:4x4x4 --traffic all-to-all",
    "cost": "cofabric cost dgx-h100 --op all-reduce --size 1KiB:1GiB:x2",
    "export": "cofabric export nvl72 nvl72.graphml",
    "scaling": "cofabric scaling --out my-scaling",
}


def build_parser():
    parser = _Parser(prog="cofabric",
                     description="Model AI supernode and cluster interconnect fabrics.")
    parser.add_argument("--version", action=_Version,
                        help="print the version, commit and library versions, and exit")
    parser.add_argument("--debug", action="store_true",
                        help="on an internal error, show the traceback")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    for name, command in sub.choices.items():
        command.epilog = f"example: {EXAMPLES[name]}"
    return parser


@functools.cache
def _parser():
    """The parser :func:`main` reads its arguments with, built once a process: a build imports
    and registers every subcommand (~10 ms), which every in-process call of main paid (the
    suite makes ~2,000). Reading arguments leaves it as it was: no action keeps a value
    between calls (argparse copies an ``append`` default before adding to it) and every
    choice and default is fixed at the build. :func:`build_parser` builds a new one."""
    return build_parser()


def _said(e):
    """An error in one line: an OS error as 'FILE: reason' (the shell's spelling), not
    Python's "[Errno 2] No such file or directory: 'FILE'"; any other error as it says.

    >>> _said(FileNotFoundError(2, "No such file or directory", "x.toml"))
    'x.toml: No such file or directory'
    >>> _said(PermissionError(13, "Permission denied"))
    'Permission denied'
    >>> _said(FileNotFoundError(2, "No such file or directory", ""))   # as the shell: ''
    "'': No such file or directory"
    >>> _said(FileNotFoundError(2, "No such file or directory", "a\\nb.toml"))  # one line
    "'a\\\\nb.toml': No such file or directory"
    >>> _said(OSError(errno.ENAMETOOLONG, "File name too long", "x" * 5000))  # shortened
    "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... (5002 characters): File name too long"
    """
    if isinstance(e, OSError) and e.strerror:
        if e.filename is None:
            return e.strerror
        if e.errno == errno.ENAMETOOLONG:   # the system refused its length: no need to see it all
            from fabric._units import show_value

            return f"{show_value(e.filename)}: {e.strerror}"
        name = str(e.filename)
        # an empty name or one with a newline or other control character is quoted: the
        # message stays one line, and says what the name was
        return f"{name if name and name.isprintable() else repr(e.filename)}: {e.strerror}"
    return str(e)


def main(argv=None):
    """Run the CLI; return the exit status (0 ok, 1 findings, 2 bad input, 3 a bug)."""
    from fabric import FabricError

    args = _parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:
        # the reader went away (``cofabric ... | head``): nothing left to say to it
        sys.stderr.close()
        return 0
    except (FabricError, OSError) as e:
        print(f"cofabric {args.command}: error: {_one_line(_said(e))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("cofabric: interrupted", file=sys.stderr)
        return 130
    except Exception as e:
        if args.debug:
            raise
        print(f"cofabric {args.command}: internal error (a bug in cofabric, please report "
              f"it): {type(e).__name__}: {_one_line(str(e))}; run with --debug for the traceback",
              file=sys.stderr)
        return EXIT_BUG


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
