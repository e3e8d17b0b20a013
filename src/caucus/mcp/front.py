"""`caucus bridge`'s fast front: a host sees the tools at once, while the MCP SDK loads.

A host waits for its first answers before it shows a server's tools (Gemini CLI gives up
after 5 s; Claude Code starts the model's turn without them). The MCP SDK alone takes about
half a second to import, several seconds on a loaded machine. So the bridge's process starts
here, on the standard library: it reads the host's first lines itself and answers them from
`front.json`, the SDK's own answers recorded from the real bridge (`mcp/front_snapshot.py`; a
test keeps the file current), while a thread imports the SDK-served bridge and another asks
the hub for its limits (which fill the tool descriptions, as the SDK-served bridge fills them:
`mcp/listing.py`). Both protocol eras: the handshake era's `initialize`, `tools/list`,
`prompts/list`, `resources/list` and `ping`; the sessionless era's `server/discover` and the
same lists, each request's envelope read as the SDK reads it. A `subscriptions/listen` is
acknowledged (Claude Code waits for that before it lists anything) and held: the stream is the
SDK's to serve, and its own acknowledgement is dropped.

A hub that nothing answers for (its address refuses connections for `GRACE` seconds, and no
installed service started one) is said at the handshake: `initialize`, or the sessionless era's
first request, gets an error naming the hub and how to start it, and the bridge exits 1, so a
host's health check (`claude mcp list`, `gemini mcp list`) reports the server failed rather
than connected. A hub that is slow, or answers with something else, is not judged here.

At the first request the front does not answer (a `join`, a `tools/call`) or anything
unusual (a version it has no answer for, a cursor), it hands the stream over: the SDK is given
the host's opening again (an `initialize`, or a `server/discover` in the host's envelope,
under an id of its own, its answer dropped), so it settles on the same era, then everything
held since, in order, and serves from there on.

Nothing here may import more than the standard library and caucus's smallest modules: a test
checks the set.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from caucus.defaults import DEFAULT_HUB

SNAPSHOT = Path(__file__).with_name("front.json")
REPLAYED_ID = "caucus-front:initialize"
# Seconds the hub has to answer for its limits; tools/list waits for them as long as the
# SDK-served bridge does (HubClient's timeout), so a busy hub gets the same listing from both;
# an address where something else answers gets the defaults (nothing answering fails the
# handshake: GRACE below).
LIMITS_TIMEOUT = 10.0
# Seconds a hub that refuses connections has to come up before the handshake says it is down
# (a host started with its hub a moment apart still connects), and more when a service was
# started for it; within Gemini CLI's 5 s.
GRACE = 2.0
SERVICE_GRACE = 2.5
HUB_DOWN = -32000  # JSON-RPC's implementation-defined server error
READ_SIZE = 65536
# mcp/server.py's, which this must not import
TEXT_ONLY_HOSTS = frozenset({"claude-code", "codex-mcp-client"})
# The sessionless era's envelope (the SDK's PROTOCOL_VERSION_META_KEY and client-info key).
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_KEY = "io.modelcontextprotocol/clientInfo"
SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
LIST_FLAGS = ("toolsListChanged", "promptsListChanged", "resourcesListChanged")


@dataclass
class Handover:
    """What the SDK-served bridge continues from: lines to replay first (the host's
    `initialize` under `REPLAYED_ID`, its `initialized`), lines read and not answered, the bytes
    read past the last whole line, the listen streams the front acknowledged, and the wire's
    own descriptors."""

    wire_in: int
    wire_out: int
    replay: list[bytes] = field(default_factory=list)
    pending: list[bytes] = field(default_factory=list)
    rest: bytes = b""
    acknowledged: list[Any] = field(default_factory=list)


def parse_args(argv: list[str]) -> tuple[str, str | None] | None:
    """`--hub URL` and `--name NAME` (either as `--opt=value`), or None for anything else
    (`--help` among them), which the full command line handles."""
    hub, name = os.environ.get("CAUCUS_HUB") or DEFAULT_HUB, None
    args = list(argv)
    while args:
        arg = args.pop(0)
        flag, eq, value = arg.partition("=")
        if flag not in ("--hub", "--name"):
            return None
        if not eq:
            if not args:
                return None
            value = args.pop(0)
        if flag == "--hub":
            hub = value
        else:
            name = value
    return hub, name


def usable() -> bool:
    """The front reads a pipe (as every host gives its servers); anything else goes the plain
    way."""
    if sys.platform == "win32":
        return False
    try:
        mode = os.fstat(0).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def serve(hub_url: str, name: str | None) -> int:
    """Run the bridge, answering what the front can before the SDK-served bridge takes over."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C before anything joined: just end
    wire_in, wire_out = _claim_stdio()
    probe = _Probe(hub_url)
    snapshot = json.loads(SNAPSHOT.read_text("utf-8"))
    front = _Front(snapshot, probe, wire_out, name)
    reader = _Lines(wire_in)
    warm: _Background | None = None
    unanswered: list[bytes] = []
    while True:
        # The SDK loads once the host has its tools (or waits on a held stream) and nothing
        # it sent is left to answer: the import would only slow those answers down.
        if warm is None and (front.listed or front.holding) and not reader.buffered():
            warm = _Background(_warm_up)
        line = reader.next()
        if line is None:  # the host left before anything was joined: nothing to say goodbye to
            return 0
        if not front.answer(line):
            unanswered.append(line)
            break
        if front.refused:
            return 1
    (warm or _Background(_warm_up)).result()
    from caucus.mcp.bridge import Bridge, run_bridge

    pending = [*front.pending, *unanswered]
    handover = Handover(wire_in, wire_out, front.replay, pending, reader.rest, front.acknowledged)
    return run_bridge(Bridge(hub_url, name=name), handover)


class _Front:
    """The requests answered from the snapshot, and what the SDK will need replayed."""

    def __init__(self, snapshot: dict[str, Any], probe: _Probe, out: int, name: str | None):
        self._snapshot = snapshot
        self._probe = probe
        self._out = out
        self._name = name
        channel = os.environ.get("CAUCUS_CLAUDE_CHANNEL") == "1"
        self._flavour = "channel" if channel else "plain"  # as the bridge decides it
        self._era: str | None = None  # "handshake", or the sessionless era's version
        self._outputs = True  # output schemas listed: not for a host that reads text only
        self.listed = False  # once the tools are out, the SDK-served bridge starts loading
        self.holding = False  # a request only the SDK can answer waits for it
        self.replay: list[bytes] = []
        self.pending: list[bytes] = []  # lines the SDK will get after the replay, in order
        self.acknowledged: list[Any] = []  # listen streams the host has heard opened
        self.refused = False  # the handshake said the hub is down: the bridge ends

    def answer(self, line: bytes) -> bool:
        """Answer `line` (or keep it for the SDK); False hands the stream over with it."""
        try:
            message = json.loads(line)
        except ValueError:
            return False
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return False
        method, known = message.get("method"), "id" in message
        params = message.get("params") or {}
        if not isinstance(params, dict):
            return False
        if self._era is None:
            if not known:
                return False
            if self._probe.down():
                return self._refuse(message)
            if method == "initialize":
                return self._initialize(message)
            return self._open_sessionless(message, params) and self._answer(message, params)
        if not known:  # a notification: the SDK gets it, in order, once it serves
            (self.replay if method == "notifications/initialized" else self.pending).append(line)
            return True
        if self._era != "handshake" and _version(params) != self._era:
            return False
        if method == "subscriptions/listen" and self._era != "handshake":
            acknowledgement = _acknowledgement(message["id"], params)
            if acknowledgement is None:
                return False
            self._write(acknowledgement)
            self.acknowledged.append(message["id"])
            self.pending.append(line)  # the stream is the SDK's to serve once it takes over
            self.holding = True
            return True
        return self._answer(message, params)

    def _answer(self, message: dict[str, Any], params: dict[str, Any]) -> bool:
        if params.get("cursor") is not None:
            return False
        method = message.get("method")
        answers = self._answers()
        found: Any
        if method == "tools/list":
            outputs = self._outputs if self._era == "handshake" else _reads_json(params)
            found = {**answers.get("tools/list", {}), "tools": self._tools(outputs)}
            self.listed = True
        elif isinstance(method, str) and method in answers:
            found = answers[method]
        elif method == "ping" and self._era == "handshake":
            found = {}
        else:
            return False
        self._write({"jsonrpc": "2.0", "id": message["id"], "result": found})
        return True

    def _answers(self) -> dict[str, Any]:
        if self._era == "handshake":
            return dict(self._snapshot["lists"])
        found: dict[str, Any] = self._snapshot["sessionless"][self._era][self._flavour]
        return found

    def _initialize(self, message: dict[str, Any]) -> bool:
        params = message.get("params")
        version = params.get("protocolVersion") if isinstance(params, dict) else None
        answers = self._snapshot["initialize"].get(version)
        if answers is None:  # a version the snapshot has no answer for: the SDK negotiates
            return False
        result = answers[self._flavour]
        info = params.get("clientInfo") if isinstance(params, dict) else None
        # As the SDK-served bridge decides it (mcp/server.py, TEXT_ONLY_HOSTS; a test keeps
        # the two lists one).
        self._outputs = not (isinstance(info, dict) and info.get("name") in TEXT_ONLY_HOSTS)
        self._write({"jsonrpc": "2.0", "id": message["id"], "result": result})
        replayed = {**message, "id": REPLAYED_ID}
        self.replay.append(json.dumps(replayed).encode() + b"\n")
        self._era = "handshake"
        return True

    def _refuse(self, message: dict[str, Any]) -> bool:
        hub = self._probe.url
        said = (
            f"the Caucus hub at {hub} is not running (nothing answers there): start it with "
            "`caucus hub` (or `caucus service install` to keep one running), then reconnect "
            "this server"
        )
        error = {"code": HUB_DOWN, "message": said, "data": {"code": "hub_unavailable", "hub": hub}}
        self._write({"jsonrpc": "2.0", "id": message["id"], "error": error})
        print(f"caucus bridge: {said}", file=sys.stderr, flush=True)
        self.refused = True
        return True

    def _open_sessionless(self, message: dict[str, Any], params: dict[str, Any]) -> bool:
        """A first request in the sessionless era's envelope, of a version the snapshot has
        answers for: the SDK will be opened the same way, by a `server/discover` of its own."""
        version = _version(params)
        if version is None or version not in self._snapshot["sessionless"]:
            return False
        self._era = version
        opening = {"_meta": params["_meta"]}
        replayed = {"jsonrpc": "2.0", "id": REPLAYED_ID, "method": "server/discover"}
        self.replay.append(json.dumps({**replayed, "params": opening}).encode() + b"\n")
        return True

    def _tools(self, outputs: bool) -> list[dict[str, Any]]:
        from caucus.mcp.listing import fill_tools, listing_values

        limits = self._probe.limits(LIMITS_TIMEOUT) or self._snapshot["limits"]
        values = listing_values(limits, self._name or _default_name())
        return fill_tools(self._snapshot["tools"][self._flavour], values, with_outputs=outputs)

    def _write(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        while data:
            data = data[os.write(self._out, data) :]


def _version(params: dict[str, Any]) -> str | None:
    """The sessionless era's protocol version in a request's envelope, if it has one."""
    meta = params.get("_meta")
    version = meta.get(VERSION_KEY) if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None


def _acknowledgement(subscription: Any, params: dict[str, Any]) -> dict[str, Any] | None:
    """The listen stream's first frame, as the SDK's `ListenHandler` writes it (every kind
    asked for is honored, falsy ones left out); None for a filter the SDK should judge."""
    asked = params.get("notifications")
    if not isinstance(asked, dict) or not set(asked) <= {*LIST_FLAGS, "resourceSubscriptions"}:
        return None
    honored: dict[str, Any] = {}
    for flag in LIST_FLAGS:
        if not isinstance(asked.get(flag, False), bool):
            return None
        if asked.get(flag):
            honored[flag] = True
    uris = asked.get("resourceSubscriptions") or []
    if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
        return None
    if uris:
        honored["resourceSubscriptions"] = uris
    meta = {SUBSCRIPTION_KEY: subscription}
    return {
        "jsonrpc": "2.0",
        "method": ACKNOWLEDGED,
        "params": {"_meta": meta, "notifications": honored},
    }


def _reads_json(params: dict[str, Any]) -> bool:
    """Whether the host named in a sessionless request's envelope reads a result's JSON (as
    mcp/server.py decides it per request)."""
    info = params["_meta"].get(CLIENT_KEY)
    return not (isinstance(info, dict) and info.get("name") in TEXT_ONLY_HOSTS)


def _default_name() -> str | None:
    from caucus.domain.names import name_from

    return os.environ.get("CAUCUS_NAME") or name_from(Path.cwd().name)


def _claim_stdio() -> tuple[int, int]:
    """The wire's own descriptors; fd 0 reads nothing and fd 1 writes to stderr from here on,
    so nothing the process or its children print can corrupt the JSON-RPC stream."""
    wire_in = os.dup(0)
    wire_out = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return wire_in, wire_out


class _Lines:
    """Whole lines from a descriptor, read with plain blocking reads."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self.rest = b""

    def buffered(self) -> bool:
        return b"\n" in self.rest

    def next(self) -> bytes | None:
        while b"\n" not in self.rest:
            chunk = os.read(self._fd, READ_SIZE)
            if not chunk:
                return None
            self.rest += chunk
        line, _, self.rest = self.rest.partition(b"\n")
        return line + b"\n" if line.strip() else self.next()


class _Background:
    """A function run in a daemon thread, its exception re-raised where its result is taken."""

    def __init__(self, fn: Any) -> None:
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(fn,), daemon=True)
        self._thread.start()

    def _run(self, fn: Any) -> None:
        try:
            fn()
        except BaseException as exc:  # handed to the main thread
            self._error = exc

    def result(self) -> None:
        self._thread.join()
        if self._error is not None:
            raise self._error


def _warm_up() -> None:
    """Import the SDK-served bridge while the front answers; say any mistyped setting."""
    import caucus.mcp.bridge  # noqa: F401
    from caucus.config import unknown_variables

    for line in unknown_variables():
        print(f"warning: {line}", file=sys.stderr)


class _Probe:
    """Ask the hub for its limits (the listing's numbers), as the SDK-served bridge would; a
    hub that does not answer is started, if it is installed as a service, as the bridge's own
    start does."""

    def __init__(self, hub_url: str) -> None:
        self.url = hub_url.rstrip("/")
        self._done = threading.Event()
        self._settled = threading.Event()  # reached, or judged down, or failed otherwise
        self._down = False
        self._limits: dict[str, Any] | None = None
        threading.Thread(target=self._run, daemon=True).start()

    def limits(self, wait: float) -> dict[str, Any] | None:
        self._done.wait(wait)
        return self._limits

    def down(self) -> bool:
        """Whether nothing answers at the hub's address: known at once when a connection is
        made (or fails otherwise), after GRACE when the address keeps refusing."""
        self._settled.wait(GRACE + SERVICE_GRACE + 1.0)
        return self._down

    def _run(self) -> None:
        deadline = time.monotonic() + GRACE
        service: bool | None = None
        try:
            while True:
                try:
                    self._limits = self._get("/limits")
                    return
                except TimeoutError:
                    return  # slow, not down: the defaults fill the listing
                except OSError:  # nothing listens there (refused, unreachable, no such host)
                    if service is None:
                        from caucus.service import start_if_installed

                        service = start_if_installed()
                        deadline += SERVICE_GRACE if service else 0.0
                    if time.monotonic() >= deadline:
                        self._down = True
                        return
                    time.sleep(0.1)
                except ValueError:
                    return  # something answered: not judged here
        finally:
            self._settled.set()
            self._done.set()

    def _get(self, path: str) -> dict[str, Any] | None:
        """GET `path` from the hub: over a plain socket for http (urllib alone takes 30 ms to
        import, on the path to the host's first tools/list), through urllib for https."""
        from urllib.parse import urlsplit

        url = urlsplit(self.url + path)
        if url.scheme == "https":
            import urllib.request

            with urllib.request.urlopen(  # noqa: S310 - the hub's https URL
                url.geturl(), timeout=LIMITS_TIMEOUT
            ) as answer:
                return _object(answer.read())
        if url.scheme != "http" or url.hostname is None:
            raise ValueError(f"not a hub URL: {self.url}")
        import socket

        address = (url.hostname, url.port or 80)
        request = f"GET {url.path} HTTP/1.0\r\nHost: {url.netloc}\r\n\r\n".encode()
        raw = b""
        with socket.create_connection(address, LIMITS_TIMEOUT) as conn:
            self._settled.set()  # something listens: what it answers is the listing's
            conn.sendall(request)
            while chunk := conn.recv(READ_SIZE):
                raw += chunk
        head, _, body = raw.partition(b"\r\n\r\n")
        if head.split(b" ", 2)[1:2] != [b"200"]:
            raise ValueError(f"the hub answered {head[:40]!r}")
        return _object(body)


def _object(body: bytes) -> dict[str, Any] | None:
    found = json.loads(body)
    return found if isinstance(found, dict) else None
