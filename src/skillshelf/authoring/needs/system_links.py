"""The system configuration a program reaches through links into `/etc`, and whether the sandbox shows it.

Packages put a program's configuration under `/etc` and link to it from `/usr`: Debian's LibreOffice reads its
`sofficerc` and registry through links in `/usr/lib/libreoffice/program` into `/etc/libreoffice`, and `awk` is
`/usr/bin/awk` -> `/etc/alternatives/awk` -> `/usr/bin/mawk`. A program whose configuration the sandbox does not show
starts, then fails (`soffice`: "Unspecified Application Error"), so `check` looks at the links on the way to the
program, and the links of its installation: its folder and the folders beside it (`program` and `share` of
`/usr/lib/libreoffice`), unless those are shared by many programs (`/usr/bin`, `/usr/lib`), whose links belong to
other programs.
"""

from __future__ import annotations

import fnmatch
import itertools
import os
from collections.abc import Iterable, Iterator

from ...sandbox.system import system_configuration

__all__ = ('configuration_of',)

_PROGRAM_FOLDERS = frozenset(
    {'/bin', '/sbin', '/usr/bin', '/usr/sbin', '/usr/local/bin', '/usr/local/sbin', '/usr/games', '/usr/local/games'}
)
_MAX_HOPS = 40
_MAX_ENTRIES = 5000
"""Entries of a program's installation looked at, at most (LibreOffice's has about 1,000)."""


def configuration_of(program: str, mounts: Iterable[str] = ()) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The folders (or files) under `/etc` that `program` reaches through links, as sorted `(shown, hidden)`: those the
    sandbox shows (its system configuration, or one of `mounts`) and those it does not (each as the path to mount,
    `/etc/<name>`)."""
    places = [*system_configuration(), *(os.path.abspath(path) for path in mounts)]
    shown: dict[str, None] = {}
    hidden: dict[str, None] = {}
    for target in _etc_targets(program):
        place = next((place for place in places if target == place or target.startswith(place + '/')), None)
        if place is not None:
            shown[place] = None
        else:
            hidden['/'.join(target.split('/')[:3])] = None
    return tuple(sorted(shown)), tuple(sorted(hidden))


def _etc_targets(program: str) -> Iterator[str]:
    """Where the links to `program`, and those of its installation, lead under `/etc`."""
    for path in _hops(program):
        if path.startswith('/etc/'):
            yield path
    folder = os.path.dirname(os.path.realpath(program))
    if _shared(folder):
        return
    folders = [folder]
    parent = os.path.dirname(folder)
    if not _shared(parent):
        folders = [entry.path for entry in _entries(parent) if entry.is_dir(follow_symlinks=False)]
    budget = _MAX_ENTRIES
    for place in folders:
        for entry in _entries(place):
            budget -= 1
            if budget < 0:
                return
            if entry.is_symlink():
                target = os.path.normpath(os.path.join(place, os.readlink(entry.path)))
                if target.startswith('/etc/'):
                    yield target


def _shared(folder: str) -> bool:
    """Whether `folder` holds many programs' files (`/usr/bin`, `/usr/lib`, `/usr/lib/x86_64-linux-gnu`, `/opt`)."""
    return (
        folder in _PROGRAM_FOLDERS
        or folder in ('/', '/opt', '/usr', '/usr/local')
        or os.path.dirname(folder) in ('/usr', '/usr/local')
        or fnmatch.fnmatch(folder, '/usr/lib/*-linux-*')
    )


def _entries(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            return list(itertools.islice(entries, _MAX_ENTRIES))
    except OSError:
        return []


def _hops(path: str) -> list[str]:
    """Each path a chain of links passes through on the way from `path` (`/usr/bin/awk`, `/etc/alternatives/awk`,
    `/usr/bin/mawk`)."""
    hops = [os.path.abspath(path)]
    while len(hops) < _MAX_HOPS and os.path.islink(hops[-1]):
        try:
            target = os.readlink(hops[-1])
        except OSError:
            break
        hops.append(os.path.normpath(os.path.join(os.path.dirname(hops[-1]), target)))
    return hops
