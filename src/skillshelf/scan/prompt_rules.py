"""Instructions aimed at the agent rather than at the task: to ignore the instructions it was given, or to hide
what it does from the user. Read in a skill's prose and, where a person reading the rendered Markdown never sees
them, in its HTML comments.

A skill about prompt injection quotes these phrases to teach the model to resist them, so a phrase that is quoted,
or introduced as an example ("such as", "if a page says"), or negated ("never ... without telling the user"), is
only worth knowing (`info`); in an HTML comment it is critical whatever surrounds it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .finding import Severity

__all__ = ('hidden_instructions', 'may_instruct', 'override_instructions')

_IGNORE = re.compile(
    r'\b(?:ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|the|your|every|of|these|those)\s+)*'
    r'(?:previous|prior|above|earlier|preceding|former|original|initial|system|safety)\s+'
    r'(?:instructions?|prompts?|directions?|directives?|rules?|guidelines?|messages?|guardrails?|constraints?)\b'
    r'|\b(?:your\s+new\s+(?:instructions|system\s+prompt)\s+(?:are|is)|you\s+are\s+now\s+(?:in\s+)?(?:DAN|developer\s+mode|jailbroken))',
    re.IGNORECASE,
)
_HIDE = re.compile(
    r"\b(?:do\s+not|don[’']?t|never|must\s+not)\s+(?:tell|inform|notify|alert|warn|show|reveal|disclose|mention|report)"
    r'(?:\s+[\w-]+){0,3}?\s+(?:to\s+)?the\s+user\b'
    r"|\bwithout\s+(?:the\s+user(?:[’']s)?\s+(?:knowledge|knowing|noticing|awareness|seeing)"
    r'|(?:telling|informing|notifying|alerting)\s+the\s+user)'
    r'|\b(?:hide|conceal)\s+(?:this|it|these\s+\w+|the\s+\w+|your\s+\w+)\s+from\s+the\s+user'
    r'|\bthe\s+user\s+(?:must|should)\s+(?:not|never)\s+(?:know|see|notice|find\s+out|learn)\b'
    r'|\b(?:secretly|covertly|surreptitiously)\s+(?:run|execute|send|upload|post|copy|read|install|download|forward|'
    r'transmit|collect|exfiltrate|add|write|modify|delete)',
    re.IGNORECASE,
)
_CITED = re.compile(
    r"(?:[\"“'‘«`]\s*$|\b(?:such\s+as|like|e\.g\.?|i\.e\.?|for\s+example|says?|saying|said|contains?|containing|"
    r'phrases?|patterns?|detect\w*|flag\w*|attempts?\s+to|tries\s+to|trying\s+to|whether|against|examples?|'
    r'injections?|instructs?\s+you\s+to|asks?\s+you\s+to|tells?\s+you\s+to|strings?|payloads?|attacks?|'
    r'requests?\s+to|jailbreaks?)\b[^.!?\n]*$)',
    re.IGNORECASE,
)
_SENSITIVE = re.compile(
    r'\b(?:send|sent|upload|post|transmit|exfiltrat\w*|forward|download|install|delet\w*|remov\w*|credential\w*|'
    r'passwords?|tokens?|api[ _-]?keys?|secrets?|ssh|cookies?|curl|wget|scripts?|commands?|execut\w*|payloads?|'
    r'webhooks?|backdoor|cron\w*|bashrc|profile)\b',
    re.IGNORECASE,
)
"""What a skill would hide from the user and no legitimate one needs to: data sent out, code run, files deleted."""
_INTENT = re.compile(
    r'secretly|covertly|surreptitiously|knowledge|knowing|noticing|awareness|must\s+not\s+know', re.IGNORECASE
)
"""Words that say the hiding is the point, whatever is hidden."""
_NEGATED = re.compile(r"\b(?:never|not|no|don[’']?t|nothing|avoid)\b[^.!?\n]*$", re.IGNORECASE)


def override_instructions(text: str, first_line: int, *, comment: bool) -> Iterator[tuple[int, Severity, str]]:
    """Instructions to ignore the instructions the agent was given."""
    for line, before, phrase, _ in _matches(_IGNORE, text, first_line):
        if comment:
            yield line, 'critical', f'an HTML comment, hidden when the Markdown is shown, tells the model "{phrase}"'
        elif _CITED.search(before):
            yield line, 'info', f'quotes "{phrase}", as an example or to warn about it'
        else:
            yield line, 'critical', f'tells the model "{phrase}": it overrides the instructions the agent was given'


def hidden_instructions(text: str, first_line: int, *, comment: bool) -> Iterator[tuple[int, Severity, str]]:
    """Instructions to hide what the agent does from the user."""
    for line, before, phrase, after in _matches(_HIDE, text, first_line):
        if comment:
            yield line, 'critical', f'an HTML comment, hidden when the Markdown is shown, tells the model "{phrase}"'
        elif _CITED.search(before) or (phrase.lower().startswith('without') and _NEGATED.search(before)):
            yield line, 'info', f'mentions "{phrase}", as an example or a prohibition'
        elif _INTENT.search(phrase):
            yield line, 'critical', f'tells the model to act behind the user\'s back ("{phrase}")'
        elif (sensitive := _SENSITIVE.search(after)) is not None:
            yield (
                line,
                'critical',
                f'tells the model to hide what it does from the user ("{phrase}"), around {sensitive[0]!r}',
            )
        else:
            yield line, 'warning', f'tells the model to keep something from the user ("{phrase}")'


def may_instruct(text: str) -> bool:
    """Whether `override_instructions` or `hidden_instructions` could find anything in `text`: whether it holds one of
    the words their phrases start with. Cheaper than asking them, for the thousands of short texts of a library's
    frontmatter, most of which hold none."""
    lower = text.lower()
    return any(anchor in lower for anchor in _ALL_ANCHORS)


def _matches(pattern: re.Pattern[str], text: str, first_line: int) -> Iterator[tuple[int, str, str, str]]:
    """`(line, what precedes it in its sentence, the phrase, the rest of its sentence)` for each match of `pattern`, tried only where one of
    its first words stands (found with `str.find`: a regular expression of alternatives scans far slower)."""
    lower = text.lower()
    starts: set[int] = set()
    for anchor in _ANCHORS[pattern.pattern]:
        position = lower.find(anchor)
        while position != -1:
            starts.add(position)
            position = lower.find(anchor, position + 1)
    for start in sorted(starts):
        match = pattern.match(text, start)
        if match is None or (start and (text[start - 1].isalnum() or text[start - 1] == '_')):
            continue
        sentence = max(text.rfind('\n', 0, start), text.rfind('. ', 0, start), text.rfind('! ', 0, start)) + 1
        phrase = ' '.join(match[0].split())
        end = min(
            (found for found in (text.find(mark, match.end()) for mark in ('. ', '\n\n', '! ')) if found != -1),
            default=len(text),
        )
        yield first_line + text.count('\n', 0, start), text[sentence:start], phrase, text[start : min(end, start + 300)]


_ANCHORS = {
    _IGNORE.pattern: ('ignore', 'disregard', 'forget', 'override', 'bypass', 'your new', 'you are now'),
    _HIDE.pattern: (
        'do not',
        'don',
        'never',
        'must not',
        'without',
        'hide',
        'conceal',
        'the user',
        'secretly',
        'covertly',
        'surreptitiously',
    ),
}
_ALL_ANCHORS = tuple(dict.fromkeys(anchor for anchors in _ANCHORS.values() for anchor in anchors))
