"""One file operation of a sandboxed workspace, run inside the sandbox so that file methods see exactly what commands
see: the same paths, the same symlinks, the same permissions, and nothing of the host they could not see.

This file is a program, not imported: `sandbox.py` runs its source with `python -I -S -c SOURCE OP PATH WORKDIR`.
A write's data arrives on stdin; a read's bytes, or a JSON result, leave on stdout; an error leaves as JSON
(`{"type": ..., "errno": ..., "message": ...}`) on stderr, with exit status 3. It uses the standard library only
(and `rm`, to remove a folder).

Why not pydantic-ai's shell fallback, the shell commands `Workspace` runs for a backend with commands and no file
methods (harness's sandboxes rely on it)? Tried for issue #37 on pydantic-ai-slim 2.68: it passes pydantic-ai's
conformance suite (`tests/sandbox/test_sandbox_conformance.py`: 39 passed, the `SupportsRealpath` rule skipped), but
here every file operation would become a sandboxed command, and commands carry the workspace's size limit:

- a workspace over its limit refuses every command, so it could be neither listed, read nor cleaned through the
  workspace: the way out the model and the application are told to take ("remove files") would be refused too
  (`test_a_full_workspace_can_still_be_listed_read_and_cleaned`);
- near the limit a command may write no file larger than the room left, so the fallback's own scratch file kills its
  `list_dir` (`find: 'sh' terminated by signal 25`, SIGXFSZ);
- its `list_dir` gives no sizes, so `list_files` would no longer show them
  (`tests/tools/test_file_tools.py::test_the_model_writes_edits_lists_and_reads_files[sandbox]` fails);
- a file moves 64 KiB per command, base64-encoded: 1 MiB took 1.3 s to write and 0.9 s to read, against 0.2 s each
  here (`benchmarks/sandbox_files.py`: medians, the two paths taking turns, on a 2-core machine shared with other
  work). Not every cost is on that side: a 1 KiB file's write took 0.20 s against 0.17 s here, but `stat`, `exists`
  and `list_dir` took 45-70 ms against 140-200 ms (one shell command there, a Python start here).
"""

import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable


def _read(path: str, workdir: str) -> None:
    # O_NONBLOCK: a FIFO or device is looked at, never waited on.
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        mode = os.fstat(descriptor).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(21, 'Is a directory', path)
        if not stat.S_ISREG(mode):
            raise OSError(22, 'not a regular file', path)
        with os.fdopen(descriptor, 'rb', closefd=False) as file:
            sys.stdout.buffer.write(file.read())
    finally:
        os.close(descriptor)


def _write(path: str, workdir: str) -> None:
    data = sys.stdin.buffer.read()
    parent = os.path.dirname(path)
    try:
        os.makedirs(parent, exist_ok=True)
    except FileExistsError:  # the parent itself is a file; a deeper one raises NotADirectoryError
        raise NotADirectoryError(20, 'Not a directory', path) from None
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        raise IsADirectoryError(21, 'Is a directory', path)
    if mode is not None and not stat.S_ISREG(mode):
        raise OSError(22, 'not a regular file', path)
    with open(path, 'wb') as file:
        file.write(data)


def _entry(path: str, name: str) -> dict[str, object]:
    try:
        is_dir = os.path.isdir(path)
        info = os.stat(path)
        size = None if is_dir else info.st_size
    except OSError:
        is_dir, size = False, None  # a loop or a dangling link: listed, not fatal
    return {'name': name, 'path': path, 'is_dir': is_dir, 'size': size}


def _stat(path: str, workdir: str) -> dict[str, object]:
    info = os.stat(path)
    is_dir = stat.S_ISDIR(info.st_mode)
    name = os.path.basename(os.path.normpath(path))
    return {'name': name, 'path': path, 'is_dir': is_dir, 'size': None if is_dir else info.st_size}


def _list(path: str, workdir: str) -> list[dict[str, object]]:
    with os.scandir(path) as scan:
        names = sorted(entry.name for entry in scan)
    return [_entry(os.path.join(path, name), name) for name in names]


def _mkdir(path: str, workdir: str) -> None:
    os.makedirs(path, exist_ok=True)
    if not os.path.isdir(path):
        raise FileExistsError(17, 'File exists', path)


def _remove(path: str, workdir: str) -> None:
    if not os.path.islink(path):
        real, root = os.path.realpath(path), os.path.realpath(workdir)
        if real == root or root.startswith(real.rstrip('/') + '/'):
            raise ValueError('cannot remove the workspace root or its ancestor')
    if os.path.isdir(path) and not os.path.islink(path):
        _remove_tree(path)
    else:
        os.unlink(path)


def _remove_tree(path: str) -> None:
    # `rm` walks by file descriptor: shutil's removal recurses, and a tree a script left 1,500 folders deep would
    # exhaust Python's recursion. What `rm` cannot remove (a folder without permission) is reported as shutil would.
    rm = shutil.which('rm') or '/bin/rm'
    quiet = subprocess.DEVNULL
    subprocess.run([rm, '-rf', '--', path], stdin=quiet, stdout=quiet, stderr=quiet, check=False)
    if os.path.lexists(path):
        shutil.rmtree(path)


def _exists(path: str, workdir: str) -> bool:
    return os.path.exists(path)


def _realpath(path: str, workdir: str) -> str:
    return os.path.realpath(path)


_OPERATIONS: dict[str, Callable[[str, str], object]] = {
    'read': _read,
    'write': _write,
    'stat': _stat,
    'list': _list,
    'mkdir': _mkdir,
    'remove': _remove,
    'exists': _exists,
    'realpath': _realpath,
}


def main() -> None:
    operation, path, workdir = sys.argv[1:4]
    try:
        result = _OPERATIONS[operation](path, workdir)
    except (OSError, ValueError) as error:
        number = error.errno if isinstance(error, OSError) else None
        detail = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        sys.stderr.write(json.dumps({'type': type(error).__name__, 'errno': number, 'message': detail}))
        sys.exit(3)
    if operation != 'read':
        sys.stdout.write(json.dumps(result))


if __name__ == '__main__':
    main()
