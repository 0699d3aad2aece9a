"""Figures typed into a Markdown text without their marks, where they look like a benchmark's: what
`tests/docs/test_figures.py` refuses in `README.md` and `docs/*.md`, so a figure cannot go stale unnoticed."""

from __future__ import annotations

import re
from collections.abc import Iterator

MARK = re.compile(r'<!--fig:(?P<name>[a-z0-9_.-]+)-->(?P<value>.*?)<!--/fig-->')
"""A marked figure: its name (lower case, so prose can show the syntax as `<!--fig:NAME-->`) and the value quoted."""

_FENCED = re.compile(r'^\s*(```|~~~).*?^\s*\1[^\n]*$', re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r'`[^`\n]+`')
"""Code quotes settings, names and paths, not figures; but a path in code (`benchmarks/registry.py`) still says
what a paragraph is about."""
_BLOCK_START = re.compile(r'^\s*(?:[-*+]|\d+\.)\s|^\s*#')
"""A list item or a heading: it starts a block of its own."""
_BENCHMARK = re.compile(r'benchmark|P@1|MRR|\bBFCL\b|\bMetaTool\b|[Mm]easured|\b\d{1,3}(?:,\d{3})+ (?:real )?skills\b')
"""Words that make a paragraph, list item or table about the benchmarks."""
_NUMBER = r'(?<![\w.,])\d{1,3}(?:,\d{3})*(?:\.\d+)?'
_SCORE = re.compile(r'(?<![\w.,])[01]\.\d{3}(?!\.?\d)')
"""A P@1, MRR or nDCG value, quoted to three decimals as the tables show them."""
_MEASURE = re.compile(
    rf'(?P<number>{_NUMBER}(?:\s?[–-]\s?{_NUMBER})?)\s?'
    r'(?P<unit>ms|s|MiB|MB|KB|%|characters|chars|tokens|points)(?![\w])'
)
"""A measured quantity: a number, or a range, with a unit of time, size, share or length."""
_SETTING = re.compile(r'(?:\bfirst|\bup to|\bat most|\bdefault)\s+\(?$')
"""What a setting or a limit is quoted after (`the first 10,000 characters`): not a measurement."""
_LARGE = re.compile(r'(?P<number>(?<![\w.,])\d{1,3}(?:,\d{3})+)(?![\d,]*\s(?:real\s)?[a-z]+s\b)')
"""A number in the thousands that does not count something named after it (`2,651 skills` is a library size)."""


def bare_figures(text: str, sizes: frozenset[str] = frozenset()) -> list[str]:
    """Benchmark-looking figures typed into `text` outside the marks, each with its paragraph's opening words.

    A score quoted to three decimals counts anywhere. In a paragraph, list item or table about the benchmarks (it
    names one, a metric or a data set, or a library of some thousands of skills), so does a measurement with a
    fraction, thousands or a percentage (`0.17 ms`, `1,681 characters`, `58 %`; a whole `250 characters` is a
    setting more often than a result) and a number in the thousands standing alone (`720,839`). Inputs are not
    results: a number that counts what follows it (`2,651 skills`), one of `sizes` (the library sizes the benchmarks
    ran at) and a setting or limit (`the first 10,000 characters`, `up to 2,000 tokens`).
    """
    text = _FENCED.sub(lambda fence: '\n' * fence.group().count('\n'), MARK.sub(' ', text))
    found: list[str] = []
    for quoted, context in _blocks(text):
        block = _INLINE_CODE.sub(' ', quoted)
        where = ' '.join(quoted.split())[:60]
        found += [f'{m.group()!r} in "{where}"' for m in _SCORE.finditer(block)]
        if not _BENCHMARK.search(context):
            continue
        measures = [m for m in _MEASURE.finditer(block) if not _SETTING.search(block[: m.start()])]
        found += [
            f'{m.group()!r} in "{where}"'
            for m in measures
            if m['unit'] in {'%', 'points'} or '.' in m['number'] or ',' in m['number']
        ]
        found += [
            f'{m.group()!r} in "{where}"'
            for m in _LARGE.finditer(block)
            if m['number'] not in sizes
            and not _SETTING.search(block[: m.start()])
            and not any(n.start() <= m.start() < n.end() for n in _MEASURE.finditer(block))
        ]
    return found


def _blocks(text: str) -> Iterator[tuple[str, str]]:
    """Each paragraph, list item and table of a Markdown text, with its context: itself, and for a table also the
    paragraph that introduces it (a table's rows name no benchmark; its caption does)."""
    blocks: list[list[str]] = [[]]
    for line in text.splitlines():
        current = blocks[-1]
        row = line.lstrip().startswith('|')
        in_table = bool(current) and current[-1].lstrip().startswith('|')
        if not line.strip():
            blocks.append([])
        elif current and (row != in_table or (not row and _BLOCK_START.match(line))):
            blocks.append([line])
        else:
            current.append(line)
    joined = ['\n'.join(lines) for lines in blocks if lines]
    for i, block in enumerate(joined):
        is_table = block.lstrip().startswith('|')
        yield block, (f'{joined[i - 1]}\n{block}' if is_table and i else block)
