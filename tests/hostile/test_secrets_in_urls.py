"""A `GitSource` URL that carries a secret (`http://user:token@host/...`, a token in the query) uses it and never
shows it: not in a repr, a warning, an exception, a span, the command line's output, the clone on disk, or anything
the model receives.

The repository is served for real on 127.0.0.1 by `git http-backend` behind basic authentication (`git_http`), so a
clone that works proves the URL's credentials were sent; the error paths are a wrong token, a missing repository, a
missing ref, a server that is down and a token in the query string.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.models.instrumented import InstrumentationSettings

from skillshelf import GitSource, LibraryOptions, SkillError, SkillLibrary, Skills
from skillshelf.sources.git import redacted_url

from git_http import TOKEN, USER, GitServer, bare_repository, git_server
from reliability.ledger import case
from repo_paths import REPO
from scripted_model import NO_CATALOG, Script, call, tool_returns

AREA = 'Skill files'
SKILLS = {
    'skills/release/SKILL.md': '---\nname: release\ndescription: Cut a release of the service.\n---\nTag it.\n',
    'skills/release/notes.md': 'Release notes template.',
}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[GitServer]:
    bare_repository(tmp_path / 'served', 'skills.git', SKILLS)
    with git_server(tmp_path / 'served') as running:
        yield running


def assert_hidden(text: str) -> None:
    """Neither the token nor its user name (both are secrets of the URL) is in `text`."""
    assert TOKEN not in text
    assert USER not in text


def failure(source: GitSource) -> str:
    """What every error path says: the source's own error, the library's, and the warnings on the way."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        with pytest.raises(SkillError) as direct:
            source.read_skills()
        with pytest.raises(SkillError) as built:
            Skills(sources=[source])
    said = [str(direct.value), repr(direct.value), str(built.value), *(str(warning.message) for warning in caught)]
    cause = built.value.__cause__
    return '\n'.join([*said, str(cause), repr(source)])


def test_a_clone_with_credentials_works_and_keeps_them_out_of_everything(tmp_path: Path, server: GitServer) -> None:
    url = server.url('skills.git')
    source = GitSource(url, cache_dir=tmp_path / 'cache')
    capability = Skills(sources=[source], catalog_budget=NO_CATALOG)
    assert list(capability.library.skills) == ['release']
    assert any(request.endswith('authorised') for request in server.requests)  # the URL's credentials were sent

    script = Script([[call('search_skills', query='release')], [call('load_skill', name='release')]])
    script.steps = [*script.steps, [call('read_skill_resource', name='release', path='notes.md')]]
    messages = Agent(script.model(), capabilities=[capability]).run_sync('cut a release').all_messages()
    assert tool_returns(messages, 'read_skill_resource') == ['Release notes template.']
    assert_hidden(repr(messages) + ''.join(request.instructions or '' for request in script.requests))
    assert_hidden(repr(source) + repr(capability.library.skills) + repr(capability.library.skipped))
    assert repr(source) == f"GitSource('http://***@127.0.0.1:{server.port}/skills.git', ref='HEAD')"

    on_disk = subprocess.run(['grep', '-r', '-l', '-e', TOKEN, str(source.checkout)], capture_output=True, text=True)
    assert on_disk.stdout == ''  # the clone's config keeps the URL without its credentials
    case(AREA, 'a git URL with user:token, cloned from a password-protected server', f'repr: {source!r}')


def test_a_refresh_fetches_with_the_credentials_and_stores_none(tmp_path: Path, server: GitServer) -> None:
    source = GitSource(server.url('skills.git'), cache_dir=tmp_path / 'cache')
    first = source.version()
    work = server.root / 'skills.git.work'
    (work / 'skills' / 'release' / 'SKILL.md').write_text(SKILLS['skills/release/SKILL.md'].replace('Tag', 'Sign'))
    identity = ['-c', 'user.name=t', '-c', 'user.email=t@example.com']
    subprocess.run(['git', '-C', str(work), *identity, 'commit', '--quiet', '-am', 'sign'], check=True)
    subprocess.run(['git', '-C', str(work), 'push', '--quiet', str(server.root / 'skills.git'), 'main'], check=True)

    assert source.refresh()
    assert source.version() != first
    assert (
        'Sign it.' in SkillLibrary.build(options=LibraryOptions(sources=[source])).skills['release'].load_instructions()
    )
    on_disk = subprocess.run(['grep', '-r', '-l', '-e', TOKEN, str(source.checkout)], capture_output=True, text=True)
    assert on_disk.stdout == ''


@pytest.mark.parametrize(
    ('what', 'make'),
    [
        ('a wrong token', lambda s, p: GitSource(s.url('skills.git', token=TOKEN[::-1] + 'x'), cache_dir=p)),
        ('a missing repository', lambda s, p: GitSource(s.url('missing.git'), cache_dir=p)),
        ('a missing ref', lambda s, p: GitSource(s.url('skills.git'), ref='no-such-tag', cache_dir=p)),
        ('a server that is down', lambda s, p: GitSource(f'http://{USER}:{TOKEN}@127.0.0.1:9/skills.git', cache_dir=p)),
        (
            'a token in the query',
            lambda s, p: GitSource(
                f'http://127.0.0.1:{s.port}/skills.git?access_token={TOKEN}&user={USER}', cache_dir=p
            ),
        ),
        ('a token as the user', lambda s, p: GitSource(f'http://{TOKEN}@127.0.0.1:{s.port}/skills.git', cache_dir=p)),
        ('a token in the fragment', lambda s, p: GitSource(s.url('skills.git') + f'#{TOKEN}', ref='x', cache_dir=p)),
    ],
)
def test_every_error_path_hides_the_credentials(tmp_path: Path, server: GitServer, what: str, make: Any) -> None:
    said = failure(make(server, tmp_path / 'cache'))
    assert_hidden(said)
    assert '***' in said
    case(AREA, f'a git URL with credentials and {what}', said.splitlines()[0])


def test_a_refresh_that_fails_hides_the_credentials(tmp_path: Path) -> None:
    """The server goes down after the clone: `refresh` raises, and says so without the token."""
    bare_repository(tmp_path / 'served', 'skills.git', SKILLS)
    with git_server(tmp_path / 'served') as server:
        source = GitSource(server.url('skills.git'), cache_dir=tmp_path / 'cache')
        source.version()
    with pytest.raises(SkillError, match='fetch failed') as raised:
        source.refresh()
    assert_hidden(str(raised.value))
    case(AREA, 'a git URL with credentials whose server is down at refresh', str(raised.value))


@pytest.mark.parametrize(
    ('url', 'shown'),
    [
        ('https://user:tok3n@example.com/r.git', 'https://***@example.com/r.git'),
        ('https://ghp_abcdef@example.com:8443/r.git', 'https://***@example.com:8443/r.git'),
        ('https://example.com/r.git?token=abc&x=1#frag', 'https://example.com/r.git?token=***&x=***#***'),
        ('https://example.com/r.git?bare-secret', 'https://example.com/r.git?***'),
        ('ssh://git@example.com/r.git', 'ssh://***@example.com/r.git'),
        ('git@example.com:org/r.git', 'git@example.com:org/r.git'),
        ('/srv/repos/r.git', '/srv/repos/r.git'),
    ],
)
def test_redacted_urls_keep_the_host_and_path_only(url: str, shown: str) -> None:
    assert redacted_url(url) == shown


def test_spans_of_an_instrumented_run_carry_no_credentials(tmp_path: Path, server: GitServer) -> None:
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):  # set once per process; another module may have set it first
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    try:
        source = GitSource(server.url('skills.git'), cache_dir=tmp_path / 'cache')
        capability = Skills(sources=[source], catalog_budget=NO_CATALOG)
        script = Script([[call('search_skills', query='release')], [call('load_skill', name='release')]])
        settings = InstrumentationSettings(include_content=True)
        agent = Agent(script.model(), capabilities=[capability, Instrumentation(settings=settings)])
        agent.run_sync('cut a release')
        spans = exporter.get_finished_spans()
        assert {'skillshelf.search', 'skillshelf.load'} <= {span.name for span in spans}
        assert_hidden('\n'.join(span.to_json() for span in spans))
    finally:
        exporter.shutdown()


def test_the_command_line_shows_no_credentials(tmp_path: Path, server: GitServer) -> None:
    """`skillshelf list --skill module:skills`, where the module reads a credentialed `GitSource`: its listing, and
    its error when the clone fails."""
    module = tmp_path / 'modules' / 'git_skills.py'
    module.parent.mkdir()
    module.write_text(
        'import os\nfrom pathlib import Path\nfrom skillshelf import GitSource\n'
        "source = GitSource(os.environ['SKILLS_URL'], ref=os.environ['SKILLS_REF'], cache_dir=Path(os.environ['CACHE']))\n"
        'skills = list(source.read_skills().skills)\n'
    )
    (tmp_path / 'empty').mkdir()
    outputs: list[str] = []
    for url, ref in [
        (server.url('skills.git'), 'HEAD'),
        (server.url('skills.git'), 'nope'),
        (server.url('gone.git'), 'HEAD'),
    ]:
        environment = {
            **os.environ,
            'PYTHONPATH': os.pathsep.join([str(REPO / 'src'), str(module.parent)]),
            'SKILLS_URL': url,
            'SKILLS_REF': ref,
            'CACHE': str(tmp_path / 'cache'),
            'COLUMNS': '200',
        }
        done = subprocess.run(
            [sys.executable, '-m', 'skillshelf', 'list', str(tmp_path / 'empty'), '--skill', 'git_skills:skills'],
            capture_output=True,
            text=True,
            env=environment,
            cwd=tmp_path,
            timeout=120,
            check=False,
        )
        outputs.append(done.stdout + done.stderr)
    listed, bad_ref, missing = outputs
    assert 'release' in listed
    assert "the git ref 'nope'" in bad_ref
    assert 'not found' in missing
    for output in outputs:
        assert_hidden(output)
    case(AREA, 'the command line, given skills from a git URL with credentials', bad_ref.strip().splitlines()[-1])
