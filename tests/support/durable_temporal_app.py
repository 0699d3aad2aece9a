"""A durable agent with skills as a Temporal workflow, and its worker as a process.

`python -c 'import durable_temporal_app as app; app.main()' WORK ADDRESS MODE` (the module is imported under its
own name, not run as `__main__`, so Temporal's workflow sandbox can pass it through). The skills are
`WORK/skills`; the `forecast` tool appends a line to `WORK/forecast.log` each time its body runs. The workflow is
a conversation of two runs (the second continues the first's history). MODE `start` starts the workflow and runs
a worker, whose scripted model kills this process (SIGKILL, no cleanup) at the request named by `WORK/kill_at`
(counted across both runs); MODE `recover` runs a second worker until the workflow finishes and prints, as JSON,
what it saw and what Temporal recorded.

With `WORK/variant` the agent runs skill scripts in a workspace instead (see `durable_tally`), and once the workflow
is finished, MODE `recover` starts a second one that continues its history.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.durable_exec.temporal import PydanticAIPlugin, PydanticAIWorkflow, TemporalDurability
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from temporalio import workflow
from temporalio.client import Client
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from skillshelf import Skills

from durable_tally import (
    CONTINUED,
    CONVERSATION,
    log_launches,
    tally_capabilities,
    tally_responses,
    variant_of,
    workspace_refs,
)
from durable_weather import (
    crash_at_chosen_request,
    first_prompt,
    first_run_script,
    itinerary_skill,
    sub_agent_response,
    weather_skill,
    what_the_model_saw,
)

WORK = Path(os.environ['SKILLSHELF_TEMPORAL_WORK'])
WORKFLOW_ID = f'trip-{WORK.name}'
TASK_QUEUE = f'skillshelf-{WORK.name}'  # one per test, so tests sharing a server never share a worker

weather = weather_skill(WORK)
itinerary = itinerary_skill(WORK)
VARIANT = variant_of(WORK)

FIRST_PROMPT = first_prompt(WORK)
PROMPTS = [FIRST_PROMPT, 'What goes in the bag?'] if VARIANT is None else CONVERSATION
SCRIPT: list[list[ToolCallPart | TextPart]] = (
    tally_responses()
    if VARIANT is not None
    else [
        *first_run_script(FIRST_PROMPT),
        # the second run, continuing the conversation: packing is loaded from its history; surfing does not exist (yet)
        [
            ToolCallPart('read_skill_resource', {'name': 'packing', 'path': 'checklist.md'}),
            ToolCallPart('read_skill_resource', {'name': 'surfing', 'path': 'waves.md'}),
        ],
        [TextPart('Bring a hat.')],
    ]
)
seen: list[dict[str, Any]] = []


def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """One scripted response per request (it runs in the model-request activity); which request this is follows
    from the history, as on a real model."""
    if (forked := sub_agent_response(messages, info)) is not None:
        return forked  # `itinerary`'s sub-agent, inside the recorded `load_skill` call: never killed, never seen
    step = sum(isinstance(message, ModelResponse) for message in messages)
    seen.append(what_the_model_saw(step + 1, messages, info))
    if sys.argv[-1] == 'start':
        crash_at_chosen_request(WORK, step + 1)
    return ModelResponse(parts=list(SCRIPT[step]))


agent = Agent(
    FunctionModel(respond),
    name='trip',
    capabilities=[
        *(
            [Skills(WORK / 'skills', skills=[weather, itinerary])]
            if VARIANT is None
            else tally_capabilities(WORK, VARIANT)
        ),
        # A short heartbeat timeout, so the server notices the killed worker's model request within seconds.
        TemporalDurability(model_activity_config={'heartbeat_timeout': timedelta(seconds=1)}),
    ],
)


@workflow.defn
class PlanTrip(PydanticAIWorkflow):
    __pydantic_ai_agents__ = (agent,)

    @workflow.run
    async def run(self, prompts: list[str], history_json: str) -> dict[str, Any]:
        """One conversation: each prompt a run that continues the previous run's history (at first `history_json`)."""
        outputs: list[str] = []
        history = ModelMessagesTypeAdapter.validate_json(history_json)
        for prompt in prompts:
            result = await agent.run(prompt, message_history=history)
            outputs.append(result.output)
            history = result.all_messages()
        return {'outputs': outputs, 'history': ModelMessagesTypeAdapter.dump_json(history).decode()}


def skill_file_reads(event: str, args: tuple[Any, ...]) -> None:
    """Audit hook: every skill file (`SKILL.md`, packing's `checklist.md`) opened once the agent is built."""
    if event == 'open' and Path(str(args[0])).name in ('SKILL.md', 'checklist.md'):
        with (WORK / 'skill_reads.log').open('a') as log:
            log.write(f'{os.getpid()} {args[0]}\n')


def worker(client: Client) -> Worker:
    # This module builds the agent: imported again in each workflow's sandbox, it would rebuild the library in
    # workflow code, reading every SKILL.md. So it, and skillshelf, come from the host.
    restrictions = SandboxRestrictions.default.with_passthrough_modules(
        'skillshelf', 'durable_weather', 'scripted_model', __name__
    )
    return Worker(
        client,
        task_queue=TASK_QUEUE,
        workflows=[PlanTrip],
        identity=f'worker {os.getpid()}',
        # A replay that does not match the history fails the workflow at once, instead of retrying its task forever.
        workflow_failure_exception_types=[workflow.NondeterminismError],
        workflow_runner=SandboxedWorkflowRunner(restrictions=restrictions),
        # The killed worker's cached workflow would hold its next task for 10 s before the other worker gets it.
        sticky_queue_schedule_to_start_timeout=timedelta(seconds=1),
    )


async def run(address: str, mode: str) -> None:
    client = await Client.connect(address, plugins=[PydanticAIPlugin()])
    sys.addaudithook(skill_file_reads)
    if VARIANT is not None:
        log_launches(WORK)
    async with worker(client):
        if mode == 'start':
            await client.execute_workflow(PlanTrip.run, args=[PROMPTS, '[]'], id=WORKFLOW_ID, task_queue=TASK_QUEUE)
            raise SystemExit('the scripted model did not kill the process')
        handle = client.get_workflow_handle(WORKFLOW_ID)
        output = await handle.result()
        history = await handle.fetch_history()
        continued: dict[str, Any] = {}
        if VARIANT is not None:  # the conversation goes on in a new workflow, as on the user's next message
            continued = await client.execute_workflow(
                PlanTrip.run, args=[CONTINUED, output['history']], id=f'{WORKFLOW_ID}-c', task_queue=TASK_QUEUE
            )
            continued_history = await client.get_workflow_handle(f'{WORKFLOW_ID}-c').fetch_history()
            continued['activities'] = activities(continued_history.events)
            continued['failures'] = task_failures(continued_history.events)
    events = history.events
    summary = {
        'output': [*output['outputs'], *continued.get('outputs', [])],
        'seen': seen,
        'pid': os.getpid(),
        'activities': activities(events),
        'workflow_tasks_by': [
            event.workflow_task_completed_event_attributes.identity
            for event in events
            if event.HasField('workflow_task_completed_event_attributes')
        ],
        'workflow_task_failures': task_failures(events),
    }
    if VARIANT is not None:
        summary['refs'] = workspace_refs(ModelMessagesTypeAdapter.validate_json(continued['history']))
        summary['continued_activities'] = continued['activities']
        summary['workflow_task_failures'] += continued['failures']
    print(json.dumps(summary))


def activities(events: Any) -> list[str]:
    """The activity type of every activity scheduled in a workflow's history `events`."""
    return [
        event.activity_task_scheduled_event_attributes.activity_type.name
        for event in events
        if event.HasField('activity_task_scheduled_event_attributes')
    ]


def task_failures(events: Any) -> list[str]:
    """The message of every failed workflow task in a workflow's history `events` (a nondeterminism error is one)."""
    return [
        event.workflow_task_failed_event_attributes.failure.message
        for event in events
        if event.HasField('workflow_task_failed_event_attributes')
    ]


def main() -> None:
    asyncio.run(run(sys.argv[-2], sys.argv[-1]))
    # Skip interpreter teardown: the Temporal client's Rust threads can abort it ("PyGILState_Release: thread state
    # ... must be current", temporalio/sdk-python#300) after everything has been printed.
    sys.stdout.flush()
    os._exit(0)
