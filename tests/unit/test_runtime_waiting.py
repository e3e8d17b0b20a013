"""Waiting rules: one kind, any of several, all of several; a rule fires once, at once when
what it waits for has already happened; forgetting a kind makes a new rule wait for the next."""

from __future__ import annotations

from caucus.runtime.actions import Action, CheckThread, RunThread
from caucus.runtime.events import (
    ExistingAgentRetrieved,
    NewAgentCreated,
    NewThreadCreated,
    ThreadMessageAdded,
)
from caucus.runtime.waiting import Rule, WaitingEngine, all_of, on


def rule(name: str, when: object, action: Action | None = None) -> Rule:
    return Rule(name, when, lambda: [action or RunThread(name)])  # type: ignore[arg-type]


def test_a_rule_on_one_kind_fires_once_when_it_happens() -> None:
    engine = WaitingEngine()
    assert engine.arm(rule("t", on(ThreadMessageAdded))) == []
    assert engine.see(NewThreadCreated) == []
    assert engine.see(ThreadMessageAdded) == [RunThread("t")]
    assert engine.see(ThreadMessageAdded) == []  # fired: gone
    assert not engine.waiting("t")


def test_any_of_fires_on_the_first_of_its_kinds() -> None:
    engine = WaitingEngine()
    engine.arm(rule("agent", on(NewAgentCreated, ExistingAgentRetrieved)))
    assert engine.see(ExistingAgentRetrieved) == [RunThread("agent")]


def test_all_of_waits_for_every_kind() -> None:
    engine = WaitingEngine()
    engine.arm(rule("both", all_of(on(NewThreadCreated), on(ThreadMessageAdded))))
    assert engine.see(ThreadMessageAdded) == []
    assert engine.waiting("both")
    assert engine.see(NewThreadCreated) == [RunThread("both")]


def test_a_rule_whose_events_already_happened_fires_at_once() -> None:
    engine = WaitingEngine()
    engine.see(NewAgentCreated)
    assert engine.arm(rule("late", on(NewAgentCreated))) == [RunThread("late")]
    assert not engine.armed


def test_a_forgotten_kind_is_waited_for_again() -> None:
    engine = WaitingEngine()
    engine.see(ThreadMessageAdded)
    engine.forget(ThreadMessageAdded)
    assert engine.arm(rule("next", on(ThreadMessageAdded))) == []
    assert engine.see(ThreadMessageAdded) == [RunThread("next")]


def test_rules_that_match_together_fire_in_the_order_they_were_armed() -> None:
    engine = WaitingEngine()
    engine.arm(rule("first", on(NewThreadCreated)))
    engine.arm(rule("second", on(NewThreadCreated), CheckThread("second")))
    assert engine.see(NewThreadCreated) == [RunThread("first"), CheckThread("second")]
