"""The ``cofabric`` command line: a thin argparse shell over the public API.

Each subcommand lives in its own module ``analysis/_cli_<name>.py`` that
defines ``register(subparsers)``; the parser it adds sets ``func`` to a function
``run(args) -> int``. This module only assembles them and turns library errors
into one line on stderr with exit status 2, never a traceback.
"""

import argparse
import importlib
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
)


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        # argparse's default prints the usage too; one line is the contract.
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser():
    parser = _Parser(prog="cofabric",
                     description="Model AI supernode and cluster interconnect fabrics.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv=None):
    """Run the CLI; return the exit status (0 ok, 1 findings, 2 bad input)."""
    from fabric import FabricError

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (FabricError, ValueError, TypeError, OSError) as e:
        print(f"cofabric {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("cofabric: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
