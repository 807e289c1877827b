"""The ``simfl`` command line: run, resume, sweep, results, validate, list, plot.

Exit status: 0 success (also a run whose model diverged: summary.json and stderr warn
of it), 2 invalid scenario or arguments (one line naming the field,
the bad value and what is allowed), 1 a run that could not write its files (one line)
or a bug (a traceback), 141 when the output pipe closed early (``| head``), 130 on
Ctrl-C.
"""

from __future__ import annotations

import os
import sys
import traceback

from simfl.cli.campaigns import cmd_results, cmd_sweep
from simfl.cli.listing import LIST_TOPICS, cmd_list
from simfl.cli.parser import build_parser
from simfl.cli.plotting import cmd_plot
from simfl.cli.progress import Progress
from simfl.cli.runs import cmd_resume, cmd_run, cmd_validate
from simfl.core.errors import SimflError

__all__ = ["main", "build_parser", "LIST_TOPICS", "Progress", "cmd_run", "cmd_resume",
           "cmd_validate", "cmd_sweep", "cmd_results", "cmd_list", "cmd_plot"]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    try:
        status = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return status
    except SimflError as err:
        _error(args.command, str(err))
        return err.exit_status
    except BrokenPipeError:  # the reader left (``simfl validate x | head``): end quietly
        _silence_stdout()
        return 141
    except KeyboardInterrupt:
        print(f"simfl {args.command}: interrupted", file=sys.stderr)
        return 130
    except OSError as err:  # the file system refused (full disk, read-only folder...)
        where = f"{err.filename}: " if err.filename else ""
        _error(args.command, f"{where}{err.strerror or err}")
        return 1
    except SystemExit as stop:  # code simfl imported (a factory, a plugin) called sys.exit()
        _error(args.command, f"code called by the scenario exited (SystemExit({stop.code!r})) "
               "before simfl was done; nothing was completed")
        return 2
    except RecursionError:
        _error(args.command, "a value is nested too deeply")
        return 2
    except Exception:  # a bug: keep the traceback for the report
        traceback.print_exc()
        return 1


def _error(command: str, message: str) -> None:
    """Print ``message`` on one line of stderr."""
    print(f"simfl {command}: error: {message.replace(chr(13), ' ').replace(chr(10), ' ')}", file=sys.stderr)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's last flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a real file (tests capture it)
        pass
