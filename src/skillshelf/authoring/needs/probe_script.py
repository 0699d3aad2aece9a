"""Run inside the interpreter being checked (`python -I -c <this file>`), never imported: it answers on stdout, as
JSON, which of the modules, packages and Python versions on stdin that interpreter has.

Written for any Python 3 that may be checked: only the standard library, and no syntax newer than 3.8. Versions
and markers are evaluated with `packaging` when that interpreter has it (or pip's copy of it); otherwise packages
are only looked up by name.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import platform
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # never evaluated where it runs: the annotations stay text on any Python 3
    from collections.abc import Callable

    Reader = Callable[[str], str | None]


def main() -> None:
    request = json.loads(sys.stdin.read())
    answer: dict[str, Any] = {
        'version': platform.python_version(),
        'executable': sys.executable,
        'prefix': sys.prefix,
        'modules': {},
        'owners': {},
        'packages': {},
        'pythons': {},
    }
    for name in request['modules']:
        try:
            answer['modules'][name] = importlib.util.find_spec(name) is not None
        except Exception:  # a broken package's finder; it cannot be imported either
            answer['modules'][name] = False
    installed = _version_reader()
    owners: dict[str, list[str]] = {}
    try:
        from importlib.metadata import packages_distributions

        owners = dict(packages_distributions())
    except Exception:  # Python before 3.10, or broken metadata
        pass
    for name in request['modules']:
        answer['owners'][name] = [[owner, installed(owner)] for owner in owners.get(name, [])]
    requirement, specifiers, evaluator = _packaging()
    answer['evaluator'] = evaluator
    for name, spec in request['packages']:
        answer['packages'][spec] = _package(name, spec, installed, requirement)
    for spec in request['pythons']:
        answer['pythons'][spec] = _python(spec, specifiers)
    sys.stdout.write(json.dumps(answer))


def _version_reader() -> Reader:
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # Python 3.7
        return lambda name: None

    def read(name: str) -> str | None:
        try:
            return version(name)
        except PackageNotFoundError:
            return None
        except Exception:  # broken metadata
            return None

    return read


def _packaging() -> tuple[Any, Any, str | None]:
    for prefix in ('packaging', 'pip._vendor.packaging'):
        try:
            requirements = importlib.import_module(prefix + '.requirements')
            specifiers = importlib.import_module(prefix + '.specifiers')
        except Exception:
            continue
        return requirements.Requirement, specifiers.SpecifierSet, prefix
    return None, None, None


def _package(name: str, spec: str, installed: Reader, requirement: Any) -> dict[str, Any]:
    version = installed(name)
    result: dict[str, Any] = {'installed': version, 'applies': True, 'satisfied': None, 'invalid': False}
    if requirement is None:
        return result
    try:
        parsed = requirement(spec)
    except Exception:
        result['invalid'] = True
        return result
    if parsed.marker is not None:
        try:
            result['applies'] = bool(parsed.marker.evaluate())
        except Exception:
            result['applies'] = None
    if version is not None:
        try:
            result['satisfied'] = parsed.specifier.contains(version, prereleases=True)
        except Exception:
            result['satisfied'] = None
    return result


def _python(spec: str, specifiers: Any) -> bool | None:
    version = platform.python_version()
    if specifiers is not None:
        try:
            return specifiers(spec).contains(version, prereleases=True)
        except Exception:
            return None
    if spec.startswith('>=') and '.' in spec and ',' not in spec:
        try:
            wanted = tuple(int(part) for part in spec[2:].strip().split('.'))
        except ValueError:
            return None
        return sys.version_info[: len(wanted)] >= wanted
    return None


if __name__ == '__main__':
    main()
