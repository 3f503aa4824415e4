"""agent_loop(): the four steps, on the offline API."""

from pydantic import BaseModel

import dreamloop as dl
from dreamloop import scripts as S


class CityInput(BaseModel):
    city: str


@dl.tool(CityInput, read_only=True)
async def weather(input: CityInput) -> str:
    """The weather in a city."""
    return f"sunny in {input.city}"


async def test_four_steps_pair_results_and_extend_messages(offline):
    model = offline([
        S.reply("Checking.", S.tool_use("weather", {"city": "Paris"}, id="T1"),
                S.tool_use("nope", {}, id="T2")),
        S.reply("It is sunny."),
    ])
    messages = [{"role": "user", "content": "weather in Paris?"}]
    final = await dl.agent_loop(model, messages, [weather])
    assert final.content[0].text == "It is sunny."
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "T1", "content": "sunny in Paris"},
        {"type": "tool_result", "tool_use_id": "T2", "content": "Error: No such tool available: nope", "is_error": True},
    ]
    assert model.api.requests[1].body["messages"] == messages
