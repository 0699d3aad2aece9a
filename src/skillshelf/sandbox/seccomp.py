"""The seccomp filter of a sandboxed command: no `fallocate`, no `io_uring`.

`fallocate` reserves a file's disk blocks without writing them: forty 60 MiB files take a millisecond, faster than
any watch can see, so one command could fill the host's disk past every workspace's limit. Refused, it fails with
`EOPNOTSUPP`, and the C library's `posix_fallocate` writes the blocks instead, at the speed of any writer, which the
workspace's size watch stops. `io_uring` is refused too (`ENOSYS`, as on a kernel without it): it can reserve
blocks without the system call.

The filter is a classic BPF program, built here (no libseccomp) for x86-64 (with its 32-bit and x32 system calls)
and 64-bit ARM (with 32-bit ARM); on other machines `program()` gives none and only the watch holds the limit.
bubblewrap loads it (`--seccomp FD`) just before the command starts.
"""

from __future__ import annotations

import errno
import os
import platform
import struct

__all__ = ('filter_pipe', 'program')

_LOAD_WORD = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JUMP_IF_EQUAL = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_AND = 0x54  # BPF_ALU | BPF_AND | BPF_K
_RETURN = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_NUMBER, _ARCH = 0, 4  # offsets in `struct seccomp_data`
_X32_BIT = 0x40000000
_IO_URING = (425, 426, 427)  # io_uring_setup, io_uring_enter, io_uring_register: the same on every architecture

# audit architecture -> (fallocate's number, whether x32 numbers are folded in)
_ARCHITECTURES = {
    'x86_64': {0xC000003E: (285, True), 0x40000003: (324, False)},
    'aarch64': {0xC00000B7: (47, False), 0x40000028: (352, False)},
}


def program() -> bytes | None:
    """The filter for this machine, as `struct sock_filter` records; `None` where it is not known."""
    architectures = _ARCHITECTURES.get(platform.machine())
    if architectures is None:
        return None
    # Layout: load the architecture; one jump per known one to its section; any other architecture gets ENOSYS
    # for every call (a binary of an unexpected kind can do nothing); each section loads the call's number and
    # refuses the listed ones.
    sections: list[list[tuple[int, int, int, int]]] = []
    for fallocate, x32 in architectures.values():
        section = [(_LOAD_WORD, 0, 0, _NUMBER)]
        if x32:
            section.append((_AND, 0, 0, ~_X32_BIT & 0xFFFFFFFF))
        refused = [(fallocate, errno.EOPNOTSUPP), *((number, errno.ENOSYS) for number in _IO_URING)]
        for number, _ in refused:
            # equal: skip the comparisons after this one, the allow, and the returns before this call's
            section.append((_JUMP_IF_EQUAL, len(refused), 0, number))
        section.append((_RETURN, 0, 0, _ALLOW))
        section += [(_RETURN, 0, 0, _ERRNO | error) for _, error in refused]
        sections.append(section)
    head = [(_LOAD_WORD, 0, 0, _ARCH)]
    jumps = len(sections)
    after_jumps = 1  # the return for an unknown architecture
    offset = after_jumps
    for index, arch in enumerate(architectures):
        head.append((_JUMP_IF_EQUAL, jumps - index - 1 + offset, 0, arch))
        offset += len(sections[index])
    head.append((_RETURN, 0, 0, _ERRNO | errno.ENOSYS))
    records = head + [record for section in sections for record in section]
    return b''.join(struct.pack('=HBBI', *record) for record in records)


def filter_pipe() -> int | None:
    """A pipe's read end holding the filter (see `program`), for bubblewrap's `--seccomp`, or `None` on a machine
    without one."""
    if _PROGRAM is None:
        return None
    read, write = os.pipe()
    try:
        os.write(write, _PROGRAM)  # a few hundred bytes: the pipe takes them without a reader
    finally:
        os.close(write)
    return read


_PROGRAM = program()
