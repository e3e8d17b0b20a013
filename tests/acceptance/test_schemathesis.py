"""schemathesis against /openapi.json as each role (an agent, the observer, the operator, and
no token at all): no server error, and every answer is one the document declares, in the
shape it declares, over at least 4,000 generated cases. Bounded by examples per operation, not
by time, so a slow machine runs the same cases."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest

from tests.acceptance.hubproc import start_hub

pytestmark = pytest.mark.slow

CHECKS = ",".join(
    [
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_schema_conformance",
    ]
)
EXAMPLES = 8
GENERATED = re.compile(r"(\d+) generated")
SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")


def _run(url: str, role: str, token: str | None, workdir: Path) -> subprocess.Popen[str]:
    args = [
        str(SCHEMATHESIS),
        "run",
        f"{url}/openapi.json",
        "--checks",
        CHECKS,
        "--max-examples",
        str(EXAMPLES),
        "--phases",
        "examples,coverage,fuzzing",
        "--workers",
        "1",
        "--seed",
        "1212",  # the same cases every run; change it to explore
        "--generation-database",
        "none",
        "--no-color",
        # A stream that never ends, and the one route that ends the identity under test.
        "--exclude-path",
        "/operator/events",
        "--exclude-path",
        "/leave",
    ]
    if token is not None:
        args += ["-H", f"Authorization: Bearer {token}"]
    (workdir / role).mkdir()
    return subprocess.Popen(
        args,
        cwd=workdir / role,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )


def test_schemathesis_finds_no_server_error_and_no_undeclared_answer(tmp_path: Path) -> None:
    observer_file = tmp_path / "observer-token"
    observer_file.write_text("cauob_schemathesis-observer-0123456789\n")
    hub = start_hub(
        tmp_path / "st.db",
        "--observer-token-file",
        str(observer_file),
        # A valid long-poll (or a blocking A2A send) answers within a second.
        env={"CAUCUS_RECEIVE_TIMEOUT_MAX": "1", "CAUCUS_A2A_WAIT_MAX": "1"},
    )
    try:
        with httpx2.Client(base_url=hub.url) as http:
            agent = http.post("/register", json={"name": "fuzzed"}).json()["token"]
            operator = (tmp_path / "operator-token").read_text().strip()
        roles = {
            "agent": agent,
            "observer": observer_file.read_text().strip(),
            "none": None,
        }
        # The operator runs last: it may stop or reset the room, which changes what the
        # others would be answered (still documented, but less of the API exercised).
        runs = {role: _run(hub.url, role, token, tmp_path) for role, token in roles.items()}
        outputs = {role: run.communicate(timeout=900)[0] for role, run in runs.items()}
        operator_run = _run(hub.url, "operator", operator, tmp_path)
        outputs["operator"] = operator_run.communicate(timeout=900)[0]
        codes = {role: run.returncode for role, run in runs.items()}
        codes["operator"] = operator_run.returncode
    finally:
        hub.stop()
    cases = {}
    for role, output in outputs.items():
        found = GENERATED.findall(output)
        assert found, f"{role}: no summary\n{output[-3000:]}"
        cases[role] = int(found[-1])
    print(f"schemathesis: {sum(cases.values())} cases ({cases})")
    failed = {role: outputs[role][-6000:] for role, code in codes.items() if code != 0}
    assert not failed, "\n\n".join(f"--- {role} ---\n{text}" for role, text in failed.items())
    assert sum(cases.values()) >= 4000, cases
