"""Waiting rules: "when these events have happened, do this".

The engine keeps the set of event kinds seen so far. A rule is armed with a spec — one kind
(`On`), any of several (`AnyOf`), all of several (`AllOf`), nested as needed — and fires once,
the moment the seen-set matches it (at once, if it already does), handing back the actions it
calls for. `forget(kind)` takes a kind out of the seen-set, so a rule armed afterwards waits for
the next such event rather than matching the last one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from caucus.runtime.actions import Action


@dataclass(frozen=True, slots=True)
class On:
    kind: str

    def matches(self, seen: set[str]) -> bool:
        return self.kind in seen


@dataclass(frozen=True, slots=True)
class AnyOf:
    specs: tuple[Spec, ...]

    def matches(self, seen: set[str]) -> bool:
        return any(s.matches(seen) for s in self.specs)


@dataclass(frozen=True, slots=True)
class AllOf:
    specs: tuple[Spec, ...]

    def matches(self, seen: set[str]) -> bool:
        return all(s.matches(seen) for s in self.specs)


Spec = On | AnyOf | AllOf


def on(*kinds: type[Any] | str) -> Spec:
    """A spec from event classes or kind names: one kind, or any of several."""
    names = tuple(On(k if isinstance(k, str) else k.__name__) for k in kinds)
    return names[0] if len(names) == 1 else AnyOf(names)


def all_of(*specs: Spec) -> Spec:
    return AllOf(tuple(specs))


@dataclass(slots=True)
class Rule:
    name: str
    when: Spec
    then: Callable[[], Iterable[Action]]


@dataclass(slots=True)
class WaitingEngine:
    seen: set[str] = field(default_factory=set)
    armed: list[Rule] = field(default_factory=list)

    def arm(self, rule: Rule) -> list[Action]:
        """Wait for `rule.when`; if it already holds, the rule fires now."""
        if rule.when.matches(self.seen):
            return list(rule.then())
        self.armed.append(rule)
        return []

    def see(self, kind: type[Any] | str) -> list[Action]:
        """An event of `kind` happened: the actions of every rule that now matches, in the
        order the rules were armed."""
        self.seen.add(kind if isinstance(kind, str) else kind.__name__)
        fired = [r for r in self.armed if r.when.matches(self.seen)]
        if not fired:
            return []
        self.armed = [r for r in self.armed if r not in fired]
        return [action for rule in fired for action in rule.then()]

    def forget(self, kind: type[Any] | str) -> None:
        self.seen.discard(kind if isinstance(kind, str) else kind.__name__)

    def waiting(self, name: str) -> bool:
        """Whether a rule called `name` is armed and has not fired."""
        return any(r.name == name for r in self.armed)
