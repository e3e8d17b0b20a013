"""Every rule of the engine on a callable backend: parallel positions, rebuttal rounds while
the panel disagrees, early stops, the chair's verdict, dissent, retries, and the record."""

from __future__ import annotations

import json
import re
import threading
from collections import defaultdict
from typing import Any

import pytest

from caucus.deliberation.backends import as_completer
from caucus.deliberation.engine import (
    DeliberationError,
    ModelAnalyst,
    ModelChair,
    Outcome,
    Step,
    deliberate,
)
from caucus.deliberation.panel import DEFAULT_PANEL, DEFAULT_STANCES, Analyst
from caucus.ledger.verify import check_record

Said = str | Exception


def pos(stance: str, summary: str, confidence: float = 0.8, *refs: str) -> str:
    return json.dumps(
        {"stance": stance, "summary": summary, "confidence": confidence, "evidence": list(refs)}
    )


def verdict(stance: str, decision: str, confidence: float = 0.75) -> str:
    return json.dumps({"stance": stance, "decision": decision, "confidence": confidence})


class Script:
    """A model that answers by who is asked and in which round; a list is consumed one
    answer per attempt, and an Exception is raised as a backend failure."""

    def __init__(self, answers: dict[tuple[str, int], Said | list[Said]]) -> None:
        self.answers = {k: v if isinstance(v, list) else [v] for k, v in answers.items()}
        self.prompts: dict[tuple[str, int], list[str]] = defaultdict(list)
        self._lock = threading.Lock()

    def __call__(self, prompt: str) -> str:
        if prompt.startswith("You chair"):
            key = ("chair", 0)
        else:
            match = re.match(r"You are (\S+), one analyst", prompt)
            assert match is not None
            found = re.search(r"rebuttal round (\d)", prompt)
            key = (match.group(1).rstrip(","), int(found.group(1)) if found else 1)
        with self._lock:
            self.prompts[key].append(prompt)
            queue = self.answers[key]
            said = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(said, Exception):
            raise said
        return said


async def run(
    script: Script,
    *,
    rounds: int = 3,
    panel: tuple[Analyst, ...] = DEFAULT_PANEL,
    stances: tuple[str, ...] = DEFAULT_STANCES,
    evidence: list[dict[str, Any]] | None = None,
    steps: list[Step] | None = None,
) -> Outcome:
    backend = as_completer(script)
    on_step = steps.append if steps is not None else (lambda s: None)
    return await deliberate(
        "Ship the new storage engine?",
        [ModelAnalyst(a, backend, on_step) for a in panel],
        ModelChair(backend, on_step),
        evidence=evidence or [],
        stances=stances,
        max_rounds=rounds,
        on_step=on_step,
    )


async def test_a_split_panel_rebuts_then_the_chair_decides_and_dissent_is_recorded() -> None:
    script = Script(
        {
            ("advocate", 1): pos("approve", "faster"),
            ("skeptic", 1): pos("reject", "untested"),
            ("assessor", 1): pos("approve", "benchmarks hold"),
            ("advocate", 2): pos("approve", "faster, and tested now"),
            ("skeptic", 2): pos("reject", "still untested on PostgreSQL", 0.6),
            ("assessor", 2): pos("approve", "benchmarks hold"),
            ("chair", 0): verdict("approve", "Ship it behind a flag.", 0.7),
        }
    )
    outcome = await run(script, rounds=2)
    assert len(outcome.rounds) == 2
    assert outcome.verdict.decision == "Ship it behind a flag."
    assert [(p.agent, p.summary) for p in outcome.dissent] == [
        ("skeptic", "still untested on PostgreSQL")
    ]
    record = outcome.record().to_dict()
    assert record["schema_version"] == "0.2"
    assert next([p["summary"] for p in r] for r in record["rounds"]) == [
        "faster",
        "untested",
        "benchmarks hold",
    ]
    assert record["positions"][1]["confidence"] == 0.6
    assert record["confidence"] == 0.7
    assert record["dissent"] == [record["positions"][1]]
    sealed = {**record, "prev_hash": "0" * 64, "hash": "a" * 64}
    assert check_record(sealed) is None


async def test_the_chair_sees_every_final_position_and_their_summaries() -> None:
    script = Script(
        {
            ("advocate", 1): pos("approve", "ADVOCATE-ARGUMENT"),
            ("skeptic", 1): pos("reject", "SKEPTIC-ARGUMENT"),
            ("assessor", 1): pos("defer", "ASSESSOR-ARGUMENT"),
            ("chair", 0): verdict("defer", "Wait a week."),
        }
    )
    await run(script, rounds=1)
    (prompt,) = script.prompts[("chair", 0)]
    for name in ("advocate", "skeptic", "assessor"):
        assert f"Final position of {name}" in prompt
        assert f"{name.upper()}-ARGUMENT" in prompt


async def test_a_unanimous_panel_skips_the_rebuttal_rounds() -> None:
    script = Script(
        {
            **{(a.name, 1): pos("approve", f"{a.name} agrees") for a in DEFAULT_PANEL},
            ("chair", 0): verdict("approve", "Ship it."),
        }
    )
    outcome = await run(script, rounds=4)
    assert len(outcome.rounds) == 1
    assert not any(key[1] > 1 for key in script.prompts)
    record = outcome.record().to_dict()
    assert record["schema_version"] == "0.1"
    assert "rounds" not in record
    assert outcome.dissent == []


async def test_a_round_that_changes_nothing_stops_the_rebuttals() -> None:
    same = {
        ("advocate", 1): pos("approve", "a", 0.8),
        ("skeptic", 1): pos("reject", "b", 0.6),
        ("assessor", 1): pos("defer", "c", 0.5),
    }
    # Round 2 repeats round 1 (with whitespace and a confidence off in the fifth place).
    again = {
        ("advocate", 2): pos("approve", "  a ", 0.80001),
        ("skeptic", 2): pos("reject", "b", 0.6),
        ("assessor", 2): pos("defer", "c\n", 0.5),
    }
    script = Script({**same, **again, ("chair", 0): verdict("defer", "Not yet.")})
    outcome = await run(script, rounds=4)
    assert len(outcome.rounds) == 2
    assert not any(key[1] > 2 for key in script.prompts)


async def test_a_changed_argument_with_the_same_stance_goes_on_to_the_next_round() -> None:
    script = Script(
        {
            ("advocate", 1): pos("approve", "a"),
            ("skeptic", 1): pos("reject", "b"),
            ("assessor", 1): pos("defer", "c"),
            ("advocate", 2): pos("approve", "a, and a new point"),
            ("skeptic", 2): pos("reject", "b"),
            ("assessor", 2): pos("defer", "c"),
            ("advocate", 3): pos("approve", "a, and a new point"),
            ("skeptic", 3): pos("reject", "b"),
            ("assessor", 3): pos("defer", "c"),
            ("chair", 0): verdict("reject", "No."),
        }
    )
    outcome = await run(script, rounds=4)
    assert len(outcome.rounds) == 3  # round 3 changed nothing: stop there


async def test_max_rounds_bounds_a_panel_that_keeps_changing() -> None:
    answers: dict[tuple[str, int], Said | list[Said]] = {}
    for r in range(1, 5):
        answers[("advocate", r)] = pos("approve", f"point {r}")
        answers[("skeptic", r)] = pos("reject", f"counter {r}")
        answers[("assessor", r)] = pos("defer", f"hmm {r}")
    answers[("chair", 0)] = verdict("defer", "Later.")
    outcome = await run(Script(answers), rounds=3)
    assert len(outcome.rounds) == 3


async def test_rebuttals_show_each_analyst_the_others_positions_not_its_own_as_another() -> None:
    script = Script(
        {
            ("advocate", 1): pos("approve", "ADV1"),
            ("skeptic", 1): pos("reject", "SKEP1"),
            ("assessor", 1): pos("defer", "ASS1"),
            ("advocate", 2): pos("approve", "ADV1"),
            ("skeptic", 2): pos("reject", "SKEP1"),
            ("assessor", 2): pos("defer", "ASS1"),
            ("chair", 0): verdict("approve", "Go."),
        }
    )
    await run(script, rounds=2)
    (prompt,) = script.prompts[("skeptic", 2)]
    assert "Your previous position" in prompt
    assert "SKEP1" in prompt
    assert "Position of advocate" in prompt
    assert "Position of assessor" in prompt
    assert "Position of skeptic" not in prompt


async def test_custom_panel_and_stances_are_used_and_enforced() -> None:
    panel = (Analyst("cfo", "Mind the money."), Analyst("cto", "Mind the system."))
    stances = ("buy", "build")
    script = Script(
        {
            ("cfo", 1): [pos("approve", "x"), pos("buy", "cheaper")],  # approve: not a stance here
            ("cto", 1): pos("build", "fits"),
            ("cfo", 2): pos("buy", "cheaper"),
            ("cto", 2): pos("build", "fits"),
            ("chair", 0): verdict("build", "Build it."),
        }
    )
    steps: list[Step] = []
    outcome = await run(script, rounds=2, panel=panel, stances=stances, steps=steps)
    assert [p.stance for p in outcome.positions] == ["buy", "build"]
    assert "<stance> is one of: buy, build" in script.prompts[("cfo", 1)][0]
    retry = next(s for s in steps if s.kind == "retrying")
    assert retry.who == "cfo"
    assert "stance must be one of buy, build" in retry.detail


async def test_evidence_is_shown_to_every_analyst_and_kept_in_the_record() -> None:
    evidence = [{"source": "bench", "ref": "relay.txt", "msgs_per_s": 3213}]
    script = Script(
        {
            **{(a.name, 1): pos("approve", "ok", 0.9, "relay.txt") for a in DEFAULT_PANEL},
            ("chair", 0): verdict("approve", "Go."),
        }
    )
    outcome = await run(script, evidence=evidence)
    assert all("3213" in script.prompts[(a.name, 1)][0] for a in DEFAULT_PANEL)
    record = outcome.record().to_dict()
    assert record["evidence"] == evidence
    assert record["positions"][0]["evidence"] == ["relay.txt"]


async def test_a_malformed_answer_is_retried_and_a_second_one_names_the_analyst() -> None:
    script = Script(
        {
            ("advocate", 1): pos("approve", "a"),
            ("skeptic", 1): [
                "not json at all",
                '{"stance": "reject", "summary": "", "confidence": 1}',
            ],
            ("assessor", 1): pos("approve", "c"),
            ("chair", 0): verdict("approve", "Go."),
        }
    )
    with pytest.raises(DeliberationError) as caught:
        await run(script)
    message = str(caught.value)
    assert message.startswith("skeptic failed after 2 attempts — ")
    assert "summary must be a non-empty string" in message
    first, second = script.prompts[("skeptic", 1)]
    assert "could not be used" not in first
    assert "Your previous answer could not be used: the answer holds no JSON object" in second


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ('{"stance": "approve", "summary": "s", "confidence": true}', "must be a number"),
        ('{"stance": "approve", "summary": "s", "confidence": 1.5}', "from 0 to 1"),
        ('{"stance": "approve", "summary": "s", "confidence": "0.5"}', "must be a number"),
        ('{"stance": "maybe", "summary": "s", "confidence": 0.5}', "stance must be one of"),
        ('{"stance": "approve", "summary": "  ", "confidence": 0.5}', "non-empty"),
    ],
)
async def test_answers_that_break_a_rule_are_not_positions(bad: str, why: str) -> None:
    script = Script(
        {
            ("advocate", 1): bad,
            ("skeptic", 1): pos("reject", "b"),
            ("assessor", 1): pos("approve", "c"),
            ("chair", 0): verdict("approve", "Go."),
        }
    )
    with pytest.raises(DeliberationError, match=why):
        await run(script)


async def test_a_backend_failure_is_retried_and_then_reported_with_its_message() -> None:
    script = Script(
        {
            ("advocate", 1): [
                RuntimeError("claude exited with 1: rate limited (stderr tail)"),
                pos("approve", "a"),
            ],
            ("skeptic", 1): pos("approve", "b"),
            ("assessor", 1): pos("approve", "c"),
            ("chair", 0): [RuntimeError("down"), RuntimeError("still down: stderr says 503")],
        }
    )
    steps: list[Step] = []
    with pytest.raises(DeliberationError) as caught:
        await run(script, steps=steps)
    assert str(caught.value) == (
        "chair failed after 2 attempts — the backend failed: still down: stderr says 503"
    )
    assert any(s.kind == "retrying" and "rate limited" in s.detail for s in steps)
    assert [s.kind for s in steps if s.who == "advocate"] == ["asking", "retrying", "answered"]


async def test_the_panel_answers_in_parallel() -> None:
    barrier = threading.Barrier(3, timeout=10)

    def model(prompt: str) -> str:
        if prompt.startswith("You chair"):
            return verdict("approve", "Go.")
        barrier.wait()  # only returns once all three analysts are being asked at once
        return pos("approve", "together")

    outcome = await deliberate(
        "s",
        [ModelAnalyst(a, as_completer(model), lambda s: None) for a in DEFAULT_PANEL],
        ModelChair(as_completer(model), lambda s: None),
        stances=DEFAULT_STANCES,
    )
    assert len(outcome.positions) == 3


async def test_rounds_outside_one_to_four_and_an_empty_subject_are_refused() -> None:
    script = Script({("chair", 0): verdict("approve", "Go.")})
    with pytest.raises(ValueError, match="rounds must be from 1 to 4"):
        await run(script, rounds=5)
    backend = as_completer(script)
    with pytest.raises(DeliberationError, match="subject is empty"):
        await deliberate(
            "  ",
            [ModelAnalyst(DEFAULT_PANEL[0], backend, print)],
            ModelChair(backend, print),
            stances=DEFAULT_STANCES,
        )


async def test_an_object_with_complete_is_a_backend_too() -> None:
    class Model:
        async def complete(self, prompt: str) -> str:
            if prompt.startswith("You chair"):
                return verdict("approve", "Go.")
            return pos("approve", "fine")

    backend = as_completer(Model())
    outcome = await deliberate(
        "s",
        [ModelAnalyst(a, backend, lambda s: None) for a in DEFAULT_PANEL],
        ModelChair(backend, lambda s: None),
        stances=DEFAULT_STANCES,
    )
    assert outcome.verdict.decision == "Go."
