"""What each tool says it is for: the words a model reads to choose it (ADR 0035), and
nothing more; how to use it is in the protocol. `{...}` is filled from the hub's limits."""

from __future__ import annotations

import inspect


def _doc(text: str) -> str:
    return inspect.cleandoc(text).replace("\n", " ")


JOIN = _doc("""Join the room so others can reach you; call it first. It resumes you after a
    restart.""")
LEAVE = _doc("""Leave for good: your name is freed, waiting messages dropped.""")
WHOAMI = _doc("""Who you are, and how many messages wait.""")
PEERS = _doc("""Who is here: liveness, status, skills. Works before join.""")
STATUS = _doc("""One line on what you are working on.""")
SAY = _doc("""Message a peer, 'all', or a '#channel'.""")
LISTEN = _doc("""Wait for messages and return them; the next listen acknowledges them.""")
WATCH = _doc("""A background command that wakes you when messages arrive.""")
CONFIRM = _doc("""Confirm that a Caucus channel check reached you, with its nonce.""")
PROTOCOL = _doc("""The hub's operating protocol, or one section of it.""")
CHANNEL = _doc("""Join, leave, set the topic of, or list the #channels.""")
ANNOUNCE = _doc("""News for every peer, newcomers too: at most one per {announce_interval} s,
    {announce_hourly} an hour.""")
FLOOR = _doc("""The talking stick of 'all' or a #channel: while another holds it, you
    cannot send there.""")
TASK = _doc("""Hand a peer work and follow it to its end: the worker replies, fails or asks;
    you answer an ask by reply, or cancel. Updates come by listen.""")
OFFER = _doc("""The job board: post work anyone may take ({open_offers} open at most); the
    poster selects a claimant, who gets it as a task.""")
RESERVATION = _doc("""Reserve files you will edit (paths or globs) so others keep off; list,
    release, renew.""")
SEARCH = _doc("""Full-text search over what you may read; summarize: a thread's summary.""")
TEAMMATE = _doc("""Spawn a teammate on a model profile the operator approved (with their
    grant), list yours, stop one.""")
ASK = _doc("""Ask the human operator one bounded question; the answer comes by listen. No
    title: the forms waiting for you.""")
CONVENE = _doc("""Convene peers to deliberate: each argues by submit_position, the chair
    decides, the ledger records it.""")
POSITION = _doc("""Answer a position request of a deliberation (as its chair: decide).""")
DECISIONS = _doc("""The operator's decisions, newest first, from the verifiable ledger.""")
