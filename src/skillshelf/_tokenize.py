"""Turning skill text and queries into search terms, in any language.

* Latin, Cyrillic and other space-separated scripts: lower-cased words, English stop words dropped,
  English words stemmed with the Snowball stemmer (PyStemmer), so "triggers" finds "trigger".
* Identifiers are split: `pdf-form_filler.v2` and `FormFiller` both give their words.
* Chinese, Japanese and Korean runs (written without spaces between words) become overlapping
  character pairs ("代码审查" → "代码", "码审", "审查"), the standard dictionary-free way to index CJK text:
  any word of two or more characters in a query then meets the same pair in a skill's text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from itertools import chain
from typing import Any, cast

import Stemmer

__all__ = ('split_identifier', 'tokenize')

_CJK = (
    '\u3040-\u30ff'  # Hiragana, Katakana
    '\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff'  # CJK ideographs
    '\u1100-\u11ff\u3130-\u318f\uac00-\ud7af'  # Hangul
)
_CJK_RUN = re.compile(f'[{_CJK}]+')
_IS_CJK = re.compile(f'[{_CJK}]')
_WORD = re.compile(r'[^\W_]+', re.UNICODE)
_CAMEL = re.compile(r'(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])')
_STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her here
    hers herself him himself his how i if in into is it its itself just let lets me more most my myself no nor not
    now of off on once only or other our ours ourselves out over own please same she should so some such than that
    the their theirs them themselves then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours yourself yourselves""".split()
)


def _english_stemmer() -> Callable[[str], str]:
    stemmer = cast(Any, Stemmer.Stemmer('english'))  # pyright: ignore[reportUnknownMemberType] (PyStemmer: no types)
    return cast('Callable[[str], str]', stemmer.stemWord)


_stem_word = _english_stemmer()


def split_identifier(name: str) -> str:
    """Words of an identifier: `pdf-form_filler.v2` → `pdf form filler v2`, `FormFiller` → `Form Filler`."""
    return _CAMEL.sub(' ', re.sub(r'[-_./:#]+', ' ', name))


def tokenize(text: str) -> list[str]:
    """Search terms of `text`, in order, repeats kept."""
    words = _WORD.findall(_CJK_RUN.sub(r' \g<0> ', unicodedata.normalize('NFKC', text).lower()))
    return list(chain.from_iterable(map(_TERMS.__getitem__, words)))


class _TermCache(dict[str, tuple[str, ...]]):
    """Word → its terms, filled on first sight; lookups of known words stay in C."""

    def __missing__(self, word: str) -> tuple[str, ...]:
        if _IS_CJK.match(word):
            terms = tuple(_cjk_terms(word))
        elif word in _STOPWORDS:
            terms = ()
        else:
            terms = (_stem_word(word) if word.isascii() else word,)
        if len(self) < _CACHE_LIMIT:
            self[word] = terms
        return terms


_CACHE_LIMIT = 500_000
_TERMS = _TermCache()


def _cjk_terms(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]
