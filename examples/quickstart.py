"""skillshelf quick start: a Python tool skill and a folder of SKILL.md skills on one agent.

Runs offline with a scripted model and prints the conversation: the catalog, a search, a load, a
skill tool call and an unload, with the size of what the model received on each request next to
what it would receive if every skill's instructions and tools were in context at once.

    python examples/quickstart.py                          # offline, scripted model
    python examples/quickstart.py --model openai:gpt-5.2   # a real model (needs its API key and extra)
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models import Model, ModelRequestContext
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset

sys.path.insert(0, str(Path(__file__).parent))
from weather_skill import weather

from skillshelf import Skills

SKILLS_DIR = Path(__file__).resolve().parent.parent / 'skills'
PROMPT = 'Will it be sunny in Lisbon this weekend? Then help me word the commit for my weather-widget fix.'


@dataclass
class RequestMeter(AbstractCapability[Any]):
    """Records how many characters of instructions and tool definitions each model request carries."""

    sizes: list[tuple[int, int]] = field(default_factory=list[tuple[int, int]])

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        last = request_context.messages[-1]
        instructions = last.instructions if isinstance(last, ModelRequest) else None
        tools = request_context.model_request_parameters.function_tools
        self.sizes.append((len(instructions or ''), len(tool_json(tools))))
        return request_context


def tool_json(tools: list[ToolDefinition]) -> str:
    """Tool definitions as a provider receives them: name, description and JSON schema."""
    return json.dumps(
        [{'name': t.name, 'description': t.description, 'parameters': t.parameters_json_schema} for t in tools]
    )


def scripted_model() -> Model:
    """A model that plays the conversation a capable model would have, offline."""
    steps: list[list[Any]] = [
        [ToolCallPart('search_skills', {'query': 'weather forecast for a city'})],
        [ToolCallPart('load_skill', {'name': 'weather'})],
        [ToolCallPart('get_forecast', {'city': 'Lisbon', 'days': 2})],
        [ToolCallPart('unload_skill', {'name': 'weather'}), ToolCallPart('load_skill', {'name': 'commit-messages'})],
        [ToolCallPart('read_skill_resource', {'name': 'commit-messages', 'path': 'examples.md'})],
        [TextPart('Lisbon: sunny, 21-22 °C both days. Commit: "Show the forecast unit in the weather widget".')],
    ]

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        turn = sum(isinstance(message, ModelResponse) for message in messages)
        return ModelResponse(parts=steps[min(turn, len(steps) - 1)])

    return FunctionModel(respond, model_name='scripted')


def everything_in_context(skills: Skills[Any]) -> int:
    """Characters if every skill's instructions and tool definitions were sent on every request instead."""
    total = 0
    for skill in skills.library.skills.values():
        total += len(skill.load_instructions())
        if skill.tool_names:
            total += len(tool_json(tool_definitions(skill.toolset)))
    return total


def tool_definitions(toolset: AbstractToolset[Any]) -> list[ToolDefinition]:
    """The definitions a model would receive for `toolset`, read from a real (test-model) request."""
    model = TestModel(call_tools=[])
    Agent(model, toolsets=[toolset]).run_sync('list the tools')
    assert model.last_model_request_parameters is not None
    return model.last_model_request_parameters.function_tools


def show(messages: list[ModelMessage]) -> None:
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                print(f'  model  -> {part.tool_name}({part.args_as_json_str()})')
            elif isinstance(part, ToolReturnPart):
                text = part.model_response_str()
                print(f'  tool   <- {text[:300]}{" …" if len(text) > 300 else ""}'.replace('\n', '\n            '))
            elif isinstance(part, TextPart):
                print(f'  model  : {part.content}')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--model', help='a real model name such as openai:gpt-5.2 (default: offline scripted model)')
    args = parser.parse_args()

    skills = Skills(SKILLS_DIR, skills=[weather])
    meter = RequestMeter()
    agent = Agent(args.model or scripted_model(), capabilities=[skills, meter])

    print('Catalog in the instructions (identical on every request):\n')
    print('  ' + skills.get_instructions().replace('\n', '\n  '))
    print(f'\nUser: {PROMPT}\n')
    result = agent.run_sync(PROMPT)
    show(result.new_messages())

    full = everything_in_context(skills)
    print('\nWhat the model received per request (instructions + tool definitions):')
    for number, (instructions, tools) in enumerate(meter.sizes, start=1):
        total = instructions + tools
        print(
            f'  request {number}: {total:6,} chars ≈ {total // 4:5,} tokens  (instructions {instructions:,}, tools {tools:,})'
        )
    print(f'  every skill in context instead: {full:,} chars ≈ {full // 4:,} tokens on every request')


if __name__ == '__main__':
    main()
