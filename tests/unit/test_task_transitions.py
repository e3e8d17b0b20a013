"""The task transition table is data in the domain: who may move a task, from which states,
to which, checked with no database (issue 14: the rules move up)."""

from __future__ import annotations

import itertools

import pytest

from caucus.domain.tasks import (
    OPEN_STATES,
    TRANSITIONS,
    MoveRefused,
    TaskMove,
    TaskRole,
    TaskState,
    next_state,
)

EXPECTED = {
    # move: (who, from, to)
    TaskMove.COMPLETE: ("worker", {"pending", "in_progress"}, "completed"),
    TaskMove.FAIL: ("worker", {"pending", "in_progress"}, "failed"),
    TaskMove.ASK: ("worker", {"pending", "in_progress"}, "input_required"),
    TaskMove.ANSWER: ("sender", {"input_required"}, "pending"),
    TaskMove.CANCEL: ("sender", {"pending", "in_progress", "input_required"}, "canceled"),
}


def test_the_table_is_what_the_protocol_says() -> None:
    assert set(TRANSITIONS) == set(TaskMove)
    for move, (who, allowed, to) in EXPECTED.items():
        rule = TRANSITIONS[move]
        assert (rule.actor.value, {s.value for s in rule.allowed}, rule.to_state.value) == (
            who,
            allowed,
            to,
        ), move


@pytest.mark.parametrize(
    ("move", "state", "actor"), list(itertools.product(TaskMove, TaskState, TaskRole))
)
def test_every_move_from_every_state_by_either_party(
    move: TaskMove, state: TaskState, actor: TaskRole
) -> None:
    who, allowed, to = EXPECTED[move]
    if actor.value != who:
        with pytest.raises(MoveRefused) as refused:
            next_state(move, state, actor)
        assert refused.value.wrong_party
    elif state.value not in allowed:
        with pytest.raises(MoveRefused) as refused:
            next_state(move, state, actor)
        assert not refused.value.wrong_party
    else:
        assert next_state(move, state, actor).value == to


def test_no_move_leaves_an_ended_task() -> None:
    ended = [s for s in TaskState if s not in OPEN_STATES]
    assert {s.value for s in ended} == {"completed", "failed", "canceled", "expired"}
    for move, state in itertools.product(TaskMove, ended):
        for actor in TaskRole:
            with pytest.raises(MoveRefused):
                next_state(move, state, actor)
