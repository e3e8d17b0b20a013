"""`caucus verify` and `caucus anchor`: checking a decision ledger and recording its head."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from caucus.errors import CaucusError


def verify_command(
    path: Annotated[Path, typer.Argument(help="the ledger file (decisions.jsonl)")],
    anchors: Annotated[
        Path | None, typer.Option("--anchors", help="anchor file copied off the hub")
    ] = None,
    key: Annotated[
        Path | None, typer.Option("--key", help="Ed25519 key that signed the head")
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """Verify a decision ledger: 0 intact, 1 tampered, 2 usage, no such ledger or unreadable
    anchors."""
    from caucus.ledger.commands import verify

    if not path.is_file():
        # An absent ledger would verify as an empty one: say what is actually wrong.
        detail = f"no ledger at {path}" + (" (it is a directory)" if path.is_dir() else "")
        if json_output:
            print(json.dumps({"intact": False, "error": "not_found", "detail": detail}))
        Console(stderr=True, soft_wrap=True).print(
            f"{detail}; the hub's is decisions.jsonl beside its database (`caucus settings`)",
            style="red",
            markup=False,
            highlight=False,
        )
        raise typer.Exit(2)
    outcome = verify(path, anchors, key)
    if json_output:
        print(json.dumps(outcome.data))
    elif outcome.code == 0:
        print(outcome.message)
    else:
        Console(stderr=True, soft_wrap=True).print(
            outcome.message, style="red", markup=False, highlight=False
        )
    raise typer.Exit(outcome.code)


def anchor_command(
    path: Annotated[
        Path | None, typer.Argument(help="the ledger; default: the configured one")
    ] = None,
    key: Annotated[
        Path | None, typer.Option("--key", help="Ed25519 key to sign the head (created if missing)")
    ] = None,
    accept_tail: Annotated[
        bool,
        typer.Option(
            "--accept-tail",
            help="first move a head checkpoint that lags the chain (a writer stopped between "
            "its two steps) to the chain's end",
        ),
    ] = False,
    log: Annotated[Path | None, typer.Option("--log", help="the ledger (the same as PATH)")] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="a deliberation config.yaml: its log, then its anchor_command once the head "
            "is recorded",
        ),
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """Record the verified head in <ledger>.anchors, to copy where the hub cannot write."""
    from caucus.ledger.chain import accept_tail as accept
    from caucus.ledger.chain import anchor, anchors_path

    if config is not None:
        if path is not None or log is not None:
            Console(stderr=True).print("--config names the ledger; drop PATH/--log", style="red")
            raise typer.Exit(2)
        from caucus.cli.briefing import anchor_from_config

        anchor_from_config(config, json_output)
        return
    from caucus.config import load_settings

    ledger = path or log or load_settings().ledger_path()
    try:
        if accept_tail:
            old, new = accept(ledger)
            if new > old and not json_output:
                print(
                    f"accepted {new - old} records written past the checkpoint "
                    f"(it said {old} records; the chain has {new})"
                )
        entry = anchor(ledger)
        if key is not None:
            from caucus.ledger.signing import load_or_create_key, sign

            private, created = load_or_create_key(key, ledger)
            if created:
                print(f"created the signing key {key} (public half: {key}.pub)")
            entry["signature"] = sign(ledger, private, entry["count"], entry["head_hash"])[
                "signature"
            ]
    except CaucusError as exc:
        Console(stderr=True, soft_wrap=True).print(
            str(exc), style="red", markup=False, highlight=False
        )
        raise typer.Exit(1) from None
    if json_output:
        print(json.dumps(entry))
        return
    head = entry["head_hash"][:12]
    print(f"anchored {entry['count']} records (head {head}) in {anchors_path(ledger)}")
    print(
        "copy that file off this machine (a git commit, another host) so the hub cannot rewrite it"
    )
