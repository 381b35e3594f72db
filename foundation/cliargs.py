"""The argument parser of every `merge-hold` subcommand: argparse, except that it never exits 2.

argparse exits 2 on a usage error; for a program run as a Claude Code hook, 2 means "block", and one
entry point serves both. Every subcommand exits 64 (EX_USAGE) instead, as `merge_hold.cli` does. The
guard itself parses its one option by hand and never loads argparse.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

EX_USAGE = 64


class ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(EX_USAGE)
