"""A skill's `tools:` field hides the agent tools it names until that skill is loaded, checked on real agent runs:
the tool definitions the model receives on each request, and what a model that calls a hidden tool is told."""

from __future__ import annotations

from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.messages import TextPart

from skillshelf import Skill, Skills
from skillshelf.capability.gated_tools import gated_tool_names

from scripted_model import Script, call, tool_returns
from skill_files import write_skill


def agent_with_invoicing(tmp_path: Path, script: Script, **options: object) -> Agent[None, str]:
    write_skill(
        tmp_path / 'lib', 'invoicing', 'Make invoices with `create_invoice`.', fields={'tools': 'create_invoice'}
    )
    write_skill(tmp_path / 'lib', 'notes', 'Keep notes.')
    agent = Agent(script.model(), capabilities=[Skills(tmp_path / 'lib', **options)])  # type: ignore[arg-type]

    @agent.tool_plain
    def create_invoice(customer: str) -> str:  # pyright: ignore[reportUnusedFunction]
        """Create an invoice."""
        return f'invoice for {customer}'

    @agent.tool_plain
    def lookup_customer(name: str) -> str:  # pyright: ignore[reportUnusedFunction]
        """Find a customer."""
        return name

    return agent


def test_a_tool_a_skill_names_is_absent_until_the_skill_is_loaded_and_then_runs(tmp_path: Path) -> None:
    script = Script(
        [
            [call('load_skill', name='invoicing')],
            [call('create_invoice', customer='ACME')],
            [TextPart('done')],
        ]
    )
    result = agent_with_invoicing(tmp_path, script).run_sync('bill ACME')
    before, after, last = script.requests
    assert 'create_invoice' not in before.tools
    assert 'lookup_customer' in before.tools  # a tool no skill names is never gated
    assert 'create_invoice' in after.tools
    assert 'create_invoice' in last.tools
    assert tool_returns(result.all_messages(), 'create_invoice') == ['invoice for ACME']


def test_the_next_run_of_the_conversation_keeps_it_while_hide_takes_it_away_on_unload(tmp_path: Path) -> None:
    first = Script([[call('load_skill', name='invoicing')], [TextPart('loaded')]])
    history = agent_with_invoicing(tmp_path, first).run_sync('bill ACME').all_messages()
    again = Script([[TextPart('still here')]])
    agent_with_invoicing(tmp_path, again).run_sync('and again', message_history=history)
    assert 'create_invoice' in again.requests[0].tools

    hide = Script([[call('load_skill', name='invoicing')], [call('unload_skill', name='invoicing')], [TextPart('x')]])
    agent_with_invoicing(tmp_path, hide, unload='hide').run_sync('bill ACME')
    assert ['create_invoice' in request.tools for request in hide.requests] == [False, True, False]


def test_a_model_that_calls_a_hidden_tool_is_told_which_skill_to_load(tmp_path: Path) -> None:
    script = Script([[call('create_invoice', customer='ACME')], [call('create_invoice', customer='ACME')]])
    agent_with_invoicing(tmp_path, script).run_sync('bill ACME')
    told = str(script.requests[1].messages[-1])
    assert "comes with the skill 'invoicing'" in told
    assert 'load it with `load_skill`' in told


def test_a_python_skills_metadata_gates_tools_too_and_the_field_reads_both_spellings() -> None:
    assert gated_tool_names({'tools': 'a, b c'}) == ('a', 'b', 'c')
    assert gated_tool_names({'tools': ['a', 'a', 3, ' b ']}) == ('a', 'b')
    assert gated_tool_names({'tools': 7}) == ()
    skill = Skill('billing', 'Bill customers.', instructions='Use charge.', metadata={'tools': ['charge']})
    script = Script([[call('load_skill', name='billing')], [TextPart('done')]])
    agent = Agent(script.model(), capabilities=[Skills(skills=[skill])])

    @agent.tool_plain
    def charge() -> str:  # pyright: ignore[reportUnusedFunction]
        """Charge."""
        return 'ok'

    agent.run_sync('bill')
    assert ['charge' in request.tools for request in script.requests] == [False, True]
