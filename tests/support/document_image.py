"""The container image the document workflow tests run in under harness's `DockerSandbox`, built on this machine
from Debian packages (nothing is pulled from a registry): `debootstrap --variant=minbase --include=python3`, then the
programs the tests' document skills use (LibreOffice, poppler, Node) by the root's own `apt-get` (debootstrap's
resolver picks `libreoffice-core-nogui`, which breaks `libreoffice-calc`), pypdf from PyPI (Debian's 3.4 lacks what
the skills' scripts call) and npm's `pptxgenjs` and `docx`, installed into the root by this machine's pip and npm;
then `tar -C ROOT -c . | docker import`.

Its tag encodes the recipe, so the daemon's cache (`docker_daemon`, under the test cache folder) keeps it across
sessions and a changed recipe builds a new one. Building needs root, `debootstrap`, `npm` and the Debian mirror and
npm registry (the containers themselves run with no network).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

from docker_daemon import cache_folder, docker_problem

__all__ = ('DOCUMENT_IMAGE', 'ImageRecipe', 'document_image')


@dataclass(frozen=True)
class ImageRecipe:
    """What goes into a test image; its tag is a digest of all of it."""

    name: str
    """The image's repository name (its tag is the recipe's digest)."""
    release: str
    """The Debian release debootstrap installs."""
    packages: Sequence[str]
    """Debian packages installed with their dependencies (not their recommendations)."""
    python_packages: Sequence[str]
    """Python distributions (pinned) from PyPI, for the image's `python3`."""
    npm_packages: Sequence[str]
    """npm packages (pinned) installed globally, where `NODE_PATH` points."""
    environment: Sequence[str]
    """`ENV` lines of the image: every command in its containers gets them."""
    mirror: str = 'http://deb.debian.org/debian'

    @property
    def tag(self) -> str:
        digest = hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:12]
        return f'{self.name}:{digest}'


NODE_MODULES = '/usr/local/lib/node_modules'
"""npm's global folder in the image (Debian's npm prefix is `/usr/local`)."""

DOCUMENT_IMAGE = ImageRecipe(
    name='skillshelf-test-documents',
    release='bookworm',
    packages=(
        'libreoffice-calc',  # the Basic-macro recalculation
        'libreoffice-impress',  # the deck's thumbnail
        'libreoffice-writer',  # the letter's PDF
        'poppler-utils',  # pdftoppm
        'nodejs',
        'fonts-dejavu-core',  # text on the rendered slide
    ),
    python_packages=('pypdf==7.1.1',),  # the pdf-form skill's scripts
    npm_packages=('pptxgenjs@4.0.1', 'docx@9.15.2'),
    environment=(
        'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        f'NODE_PATH={NODE_MODULES}',
        'LANG=C.UTF-8',
    ),
)
"""The image of the document workflow tests (`tests/tools/document_skills`)."""


def _exists(tag: str) -> bool:
    done = subprocess.run(['docker', 'image', 'inspect', tag], capture_output=True, check=False, timeout=60)
    return done.returncode == 0


def _mounts_below(root: Path) -> list[str]:
    prefix = f'{root}/'
    with open('/proc/mounts', encoding='utf-8') as mounts:
        return [point for line in mounts if (point := line.split()[1]).startswith(prefix)]


def _unmount_below(root: Path) -> None:
    """Unmount what the build (or a failed debootstrap) left mounted in `root` (`/proc`, `/sys`), deepest first."""
    for point in sorted(_mounts_below(root), key=len, reverse=True):
        subprocess.run(['umount', '--lazy', point], capture_output=True, check=False)


def _remove(root: Path) -> None:
    """Remove the image's root, never through a mount of the host's `/proc` or `/sys` still in it."""
    _unmount_below(root)
    if _mounts_below(root):
        pytest.fail(f'{root} still has mounts ({", ".join(_mounts_below(root))}): unmount them and remove it')
    shutil.rmtree(root, ignore_errors=True)


def _run(command: Sequence[str], what: str, timeout: float) -> str:
    done = subprocess.run(list(command), capture_output=True, text=True, check=False, timeout=timeout)
    if done.returncode != 0:
        docker_problem(f'{what} failed (exit code {done.returncode}): {(done.stderr or done.stdout)[-3000:]}')
    return done.stdout


def _install_debian_packages(root: Path, packages: Sequence[str]) -> None:
    """`apt-get install` in the root, with its `/proc` mounted and no service started."""
    policy = root / 'usr' / 'sbin' / 'policy-rc.d'
    policy.write_text('#!/bin/sh\nexit 101\n', encoding='utf-8')
    policy.chmod(0o755)
    _run(['mount', '-t', 'proc', 'proc', str(root / 'proc')], 'mounting /proc in the image root', timeout=60)
    try:
        chroot = ['env', 'DEBIAN_FRONTEND=noninteractive', 'chroot', str(root)]
        _run([*chroot, 'apt-get', 'update', '-qq'], 'apt-get update in the image root', timeout=900)
        install = ['apt-get', 'install', '-y', '-qq', '--no-install-recommends', *packages]
        _run([*chroot, *install], 'apt-get install in the image root', timeout=3600)
        _run([*chroot, 'apt-get', 'clean'], 'apt-get clean in the image root', timeout=300)
    finally:
        _unmount_below(root)
        policy.unlink()
    shutil.rmtree(root / 'var' / 'lib' / 'apt' / 'lists', ignore_errors=True)


def build(recipe: ImageRecipe) -> str:
    """Build `recipe` into the daemon `docker` reaches, unless it has it already; its tag."""
    if _exists(recipe.tag):
        return recipe.tag
    missing = [program for program in ('debootstrap', 'chroot', 'npm', 'tar') if shutil.which(program) is None]
    if missing:
        docker_problem(f'building the test image needs {", ".join(missing)} (.ci/run installs them)')
    if os.geteuid() != 0:
        docker_problem('building the test image (debootstrap) needs root')
    scratch = cache_folder() / 'image-build'
    scratch.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix='root-', dir=scratch))
    try:
        debootstrap = ['debootstrap', '--variant=minbase', '--include=python3', recipe.release, str(root)]
        _run([*debootstrap, recipe.mirror], 'debootstrap', timeout=3600)
        _install_debian_packages(root, recipe.packages)
        version = _run(
            ['chroot', str(root), 'python3', '-c', 'import sys; print("%d.%d" % sys.version_info[:2])'],
            "asking the image's python3 its version",
            timeout=60,
        ).strip()
        pip = [sys.executable, '-m', 'pip', 'install', '--quiet', '--only-binary=:all:', '--python-version', version]
        target = root / 'usr' / 'local' / 'lib' / f'python{version}' / 'dist-packages'
        _run([*pip, '--target', str(target), *recipe.python_packages], 'pip install', timeout=900)
        npm = ['npm', 'install', '--global', '--prefix', f'{root}/usr/local', '--no-audit', '--no-fund']
        _run([*npm, *recipe.npm_packages], 'npm install', timeout=900)
        changes = [arg for line in recipe.environment for arg in ('--change', f'ENV {line}')]
        tar = subprocess.Popen(['tar', '-C', str(root), '-c', '.'], stdout=subprocess.PIPE)
        imported = subprocess.run(
            ['docker', 'import', *changes, '-', recipe.tag],
            stdin=tar.stdout,
            capture_output=True,
            text=True,
            check=False,
            timeout=1800,
        )
        assert tar.stdout is not None
        tar.stdout.close()
        if tar.wait() != 0 or imported.returncode != 0:
            docker_problem(f'docker import of {recipe.tag} failed: {imported.stderr.strip()}')
    finally:
        _remove(root)
    return recipe.tag


@pytest.fixture(scope='session')
def document_image(docker_host: str | None) -> str:
    """The tag of the document workflows' image, built on first use (see the module docstring)."""
    del docker_host
    return build(DOCUMENT_IMAGE)
