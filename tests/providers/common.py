"""Shared test vocabulary: the tools and schemas the scenarios use, and a stream collector."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from agent_core.models import LanguageModel, Message, ModelDone, ModelRequestInfo, TextDelta, ToolSpec


class WeatherInput(BaseModel):
    """Current weather for a city."""

    city: str
    unit: Literal["c", "f"] = "c"


class Answer(BaseModel):
    approved: bool
    reason: str | None = None
    retries: int = 1


WEATHER = ToolSpec(
    name="get_weather", description="Current weather for a city", input_schema=WeatherInput.model_json_schema()
)
RUN = ModelRequestInfo(tools=[WEATHER])
STRUCTURED = ModelRequestInfo(output_schema=Answer.model_json_schema(), purpose="resume")
SYSTEM = Message(role="system", content="You are a weather bot.")
ASK = Message(role="user", content="Weather in Paris?")


async def collect(model: LanguageModel, messages: list[Message], info: ModelRequestInfo) -> tuple[list[str], ModelDone]:
    """Deltas and the one ``ModelDone``; asserts the event protocol on the way."""
    deltas: list[str] = []
    done: list[ModelDone] = []
    async for event in model.stream(messages, info):
        assert not done, "nothing may follow ModelDone"
        if isinstance(event, TextDelta):
            deltas.append(event.text)
        else:
            assert isinstance(event, ModelDone)
            done.append(event)
    assert len(done) == 1
    return deltas, done[0]
