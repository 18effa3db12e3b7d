"""The demo runtime: ``ops`` (four tools, each a different kind of gate) and ``supervisor``.

* ``delete_record`` requires approval and really deletes a row from a SQLite
  table of sample records (a sibling file of the store: ``<db>.records.sqlite``).
* ``issue_refund`` is gated by a policy function: amounts over 100 need approval.
* ``send_email`` requires approval (nothing is sent: the demo returns a message id).
* ``get_weather`` asks for the city (suspends) when none was given.
* ``supervisor`` delegates user look-ups to ``data_agent``, whose ``find_user`` requires approval.
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from agent_core import Agent, Runtime, ToolContext, create_tool
from agent_core.models import LanguageModel
from storage.urls import is_postgres_url, open_store
from warden_demo.model import DemoModel
from warden_demo.records import delete_row, records_path, seed_records

REFUND_APPROVAL_THRESHOLD = 100

USERS = {
    "12345": {"user_id": "12345", "name": "Ada Lovelace", "email": "ada@example.com", "plan": "pro"},
    "23456": {"user_id": "23456", "name": "Alan Turing", "email": "alan@example.com", "plan": "free"},
}


class DeleteInput(BaseModel):
    record_id: str = Field(description="ID of the record to delete")


class RefundInput(BaseModel):
    order_id: str = Field(description="Order to refund")
    amount: float = Field(gt=0, description="Amount to refund")


class EmailInput(BaseModel):
    to: str = Field(description="Recipient address")
    subject: str = Field(default="", description="Subject line")
    body: str = Field(default="", description="Message body")


class WeatherInput(BaseModel):
    city: str | None = Field(default=None, description="City; the tool asks when missing")


class WeatherQuestion(BaseModel):
    question: str


class WeatherResume(BaseModel):
    city: str = Field(min_length=1, description="City to get the weather for")
    units: Literal["metric", "imperial"] = Field(default="metric", description="Temperature units")


class FindUserInput(BaseModel):
    user_id: str = Field(description="User id to look up")


def _stable(*parts: Any) -> int:
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:8], 16)


def _weather(city: str, units: str) -> dict[str, Any]:
    celsius = 5 + _stable(city.lower()) % 25
    temperature = celsius if units == "metric" else round(celsius * 9 / 5 + 32)
    conditions = ["sunny", "cloudy", "light rain", "windy", "clear"][_stable(city.lower(), "c") % 5]
    return {"city": city, "temperature": temperature, "units": units, "conditions": conditions}


def refund_policy(call: Any) -> bool:
    """``require_tool_approval`` of ``ops``: only refunds above the threshold need a person."""
    if call.tool_name != "issue_refund":
        return False
    try:
        return float(call.args.get("amount", 0)) > REFUND_APPROVAL_THRESHOLD
    except (TypeError, ValueError):
        return True


def build_demo_agents(db_path: str | Path, *, model: LanguageModel | None = None) -> dict[str, Agent]:
    records = records_path(db_path)
    seed_records(records)
    model = model or DemoModel()

    async def delete_record(input: DeleteInput, ctx: ToolContext) -> dict[str, Any]:
        return await asyncio.to_thread(delete_row, records, input.record_id)

    async def issue_refund(input: RefundInput, ctx: ToolContext) -> dict[str, Any]:
        return {
            "refund_id": f"rf-{input.order_id}",
            "order_id": input.order_id,
            "amount": input.amount,
            "status": "issued",
        }

    async def send_email(input: EmailInput, ctx: ToolContext) -> dict[str, Any]:
        return {"sent": True, "to": input.to, "message_id": f"msg-{_stable(input.to, input.body):08x}"}

    async def get_weather(input: WeatherInput, ctx: ToolContext) -> Any:
        resume = ctx.resume_data
        if resume is not None:
            data = resume if isinstance(resume, dict) else resume.model_dump()
            return _weather(data["city"], data.get("units", "metric"))
        if input.city:
            return _weather(input.city, "metric")
        return await ctx.suspend({"question": "Which city should I get the weather for?"})

    async def find_user(input: FindUserInput, ctx: ToolContext) -> dict[str, Any]:
        return USERS.get(input.user_id, {"user_id": input.user_id, "found": False})

    ops = Agent(
        id="ops",
        name="Ops agent",
        model=model,
        instructions="You operate on records, refunds, emails and weather for the operator.",
        description="Records, refunds, emails, weather",
        tools={
            "delete_record": create_tool(
                id="delete-record",
                description="Delete a record by ID",
                input_schema=DeleteInput,
                execute=delete_record,
                require_approval=True,
            ),
            "issue_refund": create_tool(
                id="issue-refund", description="Refund an order", input_schema=RefundInput, execute=issue_refund
            ),
            "send_email": create_tool(
                id="send-email",
                description="Send an email",
                input_schema=EmailInput,
                execute=send_email,
                require_approval=True,
            ),
            "get_weather": create_tool(
                id="get-weather",
                description="Current weather for a city",
                input_schema=WeatherInput,
                suspend_schema=WeatherQuestion,
                resume_schema=WeatherResume,
                execute=get_weather,
                require_approval=False,
            ),
        },
        default_options={"require_tool_approval": refund_policy, "max_steps": 6},
    )
    data_agent = Agent(
        id="data-agent",
        name="Data agent",
        model=model,
        instructions="You look up users.",
        description="Looks up users (needs approval)",
        tools={
            "find_user": create_tool(
                id="find-user",
                description="Find a user by id",
                input_schema=FindUserInput,
                execute=find_user,
                require_approval=True,
            )
        },
    )
    supervisor = Agent(
        id="supervisor",
        name="Supervisor",
        model=model,
        instructions="Delegate user look-ups to data_agent.",
        description="Delegates to data_agent",
        agents={"data_agent": data_agent},
        default_options={"max_steps": 6},
    )
    return {"ops": ops, "supervisor": supervisor}


#: Prompts the offline demo model understands, per demo agent (the console's first screen shows them).
EXAMPLES: dict[str, tuple[str, ...]] = {
    "ops": (
        "delete record abc-123",
        "refund order ord-1042 for 250",
        "send an email to ana@example.com saying hello",
        "what's the weather",
    ),
    "supervisor": ("find user 12345",),
}


def build_demo_runtime(
    db_path: str | Path, *, model: LanguageModel | None = None, frameworks: bool = False, **store_options: Any
) -> Runtime:
    """The demo agents on the store ``db_path`` names (a SQLite path or a ``postgresql://`` URL).

    ``frameworks``: also one agent of each framework whose extra is installed (``warden_demo.frameworks``)."""
    if not is_postgres_url(db_path):
        Path(db_path).parent.mkdir(parents=True, exist_ok=True)
    agents: dict[str, Any] = dict(build_demo_agents(db_path, model=model))
    if frameworks:
        from warden_demo.frameworks import framework_agents

        agents.update(framework_agents(db_path))
    return Runtime(agents=agents, storage=open_store(db_path, **store_options))
