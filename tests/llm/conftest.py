"""The `llm` tier's model server: llama-cpp-python's OpenAI-compatible server on the real
Qwen2.5-Coder-0.5B model, on a loopback port, for the whole tier. Opt-in on a laptop
(`CAUCUS_LLM=1`), always on under `CI=true`, where nothing missing may skip it. If the server
dies, the test waiting on it fails at once with its exit status and the end of its log."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.llm.model import model_path, server_python
from tests.processes import Helper
from tests.waiting import eventually_sync

WANTED = os.environ.get("CI") == "true" or os.environ.get("CAUCUS_LLM") == "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if WANTED:
        return
    skip = pytest.mark.skip(
        reason="the llm tier is opt-in on a laptop: set CAUCUS_LLM=1 (the first run builds "
        "llama-cpp-python and assembles a 0.5B model, a few minutes; both are cached)"
    )
    for item in items:
        if "llm" in item.keywords:
            item.add_marker(skip)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def serve_model(log_dir: os.PathLike[str] | str) -> tuple[Helper, str]:
    """Start the model server; it and its OpenAI base URL, once it answers."""
    python, gguf = server_python(), model_path()
    port = _free_port()
    server = Helper(
        "the model server",
        [
            *(str(python), "-m", "llama_cpp.server", "--model", str(gguf)),
            *("--model_alias", "qwen", "--host", "127.0.0.1", "--port", str(port)),
            *("--n_ctx", "8192", "--seed", "7", "--n_threads", str(os.cpu_count() or 2)),
            # By default a new request cuts off the one being streamed: with two agents on
            # one server, each would lose the other's answers.
            *("--interrupt_requests", "False"),
        ],
        log=Path(log_dir) / "model-server.log",
        lasting=True,
    )
    base = f"http://127.0.0.1:{port}/v1"

    def answers() -> bool:
        try:
            return httpx2.get(f"{base}/models", timeout=2).status_code == 200
        except httpx2.TransportError:
            return False

    try:
        eventually_sync(answers, within=120, what="the model server to answer")
    except BaseException:
        server.stop()
        raise
    return server, base


# The tier's modules share one server, stopped once they are done: a generation a finished
# test abandoned would otherwise keep two cores busy for the rest of the suite.
@pytest.fixture(scope="package")
def llm_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The model server's OpenAI base URL; its log is in the run's temporary directory."""
    server, base = serve_model(tmp_path_factory.mktemp("llm"))
    try:
        yield base
    finally:
        server.stop()
