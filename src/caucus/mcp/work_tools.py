"""The catalog's tools for work: tasks, the job board, file reservations and teammates
(`mcp/tools.py` declares them; each is one or two verbs of the hub's table)."""

from __future__ import annotations

from typing import Any

from caucus.errors import InvalidRequest
from caucus.mcp import args as a
from caucus.mcp.renderings import offers_text, reservations_text, tasks_text, teammates_text
from caucus.mcp.tool_call import Call, Reply, joined, needs, present
from caucus.wire.verbs import files, teams, work
from caucus.wire.work import OfferList, TaskList


async def task(call: Call, x: a.TaskArgs) -> Reply:
    port = await joined(call)
    act, t = a.TaskAction, x.action
    if t is act.LIST:
        state = x.state.value if x.state else None
        found = (await port.verb(work.LIST_TASKS, role=x.role.value, status=state)).tasks
        return TaskList(tasks=found), tasks_text(found, me=port.name, role=x.role.value)
    if t is act.READY:
        found = (await port.verb(work.READY_TASKS)).tasks
        return TaskList(tasks=found), tasks_text(found, me=port.name, role="ready")
    if t is act.SEND:
        to, content = needs(x.to, "to", t), needs(x.content, "content", t)
        terms = {"priority": x.priority, "on_failure": x.on_failure.value}
        task = await port.verb(
            work.SEND_TASK, to=to, content=content, subject=x.subject, **terms, **_waits(x)
        )
    elif t is act.DEPEND:
        task_id = needs(x.task_id, "task_id", t)
        task = await port.verb(work.DEPEND, task_id=task_id, blocked_by=x.blocked_by or [])
    else:
        task_id = needs(x.task_id, "task_id", t)
        if t is act.STATUS:
            task = await port.verb(work.TASK_STATUS, task_id=task_id)
        elif t is act.CANCEL:
            task = await port.verb(work.CANCEL_TASK, task_id=task_id)
        elif t is act.REPLY:
            result = needs(x.result, "result", t)
            task = await port.verb(work.REPLY_TASK, task_id=task_id, result=result)
        elif t is act.FAIL:
            error = needs(x.error, "error", t)
            task = await port.verb(work.FAIL_TASK, task_id=task_id, error=error)
        else:
            question = needs(x.question, "question", t)
            task = await port.verb(work.REQUEST_INPUT, task_id=task_id, question=question)
    return TaskList(tasks=[task]), tasks_text([task], me=port.name)


async def offer(call: Call, x: a.OfferArgs) -> Reply:
    port = await joined(call)
    act, o = a.OfferAction, x.action
    if o is act.LIST:
        state = x.state.value if x.state else None
        listed = await port.verb(work.LIST_OFFERS, status=state, matching=x.matching)
        found = listed.offers
        return OfferList(offers=found), offers_text(found, me=port.name, listing=True)
    if o is act.POST:
        content = needs(x.content, "content", o)
        terms: dict[str, Any] = {"priority": x.priority}
        if x.blocked_by:
            terms["blocked_by"] = x.blocked_by
        offer = await port.verb(
            work.POST_OFFER,
            content=content,
            subject=x.subject,
            required_skills=x.skills,
            **terms,
        )
    else:
        offer_id = needs(x.offer_id, "offer_id", o)
        if o is act.CLAIM:
            offer = await port.verb(work.CLAIM_OFFER, offer_id=offer_id, note=x.note)
        elif o is act.SELECT:
            claimant = needs(x.claimant, "claimant", o)
            offer = await port.verb(work.RESOLVE_OFFER, offer_id=offer_id, select=claimant)
        else:
            offer = await port.verb(work.RESOLVE_OFFER, offer_id=offer_id, withdraw=True)
    return OfferList(offers=[offer]), offers_text([offer], me=port.name)


async def reservation(call: Call, x: a.ReservationArgs) -> Reply:
    act, r = a.ReservationAction, x.action
    if r is act.LIST:  # who holds what: works before join
        port = await present(call)
        found = await port.verb(files.RESERVATIONS, holder=x.holder)
    else:
        port = await joined(call)
        if r is act.RESERVE:
            if not x.paths:
                raise InvalidRequest(f"paths is required for {r}", field="paths")
            found = await port.verb(
                files.RESERVE,
                paths=x.paths,
                exclusive=x.exclusive,
                ttl=x.ttl,
                reason=x.reason,
            )
        elif r is act.RELEASE:
            if not (x.ids or x.paths):
                found = await port.verb(files.RELEASE, all=True)  # everything the caller holds
            else:
                found = await port.verb(files.RELEASE, ids=x.ids or [], paths=x.paths or [])
        else:
            found = await port.verb(files.RENEW, ids=x.ids or [], ttl=x.ttl)
    return found, reservations_text(found, me=port.name, action=r.value)


async def teammate(call: Call, x: a.TeammateArgs) -> Reply:
    port = await joined(call)
    done = None
    if x.action is a.TeammateAction.SPAWN:
        prompt = needs(x.prompt, "prompt", x.action)
        profile = needs(x.profile, "profile", x.action)
        mate = await port.verb(
            teams.SPAWN, prompt=prompt, profile=profile, tools=x.tools or [], name=x.name
        )
        done = f"Spawned {mate.name} ({mate.spawn_id}): it joins in a moment."
    elif x.action is a.TeammateAction.STOP:
        spawn_id = needs(x.spawn_id, "spawn_id", x.action)
        mate = await port.verb(teams.STOP_TEAMMATE, spawn_id=spawn_id)
        done = f"Stopped {mate.name}." if mate.state == "ended" else f"Stopping {mate.name}."
    standing = await port.verb(teams.TEAMMATES)
    return standing, teammates_text(standing, done=done)


def _waits(x: a.TaskArgs) -> dict[str, Any]:
    return {"blocked_by": x.blocked_by} if x.blocked_by else {}
