"""The seccomp filter of a sandboxed command: no `fallocate`, no unnamed files (`O_TMPFILE`), no `io_uring`.

Each refusal keeps disk space where the workspace's size watch (see `usage`) can see it:

- `fallocate` reserves a file's disk blocks without writing them: forty 60 MiB files take a millisecond, faster than
  any watch can see, so one command could fill the host's disk past every workspace's limit. Refused, it fails with
  `EOPNOTSUPP`, and the C library's `posix_fallocate` writes the blocks instead, at the speed of any writer, which
  the watch stops.
- `open`/`openat` with `O_TMPFILE` makes a file with no name, which no walk of the folder counts, and `linkat` names
  it later: a script filled 600 MiB of a 128 MiB workspace this way, unseen, and named it all at the end. Refused
  with `EOPNOTSUPP`, as on a file system without them, so every file in the workspace has a name while it is
  written; Python's `tempfile` and the C library fall back to a named file they remove at once. `openat2`, whose
  flags a filter cannot read, fails with `ENOSYS` (as on a kernel before 5.6), and callers fall back to `openat`.
- `io_uring` fails with `ENOSYS` (as on a kernel without it): it can reserve blocks and open files without the
  system calls above.

Where a command has no memory cgroup (see `memory`), `memfd_create` and System V shared memory (`shmget`) fail with
`ENOSYS` too: their memory is in no process's address space and no size-capped folder, so nothing else would bound
it (a process could hold as many 64 MiB `memfd` files as it may open files); programs fall back to `/dev/shm`.

The filter is a classic BPF program, built here (no libseccomp) for x86-64 (with its 32-bit and x32 system calls)
and 64-bit ARM (with 32-bit ARM); on other machines `program()` gives none and only the watch holds the limit.
bubblewrap loads it (`--seccomp FD`) just before the command starts.
"""

from __future__ import annotations

import errno
import os
import platform
import struct
from dataclasses import dataclass

__all__ = ('TMPFILE_FLAG', 'filter_pipe', 'program')

TMPFILE_FLAG = 0x400000
"""`__O_TMPFILE`, the bit of `O_TMPFILE` the kernel acts on (with `O_DIRECTORY`), the same on x86 and ARM."""

_LOAD_WORD = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JUMP_IF_EQUAL = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JUMP_IF_SET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_AND = 0x54  # BPF_ALU | BPF_AND | BPF_K
_RETURN = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_NUMBER, _ARCH, _ARGUMENTS = 0, 4, 16  # offsets in `struct seccomp_data`; each argument is 8 bytes, low word first
_X32_BIT = 0x40000000
_IO_URING = (425, 426, 427)  # io_uring_setup, io_uring_enter, io_uring_register: the same on every architecture
_OPENAT2 = 437  # the same on every architecture


@dataclass(frozen=True)
class _Calls:
    """One architecture's numbers for the calls the filter looks at."""

    fallocate: int
    openat: int
    open: int | None
    """`open` (64-bit ARM has only `openat`)."""
    unbounded_memory: tuple[int, ...]
    """`memfd_create`, `shmget` (and 32-bit x86's `ipc`, which multiplexes it)."""
    x32: bool = False
    """Whether x32 numbers (with `_X32_BIT`) are folded in."""


_ARCHITECTURES = {  # by machine, then by audit architecture
    'x86_64': {
        0xC000003E: _Calls(285, 257, 2, (319, 29), x32=True),
        0x40000003: _Calls(324, 295, 5, (356, 395, 117)),
    },
    'aarch64': {0xC00000B7: _Calls(47, 56, None, (279, 194)), 0x40000028: _Calls(352, 322, 5, (385, 307))},
}

_Record = tuple[int, int, int, int]


def program(memory_capped: bool = True) -> bytes | None:
    """The filter for this machine, as `struct sock_filter` records, for a command whose memory a cgroup caps or not
    (then memory outside any process is refused too); `None` where the machine is not known."""
    architectures = _ARCHITECTURES.get(platform.machine())
    if architectures is None:
        return None
    # Layout: load the architecture; one jump per known one to its section; any other architecture gets ENOSYS
    # for every call (a binary of an unexpected kind can do nothing); each section loads the call's number, refuses
    # the listed ones, and looks at the flags of the opening ones.
    sections = [_section(calls, memory_capped) for calls in architectures.values()]
    head: list[_Record] = [(_LOAD_WORD, 0, 0, _ARCH)]
    offset = 1  # the return for an unknown architecture, after the jumps
    for index, arch in enumerate(architectures):
        head.append((_JUMP_IF_EQUAL, len(sections) - index - 1 + offset, 0, arch))
        offset += len(sections[index])
    head.append((_RETURN, 0, 0, _ERRNO | errno.ENOSYS))
    records = head + [record for section in sections for record in section]
    return b''.join(struct.pack('=HBBI', *record) for record in records)


def _section(calls: _Calls, memory_capped: bool) -> list[_Record]:
    """One architecture's part: refuse `fallocate`, `openat2` and `io_uring` (and the memory no process holds, unless
    `memory_capped`), and `O_TMPFILE` in an open's flags."""
    unsupported = (*_IO_URING, _OPENAT2, *(() if memory_capped else calls.unbounded_memory))
    refused = [(calls.fallocate, errno.EOPNOTSUPP), *((number, errno.ENOSYS) for number in unsupported)]
    flagged = [(number, argument) for number, argument in ((calls.open, 1), (calls.openat, 2)) if number is not None]
    returns: list[_Record] = [(_RETURN, 0, 0, _ERRNO | error) for _, error in refused]
    checks: list[_Record] = []
    for _, argument in flagged:  # load the flags; the bit set: refuse, else allow
        checks += [
            (_LOAD_WORD, 0, 0, _ARGUMENTS + 8 * argument),
            (_JUMP_IF_SET, 0, 1, TMPFILE_FLAG),
            (_RETURN, 0, 0, _ERRNO | errno.EOPNOTSUPP),
            (_RETURN, 0, 0, _ALLOW),
        ]
    section: list[_Record] = [(_LOAD_WORD, 0, 0, _NUMBER)]
    if calls.x32:
        section.append((_AND, 0, 0, ~_X32_BIT & 0xFFFFFFFF))
    comparisons = [number for number, _ in refused] + [number for number, _ in flagged]
    targets = list(range(len(refused))) + [len(returns) + 4 * index for index in range(len(flagged))]
    for position, (number, target) in enumerate(zip(comparisons, targets, strict=True)):
        # equal: skip the comparisons after this one and the allow, then to this call's return or check
        section.append((_JUMP_IF_EQUAL, len(comparisons) - position - 1 + 1 + target, 0, number))
    return [*section, (_RETURN, 0, 0, _ALLOW), *returns, *checks]


def filter_pipe(memory_capped: bool) -> int | None:
    """A pipe's read end holding the filter (see `program`) for a command whose memory a cgroup caps or not, for
    bubblewrap's `--seccomp`; `None` on a machine without one."""
    filter_program = _PROGRAMS[memory_capped]
    if filter_program is None:
        return None
    read, write = os.pipe()
    try:
        os.write(write, filter_program)  # a few hundred bytes: the pipe takes them without a reader
    finally:
        os.close(write)
    return read


_PROGRAMS = {capped: program(capped) for capped in (True, False)}
