"""Tool functions that test `SKILL.md` skills declare in their `tools:` frontmatter field."""

from __future__ import annotations

from pydantic_ai import RunContext


def convert_celsius(celsius: float) -> str:
    """Convert a temperature in Celsius to Fahrenheit."""
    return f'{celsius * 9 / 5 + 32:g} F'


def run_number(ctx: RunContext[None]) -> str:
    """Say which step of the run this is."""
    return f'step {ctx.run_step}'


NOT_A_FUNCTION = 42
