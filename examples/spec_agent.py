"""Build an agent from a YAML spec (`examples/agent.yaml`) that names skill folders and a Python skill.

python examples/spec_agent.py                          # offline, scripted model
python examples/spec_agent.py --model openai:gpt-5.2   # the spec's real model (needs its API key and extra)
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # so the spec's `weather_skill:weather` import path resolves

from skillshelf import Skills  # noqa: E402


def scripted_model() -> Model:
    steps = [
        [ToolCallPart('load_skill', {'name': 'weather'})],
        [ToolCallPart('get_alerts', {'city': 'Madrid'})],
        [TextPart('Madrid has a strong-UV alert until 17:00: plan the walk for the evening.')],
    ]

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        turn = sum(isinstance(message, ModelResponse) for message in messages)
        return ModelResponse(parts=steps[min(turn, len(steps) - 1)])

    return FunctionModel(respond, model_name='scripted')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--model', help="use this real model instead of the scripted one (e.g. the spec's own)")
    args = parser.parse_args()

    os.chdir(HERE.parent)  # the spec's directories are relative to the repository root
    agent = Agent.from_file(HERE / 'agent.yaml', custom_capability_types=[Skills], model=args.model or scripted_model())
    [skills] = [capability for capability in agent.root_capability.capabilities if isinstance(capability, Skills)]
    print(f'Skills from the spec: {", ".join(skills.library.skills)}')

    result = agent.run_sync('Any weather alerts in Madrid before my walk?')
    for message in result.new_messages():
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                print(f'  model -> {part.tool_name}({part.args_as_json_str()})')
    print(f'  answer: {result.output}')


if __name__ == '__main__':
    main()
