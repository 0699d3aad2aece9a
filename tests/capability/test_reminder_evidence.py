"""Reminders need evidence besides the score: chat filler points out no skill, a real request still does, and a
request is reminded once.

The filler here is not the benchmark's (`benchmarks/data/chat_filler.txt`, on which the rule was measured): a
different set, so the rule is checked on messages it was not tuned on. The library is shaped like the public ones
where the issue was seen (a handful of skills whose bodies hold example code and sample dialogue, so chat words
occur in them), written here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, TextPart, UserPromptPart

from skillshelf import SkillLibrary, Skills
from skillshelf.capability.reminders import EVIDENCE_WORDS, prompt_to_remind, shared_words, with_reminder
from skillshelf.library import LibraryOptions
from skillshelf.ranking.tokenize import word_terms

from repo_paths import REPO
from scripted_model import Script

FILLER = [
    'hey!',
    'morning :)',
    'yes please',
    'sure thing',
    'no thanks',
    'alright',
    'fine by me',
    'thx',
    'cheers',
    'looks good to me',
    'do that',
    'go for it',
    'which one?',
    'the last one',
    'how about that?',
    'is that all?',
    'anything else?',
    'wow',
    '🎉',
    'ok 👌',
    '嗯，好',
    '好的，谢谢',
    '收到',
    '좋아요',
    'perfecto',
    'bien sûr',
    'alles klar',
    'ладно',
]
"""Short conversational messages, none of them in the benchmark's filler file."""

ISSUE_EXAMPLES = ['hello', 'yes', 'ok, do it']
"""What pointed out pdf, claude-api and skill-creator in the issue's report."""

SKILLS = {
    'pdf': (
        'Extract text and tables from PDF files, fill PDF forms, merge and split documents. Use when the user '
        'works with a PDF. 从 PDF 文件中提取文字和表格。',
        """# PDF processing

Read a page with pypdf:

```python
reader = PdfReader('report.pdf')
print(reader.pages[0].extract_text())  # Hello World
```

If the user says yes, write the merged file; ok means go on with the next page. Thanks to pdfplumber, tables
come out as rows. Sure: check that the last page is not empty.
""",
    ),
    'claude-api': (
        'Build apps with the Claude API and the Anthropic SDK: messages, tool use, streaming. Use when code '
        'imports anthropic.',
        """# Claude API

Ask the user whether streaming is wanted (yes or no). A typical exchange:

User: hello, can you help?
Assistant: Sure thing. Which one: messages or batches?
User: the first one, thanks. Looks good to me, go for it.

Cheers, the answer is all that is needed; anything else goes in the system prompt. Wow: alright, fine.
""",
    ),
    'skill-creator': (
        'Create a new skill or improve an existing one: write its SKILL.md, scripts and evals. Use when the user '
        'wants a skill made.',
        """# Creating a skill

Interview the user first. When they say "ok, do it" or "do that", draft the SKILL.md; if they say "no thanks",
stop. Is that all? Ask how about the last one, and whether anything else should change. 好的，谢谢 and 收到 mean
the same as ok. 좋아요. Perfecto, bien sûr, alles klar, ладно: every language says yes.
""",
    ),
    'docx': (
        'Create and edit Word documents (.docx): tracked changes, comments, headers and tables. Use for a Word '
        'document.',
        """# Word documents

Open the file with python-docx. Say hey to the reviewer in a comment, good morning in a header if you like. 🎉
""",
    ),
    'webapp-testing': (
        'Test a local web application with Playwright: screenshots, browser logs, clicking through pages. Use when '
        'checking a frontend.',
        """# Testing web apps

Start the server, then open the page. 嗯，好: wait for the network to be idle. ok 👌 means the check passed.
""",
    ),
}


def write_library(directory: Path) -> Path:
    for name, (description, body) in SKILLS.items():
        folder = directory / name
        folder.mkdir(parents=True)
        (folder / 'SKILL.md').write_text(
            f'---\nname: {name}\ndescription: "{description}"\n---\n\n{body}', encoding='utf-8'
        )
    return directory


@pytest.fixture(scope='module')
def library_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_library(tmp_path_factory.mktemp('public-shaped'))


def reminders_in(messages: Sequence[ModelMessage]) -> list[str]:
    return [
        str(part.content)
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart) and str(part.content).startswith('<skill-reminder>')
    ]


def first_request_reminders(folder: Path, prompt: str) -> list[str]:
    script = Script([[TextPart('ok')]])
    Agent(script.model(), capabilities=[Skills(directories=[folder], reminders=2)]).run_sync(prompt)
    return reminders_in(script.requests[0].messages)


def test_the_filler_here_is_not_the_benchmarks() -> None:
    lines = (REPO / 'benchmarks' / 'data' / 'chat_filler.txt').read_text(encoding='utf-8').splitlines()
    assert set(FILLER) & {line.strip() for line in lines} == set()


def test_the_score_alone_pointed_out_skills_for_this_filler(library_folder: Path) -> None:
    # What the rule is for: without it, most of these messages got a note in this library.
    library = SkillLibrary.build(options=LibraryOptions(directories=[library_folder]))
    fired = []
    for text in [*FILLER, *ISSUE_EXAMPLES]:
        prompt = prompt_to_remind([ModelRequest(parts=[UserPromptPart(text)])])
        assert prompt is not None
        if with_reminder(*prompt, library, [], 2, 0.6, evidence_words=0) is not None:
            fired.append(text)
    assert len(fired) >= len(FILLER) // 2
    assert set(ISSUE_EXAMPLES) <= set(fired)


@pytest.mark.parametrize('prompt', [*FILLER, *ISSUE_EXAMPLES])
def test_chat_filler_gets_no_reminder(library_folder: Path, prompt: str) -> None:
    assert first_request_reminders(library_folder, prompt) == []


@pytest.mark.parametrize(
    ('prompt', 'skill'),
    [
        ('Extract the tables from this PDF report', 'pdf'),
        ('帮我把这个 PDF 文件里的表格提取出来', 'pdf'),
        ('Add tracked changes and a comment to the Word document', 'docx'),
        ('take screenshots of the frontend pages with playwright', 'webapp-testing'),
    ],
)
def test_a_real_request_gets_a_reminder(library_folder: Path, prompt: str, skill: str) -> None:
    [note] = first_request_reminders(library_folder, prompt)
    assert note.splitlines()[2].startswith(f'- {skill}: ')


def test_filler_after_a_request_adds_nothing_and_the_first_note_stays_as_it_was(library_folder: Path) -> None:
    capability = Skills(directories=[library_folder], reminders=2)
    first = Script([[TextPart('done')]])
    history = Agent(first.model(), capabilities=[capability]).run_sync('Extract the tables from this PDF report')
    second = Script([[TextPart('ok')]])
    Agent(second.model(), capabilities=[capability]).run_sync(
        'thanks, looks good!', message_history=history.all_messages()
    )
    [request] = second.requests
    assert request.messages[: len(first.requests[0].messages)] == first.requests[0].messages
    assert len(reminders_in(request.messages)) == 1  # the request's note, repeated; none for "thanks"


def test_a_request_is_reminded_once_even_when_it_is_sent_again(library_folder: Path) -> None:
    capability = Skills(directories=[library_folder], reminders=2)
    first = Script([[TextPart('done')]])
    result = Agent(first.model(), capabilities=[capability]).run_sync('Extract the tables from this PDF report')
    reminded_request = result.all_messages()[:1]  # the request as sent, its note included
    again = Script([[TextPart('done')]])
    Agent(again.model(), capabilities=[capability]).run_sync(None, message_history=reminded_request)
    assert len(reminders_in(again.requests[0].messages)) == 1


def test_a_prompt_quoting_the_tag_is_still_reminded(library_folder: Path) -> None:
    prompt = 'Extract the tables from this PDF report; it mentions <skill-reminder> in a footnote'
    assert len(first_request_reminders(library_folder, prompt)) == 1


@pytest.mark.parametrize(
    ('text', 'terms', 'words'),
    [
        ('release notes for 2.1', {'releas', 'note', '2', '1'}, 4),
        ('release release release', {'releas'}, 1),  # one word, however often
        ('代码审查', {'代码', '码审', '审查'}, 2),  # code review: three overlapping pairs, two words
        ('감사합니다', {'감사', '사합', '합니', '니다'}, 2),  # thank you: one word, counted as half its characters
        ('没问题，继续吧', {'问题', '继续'}, 2),
        ('ok, do it 👍', {'ok'}, 1),
    ],
)
def test_words_are_counted_once_and_cjk_pairs_only_where_they_do_not_overlap(
    text: str, terms: set[str], words: int
) -> None:
    assert shared_words(word_terms(text), terms) == words


def test_the_rule_asks_for_three_words() -> None:
    # README's "Reminders" section says three; a change is a change of the documented rule.
    assert EVIDENCE_WORDS == 3
