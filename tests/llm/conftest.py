"""The `llm` tier's model server: llama-cpp-python's OpenAI-compatible server on the real
Qwen2.5-Coder-0.5B model, on a loopback port, for the whole session. Opt-in on a laptop
(`CAUCUS_LLM=1`), always on under `CI=true`, where nothing missing may skip it."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.llm.model import model_path, server_python

WANTED = os.environ.get("CI") == "true" or os.environ.get("CAUCUS_LLM") == "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if WANTED:
        return
    skip = pytest.mark.skip(
        reason="the llm tier is opt-in on a laptop: set CAUCUS_LLM=1 (the first run builds "
        "llama-cpp-python and assembles a 0.5B model, several minutes; both are cached)"
    )
    for item in items:
        if "llm" in item.keywords:
            item.add_marker(skip)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


# The tier's modules share one server, stopped once they are done: a generation a finished
# test abandoned would otherwise keep two cores busy for the rest of the suite.
@pytest.fixture(scope="package")
def llm_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The model server's OpenAI base URL; its log is in the run's temporary directory."""
    python, gguf = server_python(), model_path()
    port = _free_port()
    log: Path = tmp_path_factory.mktemp("llm") / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                *(str(python), "-m", "llama_cpp.server", "--model", str(gguf)),
                *("--model_alias", "qwen", "--host", "127.0.0.1", "--port", str(port)),
                *("--n_ctx", "8192", "--seed", "7"),
                # By default a new request cuts off the one being streamed: with two agents
                # on one server, each would lose the other's answers.
                *("--interrupt_requests", "False"),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(
                    f"the model server exited {proc.returncode}:\n{log.read_text()[-3000:]}"
                )
            try:
                if httpx2.get(f"{base}/models", timeout=2).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"the model server did not answer in 120 s:\n{log.read_text()[-3000:]}")
            time.sleep(0.25)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
