"""The command rules on JavaScript and PowerShell, which skillshelf has no parser for: a few patterns that only
attacks write (`eval(atob(...))`, `iex (iwr ...)`, `-EncodedCommand`), and the shell commands a JavaScript file
starts with a literal string (`execSync("curl ... | sh")`), judged by the shell rules."""

from __future__ import annotations

import re
from collections.abc import Callable

from .finding import Severity
from .vocabulary import known_installer, urls_in

__all__ = ('javascript_findings', 'powershell_findings')

Hit = tuple[int, str, Severity, str]
ShellRules = Callable[[str, int], list[Hit]]

_JS_DECODED = re.compile(
    r'\b(?:eval|Function|setTimeout|setInterval|vm\.runIn\w+Context|vm\.runInThisContext)\s*\(\s*'
    r'(?:atob\s*\(|Buffer\.from\s*\([^)]*[\'"](?:base64|hex)[\'"]|(?:unescape|decodeURIComponent)\s*\()',
)
_JS_FETCHED = re.compile(r'\b(?:fetch|axios\.get|https?\.get|got)\s*\(')
_JS_RUNS = re.compile(r'\b(?:eval|new\s+Function|vm\.runIn\w+Context|vm\.runInThisContext)\s*\(')
_JS_SHELL = re.compile(r'\b(?:exec|execSync|spawn|spawnSync|execFile|execFileSync)\s*\(\s*([`\'"])(.*?)\1', re.DOTALL)
_PS_FETCH = re.compile(
    r'\b(?:iwr|irm|Invoke-WebRequest|Invoke-RestMethod|DownloadString|DownloadFile|Net\.WebClient|curl|wget)\b',
    re.IGNORECASE,
)
_PS_RUN = re.compile(r'\b(?:iex|Invoke-Expression)\b|\|\s*&|\.\s*\(\s*\[scriptblock\]', re.IGNORECASE)
_PS_DECODED = re.compile(r'FromBase64String|\s-e(?:nc|ncodedcommand)?\s+[A-Za-z0-9+/=]{16,}', re.IGNORECASE)


def javascript_findings(source: str, first_line: int, shell: ShellRules) -> list[Hit]:
    """The findings in JavaScript or TypeScript `source`."""
    hits: list[Hit] = []
    lines = source.split('\n')
    for number, line in enumerate(lines, first_line):
        if _JS_DECODED.search(line):
            hits.append(
                (number, 'decoded-code', 'critical', 'decodes a payload and runs it as JavaScript, hiding what runs')
            )
        elif _JS_RUNS.search(line):
            window = '\n'.join(lines[max(0, number - first_line - 3) : number - first_line + 1])
            if _JS_FETCHED.search(window):
                hits.append(
                    (
                        number,
                        'remote-code',
                        'critical',
                        'runs JavaScript fetched from the network with eval or Function',
                    )
                )
    if 'exec' in source or 'spawn' in source:
        for match in _JS_SHELL.finditer(source):
            hits.extend(shell(match[2], first_line + source.count('\n', 0, match.start())))
    return hits


def powershell_findings(source: str, first_line: int) -> list[Hit]:
    """The PowerShell patterns of remote and decoded code (its pipelines are also read by the shell rules)."""
    hits: list[Hit] = []
    for number, line in enumerate(source.split('\n'), first_line):
        if _PS_RUN.search(line) and _PS_FETCH.search(line) and '|' not in line:
            urls = urls_in(line)
            if known_installer(urls):
                hits.append((number, 'remote-code', 'warning', f'runs the install script of {", ".join(urls)} unread'))
            else:
                hits.append(
                    (
                        number,
                        'remote-code',
                        'critical',
                        'runs PowerShell fetched from the network with Invoke-Expression',
                    )
                )
        if _PS_DECODED.search(line) and (_PS_RUN.search(line) or re.search(r'powershell|pwsh', line, re.IGNORECASE)):
            hits.append(
                (number, 'decoded-code', 'critical', 'decodes a payload and runs it as PowerShell, hiding what runs')
            )
    return hits
