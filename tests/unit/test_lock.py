"""The lockfiles ./dev installs from cover what pyproject.toml asks for, and agree."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s\\;]+)")


def pins(name: str) -> dict[str, Version]:
    found: dict[str, Version] = {}
    text = (ROOT / "requirements" / name).read_text()
    for line in text.splitlines():
        if match := PIN.match(line):
            found[canonicalize_name(match[1])] = Version(match[2])
    return found


def hashed_entries(name: str) -> list[str]:
    """Every pinned entry with the lines that continue it."""
    text = (ROOT / "requirements" / name).read_text()
    return [block for block in re.split(r"\n(?=[A-Za-z0-9])", text) if PIN.match(block)]


def project() -> dict[str, list[str]]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {
        "hub": data["dependencies"],
        "dev": data["dependencies"] + data["optional-dependencies"]["dev"],
    }


LOCKS = {"hub": "hub.txt", "dev": "dev.txt"}
# The locks are resolved on CPython 3.11 for Linux (./dev's lock_applies): markers are read there.
LOCKED_ON = default_environment() | {
    "python_version": "3.11",
    "sys_platform": "linux",
    "platform_system": "Linux",
    "platform_machine": "x86_64",
}


@pytest.mark.parametrize("which", LOCKS)
def test_every_requirement_is_pinned_within_its_range(which: str) -> None:
    locked = pins(LOCKS[which])
    for spec in project()[which]:
        requirement = Requirement(spec)
        if requirement.marker is not None and not requirement.marker.evaluate(LOCKED_ON):
            continue
        name = canonicalize_name(requirement.name)
        assert name in locked, (
            f"{requirement.name} is not in requirements/{LOCKS[which]}: run ./dev lock"
        )
        assert requirement.specifier.contains(locked[name], prereleases=True), (
            f"requirements/{LOCKS[which]} pins {name}=={locked[name]}, "
            f"outside {requirement.specifier}"
        )


@pytest.mark.parametrize("which", LOCKS)
def test_every_pin_carries_a_hash(which: str) -> None:
    for entry in hashed_entries(LOCKS[which]):
        assert "--hash=sha256:" in entry, entry.splitlines()[0]


def test_the_hub_lock_agrees_with_the_test_lock() -> None:
    hub, dev = pins("hub.txt"), pins("dev.txt")
    differ = {name: (str(v), str(dev.get(name))) for name, v in hub.items() if dev.get(name) != v}
    assert not differ, f"hub.txt and dev.txt pin differently: {differ}"
