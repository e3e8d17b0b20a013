"""Rows of the verb table (`caucus.wire.verbs`): room."""

from __future__ import annotations

from caucus.wire import queries as q
from caucus.wire import requests as rq
from caucus.wire.deliberations import DeliberationInfo, DeliberationList, PositionInfo
from caucus.wire.forms import DecisionList, FormInfo, FormList
from caucus.wire.room import (
    ChannelInfo,
    ChannelJoin,
    ChannelLeave,
    ChannelList,
    FloorInfo,
    FloorList,
)
from caucus.wire.verb import Verb
from caucus.wire.verbs.errors import AGENT, CHANNEL, FLOOR_ERRORS, FORM, PANEL, ROOM

JOIN_CHANNEL = Verb(
    "join_channel",
    "POST",
    "/channels/join",
    ChannelJoin,
    "Join (and create) a channel; a private one takes the operator's invitation",
    AGENT,
    "channels",
    {
        **CHANNEL,
        403: "private: not invited (`channel_private`)",
        409: "private asked of a public one, or closed",
    },
    request=rq.ChannelJoinRequest,
)


LEAVE_CHANNEL = Verb(
    "leave_channel",
    "POST",
    "/channels/leave",
    ChannelLeave,
    "Leave a channel",
    AGENT,
    "channels",
    {**CHANNEL, 404: "not a member"},
    request=rq.ChannelRequest,
)


SET_TOPIC = Verb(
    "set_topic",
    "POST",
    "/channels/topic",
    ChannelInfo,
    "Set a channel's topic (members only)",
    AGENT,
    "channels",
    {**CHANNEL, 403: "not a member", 404: "no such channel"},
    request=rq.TopicRequest,
)


CHANNELS = Verb(
    "channels",
    "GET",
    "/channels",
    ChannelList,
    "Every channel you may see (private ones you are in), its members and topic",
    ROOM,
    "channels",
    CHANNEL,
)


FLOOR = Verb(
    "floor",
    "POST",
    "/floor",
    FloorInfo,
    "Take, pass, drop, raise or lower your hand for, or look at, a scope's floor",
    AGENT,
    "floor",
    FLOOR_ERRORS,
    request=rq.FloorRequest,
)


FLOORS = Verb(
    "floors",
    "GET",
    "/floors",
    FloorList,
    "Every held floor and its raised hands",
    ROOM,
    "floor",
    FLOOR_ERRORS,
)


ASK_OPERATOR = Verb(
    "ask_operator",
    "POST",
    "/forms",
    FormInfo,
    "Ask the operator a bounded question; the answer goes to `to` and to you",
    AGENT,
    "forms",
    FORM,
    request=rq.AskRequest,
)


FORMS = Verb(
    "forms",
    "GET",
    "/forms",
    FormList,
    "Pending forms of your audiences (look before "
    "you ask); before joining, those asked of everyone",
    ROOM,
    "forms",
    FORM,
)


WITHDRAW_FORM = Verb(
    "withdraw_form",
    "POST",
    "/forms/{form_id}/cancel",
    FormInfo,
    "Take back a "
    "pending form of yours (an approval you stopped waiting for): canceled, with the "
    "reason, on the ledger; a later answer is 409 form_closed",
    AGENT,
    "forms",
    {
        **FORM,
        404: "no such form of yours",
        409: "the form was already answered or canceled",
    },
    request=rq.ReasonRequest,
    optional_body=True,
)


DECISIONS = Verb(
    "decisions",
    "GET",
    "/decisions",
    DecisionList,
    "What was decided, newest first: "
    "broadcast decisions and your channels' (before joining, the broadcast ones)",
    ROOM,
    "forms",
    FORM,
    query=q.DecisionsQuery,
)


CONVENE = Verb(
    "convene",
    "POST",
    "/deliberations",
    DeliberationInfo,
    "Convene a panel of peers on a subject; a chair decides; the ledger records it",
    AGENT,
    "deliberations",
    {**PANEL, 404: "no such deliberation, peer or channel"},
    request=rq.ConveneRequest,
)


DELIBERATIONS = Verb(
    "deliberations",
    "GET",
    "/deliberations",
    DeliberationList,
    "Deliberations this hub process runs or ran, newest first",
    AGENT,
    "deliberations",
    PANEL,
)


DELIBERATION = Verb(
    "deliberation",
    "GET",
    "/deliberations/{deliberation_id}",
    DeliberationInfo,
    "One deliberation: its panel, positions round by round, verdict and record",
    AGENT,
    "deliberations",
    {**PANEL, 404: "no such deliberation, peer or channel"},
)


SUBMIT_POSITION = Verb(
    "submit_position",
    "POST",
    "/deliberations/{deliberation_id}/position",
    PositionInfo,
    "Your position for the round under way (as the chair: your decision)",
    AGENT,
    "deliberations",
    {
        **PANEL,
        404: "no such deliberation, peer or channel",
        409: "no position is asked of you now",
    },
    request=rq.PositionRequest,
)
