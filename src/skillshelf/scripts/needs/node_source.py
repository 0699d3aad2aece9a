"""The Node packages a skill needs: those its JavaScript files `require` (or, in an ES module, `import`), and those
it installs with `npm install` (in a shell script, or in a code sample of its Markdown, where a `SKILL.md` tells the
model what to install: Anthropic's pptx skill says `npm install -g pptxgenjs`).

Conservative like the other scanners: a specifier counts only when written out (`require('pptxgenjs')`, not
`require(name)`); relative paths, Node's built-in modules (`fs`, `node:path`) and URLs are left out; a deep import
(`docx/build/x`, `@scope/name/y`) counts as its package. ES `import` counts only in a `.mjs` file or one whose `#!`
names node: a plain `.js` with imports may be a file for the browser.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ('javascript_packages', 'markdown_npm_installs', 'npm_install_packages', 'package_of')

_BUILTINS = frozenset(
    'assert async_hooks buffer child_process cluster console constants crypto dgram diagnostics_channel dns domain '
    'events fs http http2 https inspector module net os path perf_hooks process punycode querystring readline repl '
    'stream string_decoder sys timers tls trace_events tty url util v8 vm wasi worker_threads zlib test'.split()
)
"""Node's built-in modules (`require('module').builtinModules`, without the internal ones)."""
_QUOTED = r"""(['"])(?P<spec>[^'"\n]{1,214})\1"""
_REQUIRE = re.compile(r'\brequire\s*\(\s*' + _QUOTED + r'\s*\)')
_IMPORT = re.compile(r'^\s*(?:import|export)\s+(?:[^\'";]*?\s+from\s+)?' + _QUOTED, re.MULTILINE)
_DYNAMIC_IMPORT = re.compile(r'\bimport\s*\(\s*' + _QUOTED + r'\s*\)')
_NAME = re.compile(r'(@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*', re.IGNORECASE)
_INSTALL = frozenset({'install', 'i', 'add', 'isntall', 'in', 'ins'})
_FENCE = re.compile(r'^ {0,3}(```|~~~)[^\n]*\n(.*?)^ {0,3}\1', re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r'`([^`\n]+)`')
_NPM_COMMAND = re.compile(r'\bnpm\s+([^\n;&|`]*)')


def package_of(specifier: str) -> str | None:
    """The npm package a `require`/`import` specifier names (`@scope/name` of `@scope/name/deep`, `docx` of
    `docx/x`), or `None` for a relative path, a built-in module or a URL."""
    if specifier.startswith(('.', '/', 'node:')) or ':' in specifier:
        return None
    parts = specifier.split('/')
    name = '/'.join(parts[:2]) if specifier.startswith('@') else parts[0]
    if name in _BUILTINS or _NAME.fullmatch(name) is None:
        return None
    return name


def javascript_packages(text: str, module: bool) -> list[str]:
    """The packages a JavaScript file loads: its `require` calls and dynamic `import()`s, and its `import`/`export
    ... from` statements when it is an ES module for Node (`module`), in order, once each."""
    patterns = [_REQUIRE, _DYNAMIC_IMPORT, *([_IMPORT] if module else [])]
    found = [package_of(match['spec']) for pattern in patterns for match in pattern.finditer(text)]
    return list(dict.fromkeys(name for name in found if name is not None))


def npm_install_packages(words: Iterable[str]) -> list[str]:
    """The packages of an `npm install` command's words after `npm` (`install -g pptxgenjs@4 docx` → `pptxgenjs`,
    `docx`); none for another npm command, or a bare `npm install` (the project's own `package.json`)."""
    words = list(words)
    if not words or words[0] not in _INSTALL:
        return []
    found: list[str] = []
    for word in words[1:]:
        if word.startswith(('-', '$')):
            continue
        versionless = word[:1] + word[1:].split('@', 1)[0]  # `pptxgenjs@4`, `@scope/name@1`
        name = package_of(versionless)
        if name is not None and name == versionless:
            found.append(name)
    return list(dict.fromkeys(found))


def markdown_npm_installs(text: str) -> list[str]:
    """The packages the code of a Markdown file installs with `npm install`: fenced blocks and inline code only
    (prose such as "run npm install to set up" is not a command)."""
    code = [match[2] for match in _FENCE.finditer(text)]
    code += _INLINE_CODE.findall(_FENCE.sub('', text))
    found: list[str] = []
    for snippet in code:
        for command in _NPM_COMMAND.finditer(snippet):
            found += npm_install_packages(command[1].split())
    return list(dict.fromkeys(found))
