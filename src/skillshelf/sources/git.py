"""`GitSource`: the skill folders of a git repository at a pinned ref, checked out into a cache directory.

Everything runs through the `git` command with an argument list (no shell); the checkout is then read like a
library directory (see `discover`), so every guarantee of folder skills holds: a symlink out of the repository is
refused, files are read beneath their skill folder.

A URL may carry a secret (`https://user:token@host/...`, `?access_token=...`): it reaches `git` and nothing else.
The source's `repr`, its errors and git's own messages show the URL with the secret replaced by `***` (see
`redacted_url`), and the clone's `.git/config` keeps the URL without it (a refresh fetches from the full URL).

Without a `subdirectory`, a repository whose skills are in `skills/` (Anthropic's, obra/superpowers', Vercel's;
Claude Code plugins keep them there) is read from that folder.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import cast
from urllib.parse import SplitResult, unquote, urlsplit, urlunsplit

from filelock import FileLock

from .._text import hide_passwords
from ..errors import SkillError
from ..files import cache_directory
from ..markdown.frontmatter import SKILL_FILE
from .base import SkippedSkill, SourceSkills
from .directory import discover
from .git_sync import GitSync, LockedNames

__all__ = ('GIT_TIMEOUT', 'GitSource', 'redacted_url')

GIT_TIMEOUT = 300.0
"""Seconds one `git` command may take (a clone of a large repository) before it is stopped."""
_GIT = ('git', '-c', 'protocol.ext.allow=never', '-c', 'advice.detachedHead=false')
"""`ext::` URLs would run a command named in the URL, so they are refused whatever the user's git config says."""


@dataclass
class GitSource:
    """The skills of repository `url` at `ref`, cloned once into the cache directory and updated by `refresh`.

    ```python
    Skills(sources=[GitSource('https://github.com/acme/skills.git', ref='v1.4.0')])
    ```
    """

    url: str = field(repr=False)
    """What `git clone` takes: an https or ssh URL, or a local path. Credentials in it (`https://user:token@...`, a
    token in the query) are used, never shown: see `redacted_url`."""
    ref: str = 'HEAD'
    """A branch, a tag or a commit; `HEAD` is the repository's default branch. A branch moves only on `refresh`."""
    subdirectory: str = ''
    """The folder inside the repository that holds the skill folders, hidden ones included (`'skills/.curated'`).
    `''`: the repository's `skills/` folder when it has one (and is not a skill folder itself), else its top."""
    cache_dir: Path | None = None
    """Where the checkout is kept; default: `git/` in skillshelf's cache directory (`$SKILLSHELF_CACHE_DIR`)."""
    sync_every: float | None = None
    """Fetch the repository again every this many seconds, checked when a run starts: the fetch runs in the
    background and never delays or fails a run, and a new commit is checked out at the next run start after it
    arrived, unless it changes a skill of the library's lock (see `git_sync`). `None`: only `refresh` fetches."""
    _commit: str | None = field(default=None, init=False, repr=False)
    _sync: GitSync | None = field(default=None, init=False, repr=False)
    _locked: LockedNames | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        for what, value in (('url', self.url), ('ref', self.ref)):
            if not value.strip() or value.startswith('-'):
                shown = redacted_url(value) if what == 'url' else value
                raise SkillError(f'the git {what} {shown!r} is empty or starts with "-"; give a URL and a ref')
        if self.subdirectory and (problem := _subdirectory_problem(self.subdirectory)) is not None:
            raise SkillError(f'the git subdirectory {self.subdirectory!r} {problem}')
        every = cast(object, self.sync_every)
        if every is not None:
            if isinstance(every, bool) or not isinstance(every, (int, float)) or every <= 0:
                raise SkillError(f'`sync_every` must be a number of seconds above 0, not {every!r}')
            self._sync = GitSync(float(every))

    def __repr__(self) -> str:
        folder = f', subdirectory={self.subdirectory!r}' if self.subdirectory else ''
        return f'GitSource({redacted_url(self.url)!r}, ref={self.ref!r}{folder})'

    @property
    def _secrets(self) -> list[str]:
        """The parts of the URL that must not be shown, for scrubbing git's messages."""
        return _secrets_of(self.url)

    @property
    def checkout(self) -> Path:
        """The working tree of this URL's clone at this ref: sources of one repository at two refs (or a library
        pinned to a tag beside one following a branch) each keep their own, so checking out one never changes the
        files the other reads."""
        base = self.cache_dir if self.cache_dir is not None else cache_directory()
        if base is None:
            base = Path(tempfile.gettempdir()) / f'skillshelf-{os.getuid() if hasattr(os, "getuid") else "user"}'
        key = f'{self.url}\0{self.ref}'.encode('utf-8', 'surrogatepass')
        return base / 'git' / hashlib.sha256(key).hexdigest()[:24]

    def version(self) -> Hashable:
        """The commit checked out (the repository is cloned on first use); with `sync_every`, a fetched commit is
        taken here, and a fetch started when one is due."""
        if self._commit is None:
            self._first_checkout()
        elif self._sync is not None:
            if self._sync.take(self._commit, repr(self), self._changed_skills, self._locked):
                with self._turn():
                    self._commit = self._check_out()
            if self._sync.due():
                self._sync.start(self._fetch)
        return self._commit

    def _first_checkout(self) -> str:
        """The commit checked out, cloning the repository first if needed (no sync: the clone is the first fetch)."""
        if self._commit is None:
            with self._turn():
                if not (self.checkout / '.git').is_dir():
                    self._clone()
                self._commit = self._check_out()
            if self._sync is not None:
                self._sync.last = time.monotonic()
        return self._commit

    def keep_to(self, names: frozenset[str], lock_file: str) -> None:
        """Keep periodic syncs to a lock: a commit that changes a skill of `names` is not checked out (the library
        calls this with its lock's skills)."""
        self._locked = LockedNames(names, lock_file)

    def wait_for_sync(self, timeout: float | None = None) -> None:
        """Wait for a periodic fetch under way, if any; its commit is taken at the next `version()`."""
        if self._sync is not None:
            self._sync.wait(timeout)

    def read_skills(self) -> SourceSkills:
        """The skill folders of the checkout (cloned first if needed), in name order: those of `subdirectory`, else
        of the repository's `skills/` folder when it has one, else of its top."""
        self._first_checkout()
        root = self.skills_folder()
        if not _inside(root, self.checkout):
            problem = 'leads outside the repository (through a symlink); name a folder inside it'
            return SourceSkills(skipped=[SkippedSkill(root, f'the git subdirectory {problem}')])
        found = discover(root)
        return SourceSkills(found.skills, found.skipped, deviations=found.deviations)

    def skills_folder(self) -> Path:
        """The folder of the checkout whose skill folders are read: `subdirectory`, else `skills/` when the
        repository has that folder and it is not itself a skill folder, else the repository's top."""
        if self.subdirectory:
            return self.checkout / self.subdirectory
        conventional = self.checkout / 'skills'
        if (
            not (self.checkout / SKILL_FILE).exists()
            and conventional.is_dir()
            and not (conventional / SKILL_FILE).exists()
        ):
            return conventional
        return self.checkout

    def refresh(self) -> bool:
        """Fetch the repository again and check out `ref` as it is now (a branch may have moved); the library reads
        the skills again at its next run. Returns whether the commit changed.

        Raises:
            SkillError: `git` failed (the message is git's own).
        """
        before = self.version()
        with self._turn():
            self._fetch_refs()
            self._commit = self._check_out()
        return self._commit != before

    def _fetch_refs(self) -> None:
        fetch = ('fetch', '--quiet', '--force', '--tags', '--prune')
        if self._secrets:  # the clone's config has the URL without its secret: fetch from the whole URL
            refspec = '+refs/heads/*:refs/remotes/origin/*'
            _git('-C', str(self.checkout), *fetch, '--no-write-fetch-head', self.url, refspec, hide=self._secrets)
        else:
            _git('-C', str(self.checkout), *fetch, 'origin')

    def _fetch(self) -> str:
        """Fetch (in the sync's thread) without checking anything out; the commit the ref names now."""
        with self._turn():
            self._fetch_refs()
            return self._resolve()

    def _changed_skills(self, old: str, new: str) -> set[str]:
        """The skill folders (by name) whose files differ between commits `old` and `new`; every locked skill when
        a file of the skills folder itself changed (a repository that is one skill)."""
        folder = os.path.relpath(self.skills_folder(), self.checkout).replace(os.sep, '/')
        prefix = '' if folder == '.' else f'{folder}/'
        listed = _git('-C', str(self.checkout), 'diff', '--name-only', '--no-renames', old, new, '--', folder)
        names: set[str] = set()
        for path in (line[len(prefix) :] for line in listed.splitlines() if line.startswith(prefix)):
            top, slash, _ = path.partition('/')
            if not slash:
                return set(self._locked.names) if self._locked is not None else set()
            names.add(top)
        return names

    def _turn(self) -> FileLock:
        """A lock on this checkout, held while it is cloned, fetched or checked out: workers sharing the cache
        directory take turns, since two `git checkout`s at once collide on git's index lock (the operating system
        releases it if its holder dies)."""
        self.checkout.parent.mkdir(parents=True, exist_ok=True)
        return FileLock(f'{self.checkout}.lock')

    def _clone(self) -> None:
        target = self.checkout
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix='.clone-', dir=target.parent))
        try:
            _git('clone', '--quiet', '--no-checkout', '--', self.url, str(partial), hide=self._secrets)
            if self._secrets:  # keep no secret on disk: the clone's config would hold the URL as given
                _git('-C', str(partial), 'remote', 'set-url', 'origin', _without_secrets(self.url))
            if target.exists() and not (target / '.git').is_dir():
                shutil.rmtree(target, ignore_errors=True)  # not a clone of ours: nothing to keep
            try:
                partial.rename(target)
            except OSError:
                # Another process (a worker started at the same time) finished the same clone first and may be
                # reading it: use that one, never delete it.
                if not (target / '.git').is_dir():
                    raise
        finally:
            shutil.rmtree(partial, ignore_errors=True)

    def _resolve(self) -> str:
        """The commit `ref` names in the clone's refs."""
        checkout = str(self.checkout)
        remote = 'refs/remotes/origin/HEAD' if self.ref == 'HEAD' else f'refs/remotes/origin/{self.ref}'
        for candidate in (remote, f'refs/tags/{self.ref}', self.ref):
            commit = _git('-C', checkout, 'rev-parse', '--verify', '--quiet', f'{candidate}^{{commit}}', check=False)
            if commit:
                return commit
        raise SkillError(f'the git ref {self.ref!r} is not a branch, tag or commit of {redacted_url(self.url)}')

    def _check_out(self) -> str:
        checkout, commit = str(self.checkout), self._resolve()
        if not self._is_clean_at(commit):
            _git('-C', checkout, 'checkout', '--quiet', '--force', '--detach', commit)
            _git('-C', checkout, 'clean', '--quiet', '-ffdx')
        return commit

    def _is_clean_at(self, commit: str) -> bool:
        """Whether the checkout holds `commit` exactly: nothing changed, added or ignored (read without locking)."""
        checkout = str(self.checkout)
        if _git('-C', checkout, 'rev-parse', '--verify', '--quiet', 'HEAD', check=False) != commit:
            return False
        changes = _git(
            '--no-optional-locks', '-C', checkout, 'status', '--porcelain', '--ignored', '--untracked-files=all'
        )
        return not changes


def _subdirectory_problem(subdirectory: str) -> str | None:
    """Why `subdirectory` cannot name a folder of a checkout, or `None`. Hidden folders are allowed (OpenAI's library
    keeps its skills in `skills/.curated`); `.git`, `..`, absolute paths and NUL bytes are not."""
    if '\x00' in subdirectory:
        return 'contains a NUL byte'
    text = subdirectory.replace('\\', '/')
    if text.startswith(('/', '~')) or (len(text) > 1 and text[1] == ':'):
        return 'is not a path relative to the repository; give one such as "skills" or "skills/.curated"'
    parts = [part for part in PurePosixPath(text).parts if part not in ('', '.')]  # `.` is the repository's top
    if '..' in parts:
        return 'is not a folder inside the repository; give one such as "skills" or "skills/.curated"'
    if '.git' in parts:
        return "is inside git's own folder (.git), which holds no skills"
    return None


def _inside(folder: Path, checkout: Path) -> bool:
    """Whether `folder`, symlinks resolved, is the checkout or inside it."""
    real, top = os.path.realpath(folder), os.path.realpath(checkout)
    return real == top or real.startswith(os.path.join(top, ''))


def redacted_url(url: str) -> str:
    """`url` as messages show it: its user and password, each query value and any fragment replaced by `***`
    (`https://***@host/repo.git?token=***`). A local path or an scp-style `git@host:repo` has none and stays."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return url
    host = parts.netloc.rpartition('@')[2]
    netloc = f'***@{host}' if '@' in parts.netloc else host
    return urlunsplit(
        parts._replace(netloc=netloc, query=_redacted_query(parts), fragment='***' if parts.fragment else '')
    )


def _redacted_query(parts: SplitResult) -> str:
    pairs = [pair.partition('=') for pair in parts.query.split('&') if pair]
    if not all(equals for _, equals, _ in pairs):  # a bare `?token`: all of it may be the secret
        return '***'
    return '&'.join(f'{key}=***' for key, _, _ in pairs)


def _without_secrets(url: str) -> str:
    """`url` without its user, password, query and fragment: what the clone's config keeps."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition('@')[2], query='', fragment=''))


def _secrets_of(url: str) -> list[str]:
    """The secrets `url` carries (user, password, query values, fragment), as written and percent-decoded, longest
    first; pieces shorter than four characters are left out, as scrubbing them would mangle git's messages."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return []
    userinfo = parts.netloc.rpartition('@')[0]
    pieces = [
        *userinfo.split(':', 1),
        *(pair.partition('=')[2] or pair for pair in parts.query.split('&')),
        parts.fragment,
    ]
    found = {text for piece in pieces if piece for text in (piece, unquote(piece)) if len(text) >= 4}
    return sorted(found, key=len, reverse=True)


def _git(*arguments: str, check: bool = True, hide: Sequence[str] = ()) -> str:
    """Run git with `arguments`; its output, stripped. With `check`, a failure raises `SkillError` with git's message,
    each of `hide` (secrets of the URL) replaced by `***`; without it, a failure returns `''`."""
    environment = {**os.environ, 'GIT_TERMINAL_PROMPT': '0', 'GIT_ASKPASS': 'echo'}  # never wait for a password
    try:
        done = subprocess.run(
            [*_GIT, *arguments],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            env=environment,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except FileNotFoundError:
        raise SkillError('the `git` command is not installed; install git to read skills from a repository') from None
    except subprocess.TimeoutExpired:
        raise SkillError(f'git {arguments[0]} took longer than {GIT_TIMEOUT:.0f} s and was stopped') from None
    if done.returncode != 0:
        if not check:
            return ''
        command = hide_passwords(' '.join(arguments[:3]), *hide)
        raise SkillError(f'git {command} failed: {hide_passwords(done.stderr.strip(), *hide) or done.returncode}')
    return done.stdout.strip()
