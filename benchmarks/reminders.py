"""Reminders: how often a reminder names a right skill, and how often one fires on chat filler, with the score alone
(before the evidence rule) and with the evidence rule (`skillshelf.capability.reminders.has_evidence`).

    python benchmarks/reminders.py --data ../shared/bench

Each library is written as `SKILL.md` folders and read by `SkillLibrary.build`; every message goes through what a
run does with a new prompt (`prompt_to_remind`, then `with_reminder` with `Skills(reminders=2)` and the default
threshold). Measured on the 298-skill trigger library, the pooled 2,651-skill library and, since a score relative to
the best the query could reach misleads most in a small library, on 20-skill libraries drawn from the 298:

* *recall*: share of the trigger dev queries whose reminder names a relevant skill (in a drawn library, the queries
  with a relevant skill in it); *precision*: share of the reminders given that name one;
* *filler*: messages of `benchmarks/data/chat_filler.txt` (greetings, thanks, agreement, short follow-ups, several
  languages, emoji) that get a reminder; in the drawn libraries, (message, library) pairs;
* *longer chat*: the same for `benchmarks/data/chat_longer.txt`, chat of a clause or two, where several ordinary
  words can meet in one skill;
* *negatives*: share of the near-miss negative queries whose reminder names the skill they are not for.

The two real libraries are measured again with hybrid search (the `[semantic]` extra's model, offline, as
`semantic.py` ranks), since the rule holds whatever ranks; the skills' embeddings are kept under
`~/.cache/skillshelf-bench/reminders` between runs (the first run embeds them: some minutes on two cores). The rules
take turns on each query, so *ms p50* (the median time of a new prompt's reminder) compares them under the same
load.
Writes `benchmarks/results/reminders.json` and regenerates `benchmarks/README.md` and the figures the docs quote.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import report
from _datasets import Dataset, Negative, Query, trigger_sets
from _embedding import BENCH_CACHE, fixture_encoder
from _folders import write_skill_folders
from _results import machine, write_json
from _tables import reminders_table
from pydantic_ai.messages import ModelRequest, UserPromptPart

from skillshelf import LibraryOptions, SkillLibrary
from skillshelf.capability.reminders import EVIDENCE_WORDS, ReminderOptions, prompt_to_remind, with_reminder
from skillshelf.ranking.ranker import SearchOptions

FILLER = Path(__file__).parent / 'data' / 'chat_filler.txt'
LONGER = Path(__file__).parent / 'data' / 'chat_longer.txt'
COUNT = 2
"""Skills a reminder may point out, as README's example (`Skills(reminders=2)`)."""
RULES = {'before': 0, 'after': EVIDENCE_WORDS}
"""Each rule by the words of evidence it asks for: none (the score alone) and the shipped rule."""
SMALL_SIZE, SMALL_DRAWS = 20, 15


def read_filler(path: Path = FILLER) -> list[str]:
    """The messages of a filler file: one per line; blank lines and lines starting with `#` are left out."""
    lines = path.read_text(encoding='utf-8').splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith('#')]


def folder_library(
    dataset: Dataset, directory: Path, search: SearchOptions | None = None
) -> tuple[SkillLibrary, dict[str, int]]:
    """`dataset`'s skills as a folder library searched as `search` says (default: lexical), its search index built,
    and each skill's position by name."""
    names = write_skill_folders(dataset.docs, directory)
    library = SkillLibrary.build(options=LibraryOptions(directories=[directory]), search=search)
    library.prepare_search()
    return library, {name: position for position, name in enumerate(names)}


def reminded(library: SkillLibrary, text: str, evidence_words: int) -> list[str]:
    """The skills a run's reminder points out for the user prompt `text`, best first."""
    prompt = prompt_to_remind([ModelRequest(parts=[UserPromptPart(text)])])
    if prompt is None:
        return []
    request, query = prompt
    threshold = ReminderOptions().reminder_threshold
    reminder = with_reminder(request, query, library, [], COUNT, threshold, evidence_words)
    return [] if reminder is None else reminder.skills


def measure(
    dataset: Dataset,
    filler: Sequence[str],
    longer: Sequence[str],
    directory: Path,
    search: SearchOptions | None = None,
) -> dict[str, Any]:
    """Each rule's figures on one library."""
    library, position = folder_library(dataset, directory, search)
    row: dict[str, Any] = {
        'dataset': dataset.name,
        'search': library.search_mode,
        'skills': len(dataset.docs),
        'queries': len(dataset.queries),
        'negatives': len(dataset.negatives),
    }
    answers: dict[str, list[set[int]]] = {rule: [] for rule in RULES}
    timings: dict[str, list[float]] = {rule: [] for rule in RULES}
    for query in dataset.queries:  # the rules take turns, so a busy moment of the machine slows both alike
        for rule, words in RULES.items():
            started = time.perf_counter()
            answers[rule].append({position[name] for name in reminded(library, query.text, words)})
            timings[rule].append(time.perf_counter() - started)
    for rule, words in RULES.items():
        right = [bool(answer & query.relevant) for answer, query in zip(answers[rule], dataset.queries, strict=True)]
        fired = [answer for answer in answers[rule] if answer]
        on_filler = {text: skills for text in filler if (skills := reminded(library, text, words))}
        on_longer = {text: skills for text in longer if (skills := reminded(library, text, words))}
        negatives = [{position[name] for name in reminded(library, n.text, words)} for n in dataset.negatives]
        wrong = [bool(answer & n.not_relevant) for answer, n in zip(negatives, dataset.negatives, strict=True)]
        row[rule] = {
            'recall': sum(right) / len(right),
            'precision': sum(right) / len(fired) if fired else float('nan'),
            'reminded': len(fired) / len(right),
            'filler_reminded': len(on_filler),
            'filler_examples': on_filler,
            'longer_reminded': len(on_longer),
            'longer_examples': on_longer,
            'negatives_false': sum(wrong) / len(wrong) if wrong else float('nan'),
            'negatives_reminded': sum(map(bool, negatives)) / len(negatives) if negatives else float('nan'),
            'ms_p50': 1000 * statistics.median(timings[rule]),
        }
    return row


def drawn(dataset: Dataset, size: int, seed: int) -> Dataset:
    """`size` skills of `dataset` drawn at random, with the queries and negatives about them."""
    chosen = sorted(random.Random(seed).sample(range(len(dataset.docs)), size))
    new = {old: new for new, old in enumerate(chosen)}

    def kept(positions: frozenset[int]) -> frozenset[int]:
        return frozenset(new[p] for p in positions if p in new)

    queries = [Query(q.text, kept(q.relevant), q.source, q.lang) for q in dataset.queries if kept(q.relevant)]
    negatives = [Negative(n.text, kept(n.not_relevant), n.source) for n in dataset.negatives if kept(n.not_relevant)]
    title = f'{size} skills drawn from the {len(dataset.docs)}'
    return Dataset(f'{dataset.name}_{size}_{seed}', title, [dataset.docs[p] for p in chosen], queries, negatives)


def small_libraries(dataset: Dataset, filler: Sequence[str], longer: Sequence[str], directory: Path) -> dict[str, Any]:
    """Each rule's figures over `SMALL_DRAWS` libraries of `SMALL_SIZE` skills, pooled over the draws' queries."""
    rows = [
        measure(drawn(dataset, SMALL_SIZE, seed), filler, longer, directory / str(seed)) for seed in range(SMALL_DRAWS)
    ]
    pooled: dict[str, Any] = {
        'dataset': f'{dataset.name}_{SMALL_SIZE}',
        'search': rows[0]['search'],
        'skills': SMALL_SIZE,
        'draws': SMALL_DRAWS,
        'queries': sum(row['queries'] for row in rows),
        'negatives': sum(row['negatives'] for row in rows),
    }
    for rule in RULES:

        def total(key: str, per: str, rule: str = rule) -> float:
            """A share pooled over the draws: each draw's share weighted by its number of `per`."""
            weights = [row[per] * (row[rule]['reminded'] if key == 'precision' else 1) for row in rows]
            shares = [row[rule][key] for row in rows]
            kept = [(w, s) for w, s in zip(weights, shares, strict=True) if w and s == s]
            return sum(w * s for w, s in kept) / sum(w for w, _ in kept)

        examples: dict[str, list[str]] = {}
        longer_examples: dict[str, list[str]] = {}
        for row in rows:
            for text, skills in row[rule]['filler_examples'].items():
                examples.setdefault(text, []).extend(skills)
            for text, skills in row[rule]['longer_examples'].items():
                longer_examples.setdefault(text, []).extend(skills)
        pooled[rule] = {
            'recall': total('recall', 'queries'),
            'precision': total('precision', 'queries'),
            'reminded': total('reminded', 'queries'),
            'filler_reminded': sum(row[rule]['filler_reminded'] for row in rows),
            'filler_messages_reminded': len(examples),
            'filler_examples': examples,
            'longer_reminded': sum(row[rule]['longer_reminded'] for row in rows),
            'longer_messages_reminded': len(longer_examples),
            'longer_examples': longer_examples,
            'negatives_false': total('negatives_false', 'negatives'),
            'negatives_reminded': total('negatives_reminded', 'negatives'),
            'ms_p50': statistics.median(row[rule]['ms_p50'] for row in rows),
        }
    return pooled


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data', type=Path, required=True)
    parser.add_argument('--no-readme', action='store_true')
    args = parser.parse_args()
    filler, longer = read_filler(), read_filler(LONGER)
    trigger, pooled = trigger_sets(args.data)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as temporary:
        os.environ['SKILLSHELF_CACHE_DIR'] = str(Path(temporary) / 'cache')  # no index cache outlives the run
        for dataset in (trigger, pooled):
            rows.append(measure(dataset, filler, longer, Path(temporary) / dataset.name))
            print(reminders_table(rows[-1:]), flush=True)
        rows.append(small_libraries(trigger, filler, longer, Path(temporary) / 'small'))
        print(reminders_table(rows[-1:]), flush=True)
    encoder, kept = fixture_encoder(), BENCH_CACHE / 'reminders'
    os.environ['SKILLSHELF_CACHE_DIR'] = str(kept / 'cache')  # the skills' embeddings, kept by text and folder
    for dataset in (trigger, pooled):
        shutil.rmtree(kept / dataset.name, ignore_errors=True)
        search = SearchOptions(search='hybrid', encoder=encoder)
        rows.append(measure(dataset, filler, longer, kept / dataset.name, search))
        print(reminders_table(rows[-1:]), flush=True)
    payload = {
        'machine': machine(),
        'count': COUNT,
        'threshold': ReminderOptions().reminder_threshold,
        'evidence_words': EVIDENCE_WORDS,
        'filler_messages': len(filler),
        'longer_messages': len(longer),
        'rows': rows,
    }
    path = write_json('reminders', payload)
    print(reminders_table(rows))
    print(f'wrote {path}')
    if not args.no_readme:
        report.regenerate()


if __name__ == '__main__':
    main()
