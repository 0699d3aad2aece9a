"""The words the command rules look for, shared by the shell and the Python rules: programs that fetch, decode
or interpret; paths of credential stores, of places that run things at login or on a schedule, of other skills;
hosts whose install scripts are published for piping into a shell."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

__all__ = (
    'AUTOSTART',
    'CREDENTIAL_STORE',
    'DECODERS',
    'DOWNLOADERS',
    'GIT_HOOKS',
    'INTERPRETERS',
    'KNOWN_INSTALLERS',
    'OTHER_SKILLS',
    'SHELL_PROFILE',
    'TRIGGERS',
    'interpreter',
    'known_installer',
    'raw_address',
    'url_host',
    'urls_in',
    'worth_reading',
)

DOWNLOADERS = frozenset(
    {'curl', 'wget', 'fetch', 'http', 'https', 'aria2c', 'iwr', 'irm', 'invoke-webrequest', 'invoke-restmethod'}
)
"""Programs that fetch a URL (`http` and `https` are HTTPie's)."""
INTERPRETERS = frozenset(
    {
        'sh',
        'bash',
        'zsh',
        'dash',
        'ksh',
        'fish',
        'csh',
        'tcsh',
        'python',
        'python2',
        'python3',
        'py',
        'perl',
        'ruby',
        'node',
        'php',
        'pwsh',
        'powershell',
        'iex',
        'invoke-expression',
        'source',
        '.',
        'eval',
        'osascript',
        'deno',
        'bun',
        'tclsh',
        'lua',
    }
)
"""Programs that run the code they are given (on standard input or as an argument)."""
_VERSIONED = re.compile(r'(python|pypy)[0-9.]*$')
DECODERS = frozenset({'base64', 'base32', 'xxd', 'uudecode', 'openssl', 'gpg', 'rev'})
"""Programs that turn an encoded payload back into code (`openssl base64 -d`, `xxd -r`, `rev`)."""
CREDENTIAL_STORE = re.compile(
    r'(?:~|\$\{?HOME\}?|/(?:home|Users)/[^/\s]+|/root)/\.ssh(?:/(?:id_[a-z0-9_]+(?!\.pub)\b|\*)|/?(?=[\s"\')]|$))'
    r'|\.aws/credentials|\.netrc\b|\.git-credentials|\.docker/config\.json|\.kube/config|\.config/gh/hosts\.yml'
    r'|\.pypirc|\.gnupg/|/Cookies\b|cookies\.sqlite|Login Data|key4\.db|logins\.json|/proc/self/environ'
    r'|\bsecurity\s+(?:find-(?:generic|internet)-password|dump-keychain)|Keychains/',
    re.IGNORECASE,
)
"""Where secrets live: private SSH keys (not `.pub`), cloud and registry credentials, browser cookie and password
databases, the macOS keychain, a process's environment."""
SHELL_PROFILE = re.compile(
    r'(?:^|[/~])\.(?:bashrc|bash_profile|bash_login|profile|zshrc|zprofile|zshenv|zlogin|kshrc|cshrc|tcshrc)\b'
    r'|\.config/fish/config\.fish|/etc/(?:profile|bash\.bashrc|zsh/zshrc|environment)\b'
)
AUTOSTART = re.compile(
    r'/etc/cron|/var/spool/cron|/etc/rc\.local|LaunchAgents/|LaunchDaemons/|\.config/autostart|systemd/(?:user|system)/'
    r'|\.ssh/authorized_keys|/etc/sudoers|/etc/ld\.so\.preload'
)
"""Places whose contents run on a schedule, at login or boot, or give access to the machine."""
GIT_HOOKS = re.compile(r'\.git/hooks/|core\.hooksPath')
OTHER_SKILLS = re.compile(
    r'\.(?:claude|codex|agents|cursor|gemini|opencode)/(?:skills|commands|agents|rules|hooks)\b'
    r'|\.claude/settings(?:\.local)?\.json|(?:~|\$\{?HOME\}?)/\.(?:claude|codex)/(?:CLAUDE|AGENTS)\.md'
)
"""Other skills' folders, and the agent's own configuration and memory files."""
TRIGGERS = frozenset(
    """
    curl wget aria2c iwr irm invoke downloadstring base64 base32 xxd uudecode openssl gpg rev rm mkfs mke2fs dd shred
    wipefs chmod chown crontab cron ssh aws netrc credentials cookies keychain keychains environ env printenv bashrc
    zshrc profile bash_profile bash_login zprofile zshenv zlogin kshrc cshrc tcshrc fish launchagents launchdaemons
    systemd autostart hooks hookspath claude codex agents cursor gemini opencode pip pip3 uv uvx poetry pipx npm npx
    yarn pnpm bun bunx push nc ncat netcat socat telnet scp sftp rsync delete preserve sda sdb nvme0n1 mmcblk0 disk0
    authorized_keys sudoers preload tcp udp iex frombase64string encodedcommand security urlopen b64decode exec eval
    system requests
    """.split()
)
"""Words (lower case, split at anything but letters, digits and `_`) one of which a line holds if any command
rule can find something in it: checked first, as a set lookup, since most lines of code hold none."""
_NON_WORD = str.maketrans({chr(code): ' ' for code in range(128) if not (chr(code).isalnum() or chr(code) == '_')})


def worth_reading(text: str) -> bool:
    """Whether `text` holds a word of `TRIGGERS` (or a fork bomb's `:(`)."""
    return not TRIGGERS.isdisjoint(text.lower().translate(_NON_WORD).split()) or ':(' in text


KNOWN_INSTALLERS = frozenset(
    {
        'astral.sh',
        'sh.rustup.rs',
        'rustup.rs',
        'get.docker.com',
        'bun.sh',
        'deno.land',
        'deno.com',
        'brew.sh',
        'get.pnpm.io',
        'install.python-poetry.org',
        'claude.ai',
        'ollama.com',
        'ollama.ai',
        'fly.io',
        'get.sdkman.io',
        'foundry.paradigm.xyz',
        'volta.sh',
        'starship.rs',
        'tailscale.com',
        'cli.github.com',
        'vercel.com',
        'railway.app',
        'railway.com',
        'supabase.com',
        'get.helm.sh',
        'raw.githubusercontent.com/nvm-sh',
        'raw.githubusercontent.com/homebrew',
        'nixos.org',
        'install.determinate.systems',
        'pyenv.run',
        'sdk.cloud.google.com',
        'get.k3s.io',
        'k3d.io',
        'mise.run',
        'mise.jdx.dev',
        'cursor.com',
        'opencode.ai',
        'pkgx.sh',
        'get.rvm.io',
        'install.meteor.com',
        'dot.net',
        'dotnet.microsoft.com',
        'aka.ms',
        'nodejs.org',
        'deb.nodesource.com',
        'rpm.nodesource.com',
        'github.com/nvm-sh',
        'sh.flox.dev',
        'get.flox.dev',
        'install.ohmyz.sh',
        'cdn.jsdelivr.net/gh/ohmyzsh',
        'raw.githubusercontent.com/ohmyzsh',
        'get.rke2.io',
        'dl.google.com',
        'cli.doppler.com',
        'get.scoop.sh',
        'chocolatey.org',
        'community.chocolatey.org',
        'openclaw.ai',
        'bitwarden.com',
        'get.jetify.com',
        'modular.com',
        'get.modular.com',
        'hf.co',
        'huggingface.co',
        'code.visualstudio.com',
        'anthropic.com',
        'openai.com',
    }
)
"""Hosts (and host/owner prefixes) that publish an install script for piping into a shell: such a line is a
reviewer's warning, not an attack."""
_URL = re.compile(r"""(?:https?|ftp)://[^\s"'`<>)|;]+""", re.IGNORECASE)
_IP = re.compile(r'^\d{1,3}(?:\.\d{1,3}){3}$')


def interpreter(word: str) -> bool:
    """Whether `word` names a program that runs the code it is given (`python3.12`, `/bin/bash`, `sudo` left out)."""
    name = word.rsplit('/', 1)[-1].lower()
    return name in INTERPRETERS or _VERSIONED.match(name) is not None


def urls_in(text: str) -> list[str]:
    """The URLs written in `text`."""
    return _URL.findall(text)


def url_host(url: str) -> str:
    """The host of `url`, lower-cased ('' when there is none)."""
    try:
        return (urlsplit(url).hostname or '').lower()
    except ValueError:
        return ''


def raw_address(url: str) -> bool:
    """Whether `url` names its server by IP address or without TLS: nothing vouches for what it serves."""
    return url.lower().startswith(('http://', 'ftp://')) or _IP.match(url_host(url)) is not None


def known_installer(urls: list[str]) -> bool:
    """Whether every URL of a fetch-and-run line is a published installer's (see `KNOWN_INSTALLERS`)."""
    if not urls:
        return False
    for url in urls:
        if raw_address(url):
            return False
        host = url_host(url)
        path = (urlsplit(url).path or '/').lower()
        with_owner = host + '/' + path.strip('/').split('/', 1)[0]
        if not any(host == known or host.endswith('.' + known) or with_owner == known for known in KNOWN_INSTALLERS):
            return False
    return True
