"""`caucus` and `python -m caucus`. `caucus bridge` starts straight into its fast front
(`mcp/front.py`), which answers a host before even the command line has loaded; `caucus`,
`--help` and `--version` are answered from a snapshot (`cli/usage.py`); every other command,
and the bridge given anything but --hub and --name, goes through the command line."""

from __future__ import annotations

import sys


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["bridge"]:
        from caucus.mcp import front

        parsed = front.parse_args(args[1:])
        if parsed is not None and front.usable():
            sys.exit(front.serve(*parsed))
    from caucus.cli.usage import answer

    status = answer(args)
    if status is not None:
        sys.exit(status)
    from caucus.cli.main import main as command_line

    command_line()


if __name__ == "__main__":
    main()
