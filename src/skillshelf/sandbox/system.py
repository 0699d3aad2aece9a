"""What of the host's system configuration (`/etc`) the sandbox shows, read-only.

Installed programs read configuration under `/etc` that their packages put there, often through links from `/usr`:
Debian's LibreOffice reaches its `sofficerc` and registry through `/usr/lib/libreoffice/program` links into
`/etc/libreoffice` (without them even `soffice --convert-to` aborts with "Unspecified Application Error"), programs
such as `awk` are links through `/etc/alternatives`, fontconfig finds the fonts through `/etc/fonts`. So the sandbox
shows the folders and files `SYSTEM_CONFIGURATION` names, those that exist on the host, each read-only at its own
path.

It is a short allowlist, not the host's `/etc` less a deny list: `/etc` also holds secrets (`shadow`, `ssh`,
`sudoers`, `ssl/private`, database passwords in `mysql/debian.cnf`, proxy credentials in `environment`, repository
credentials in `maven/settings.xml`...), and a package installed tomorrow may add one; an allowlist keeps them out
without knowing them. A program that needs more gets it with `SkillSandbox(mounts=['/etc/...'])`.
"""

from __future__ import annotations

import functools
import glob
import os

__all__ = ('SYSTEM_CONFIGURATION', 'system_configuration')

SYSTEM_CONFIGURATION: tuple[str, ...] = (
    # Debian's switchable programs: /usr/bin/awk -> /etc/alternatives/awk -> /usr/bin/mawk
    'alternatives',
    # the dynamic linker's library folders and cache (libraries outside the default folders)
    'ld.so.cache',
    'ld.so.conf',
    'ld.so.conf.d',
    # fontconfig: which fonts there are (LibreOffice, poppler, matplotlib render text with them)
    'fonts',
    # programs' own configuration, reached through their packages' links from /usr
    'libreoffice',
    'java-*',
    'python3',
    'python3.*',
    'ImageMagick-*',
    'ghostscript',
    'texmf',
    # what kind a file is: by its name (Python's mimetypes) and by its content (file, libmagic)
    'mime.types',
    'magic',
    'magic.mime',
    # paper size, local time
    'papersize',
    'localtime',
    'timezone',
    # the public certificate authorities and OpenSSL's settings, for HTTPS when the network is allowed
    # (ssl/private, beside them, holds private keys and stays out)
    'ssl/certs',
    'ssl/openssl.cnf',
    'ca-certificates.conf',
    'pki/tls/certs',
    'pki/ca-trust/extracted',
)
"""The paths under `/etc` the sandbox shows read-only, as shell patterns: public configuration that installed
programs read, never secrets."""


def system_configuration(etc: str = '/etc') -> tuple[str, ...]:
    """The paths of `SYSTEM_CONFIGURATION` that exist under `etc` on this machine, sorted.

    Looked for again only when `etc` changes (a package installed or removed adds or drops an entry): every
    sandboxed command asks, and the globs take a couple of milliseconds.
    """
    try:
        changed = os.stat(etc).st_mtime_ns
    except OSError:
        return ()
    return _existing(etc, changed)


@functools.lru_cache(maxsize=8)
def _existing(etc: str, changed: int) -> tuple[str, ...]:
    del changed  # only the cache's key
    found: set[str] = set()
    for pattern in SYSTEM_CONFIGURATION:
        for path in glob.glob(os.path.join(glob.escape(etc), pattern)):
            if os.path.exists(path):  # a dangling link shows nothing
                found.add(path)
    return tuple(sorted(found))
