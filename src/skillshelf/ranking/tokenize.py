"""Turning skill text and queries into search terms, in any language.

* Latin, Cyrillic and other space-separated scripts: lower-cased words, English stop words dropped,
  English words stemmed with the Snowball stemmer (PyStemmer), so "triggers" finds "trigger".
* Identifiers are split: `pdf-form_filler.v2` and `FormFiller` both give their words.
* English contractions and possessives give no term of their own: `what's` is `what`, `user’s` is `user`,
  and a negated auxiliary (`don't`, `isn’t`), a stop word plus "not", gives none.
* Chinese, Japanese and Korean runs (written without spaces between words) become overlapping
  character pairs ("代码审查" → "代码", "码审", "审查"), the standard dictionary-free way to index CJK text:
  any word of two or more characters in a query then meets the same pair in a skill's text.

Splitting is the hot loop of an index build, so it runs on bytes first: a table splits at ASCII punctuation
(except the apostrophe) and lower-cases ASCII in one C-level pass, and only the pieces holding other characters
or an apostrophe go through the Unicode regexes (NFKC, lower case, contractions, letters and digits of any
script), once per distinct piece.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from itertools import chain, islice
from typing import Any, cast

import Stemmer

__all__ = (
    'decode_piece',
    'piece_buffer',
    'piece_bytes',
    'piece_terms',
    'pieces',
    'split_identifier',
    'terms_of_pieces',
    'tokenize',
    'word_terms',
)

_CJK = (
    '\u3040-\u30ff'  # Hiragana, Katakana
    '\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff'  # CJK ideographs
    '\u1100-\u11ff\u3130-\u318f\uac00-\ud7af'  # Hangul
)
_CJK_RUN = re.compile(f'([{_CJK}]+)')
_IS_CJK = re.compile(f'[{_CJK}]')
_CJK_ONLY = re.compile(f'[{_CJK}]+')
_WORD = re.compile(r'[^\W_]+', re.UNICODE)
_CONTRACTION = re.compile(r"(?<=[^\W_])['’](?:s|re|ve|ll|d|m)(?![^\W_])|[^\W_]*n['’]t(?![^\W_])")
"""In lower-cased text: an English contraction's or possessive's ending (`'s`, `'re`, `'ve`, `'ll`, `'d`, `'m`,
with a straight or curly apostrophe), or a whole word ending in `n't`: without this, `what's` gave the term `s`,
which matched any skill mentioning a possessive."""
_SEPARATORS = re.compile(r'[-_./:#]+')
_CAMEL = re.compile(r'(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])')
_STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her here
    hers herself him himself his how i if in into is it its itself just let lets me more most my myself no nor not
    now of off on once only or other our ours ourselves out over own please same she should so some such than that
    the their theirs them themselves then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours yourself yourselves""".split()
)


# No cache inside PyStemmer (`_TERMS` is larger): purging a full one made stemming several times slower.
_stemmer = cast(Any, Stemmer.Stemmer('english', 0))  # pyright: ignore[reportUnknownMemberType] (PyStemmer: no types)
_stem_word = cast('Callable[[str], str]', _stemmer.stemWord)
_stem_words = cast('Callable[[list[str]], list[str]]', _stemmer.stemWords)


def split_identifier(name: str) -> str:
    """Words of an identifier: `pdf-form_filler.v2` → `pdf form filler v2`, `FormFiller` → `Form Filler`."""
    words = _SEPARATORS.sub(' ', name)
    return words if words.islower() else _CAMEL.sub(' ', words)  # skill names are lower-case: no camel humps


def tokenize(text: str) -> list[str]:
    """Search terms of `text`, in order, repeats kept."""
    return list(chain.from_iterable(map(piece_terms, pieces(text))))


def word_terms(text: str) -> list[tuple[str, ...]]:
    """The terms of `text` word by word, in order (`tokenize` is them all in one list): one term for a word of a
    spaced script, and for a run of CJK characters its character pairs, each overlapping the next by a character.
    Stop words give no entry.

    A run's pairs are not words: "代码审查" (code review) gives three, "감사합니다" (thank you) four. Who counts the
    words of a text counts only pairs that do not overlap (see `reminders`).
    """
    words: list[tuple[str, ...]] = []
    for piece in pieces(text):
        if _is_plain_word(piece) or piece in _STOPWORDS:
            words.append(piece_terms(piece))
            continue
        for word in _piece_words(piece):
            runs = filter(None, _CJK_RUN.split(word)) if _IS_CJK.search(word) else (word,)
            words.extend(tuple(_run_terms(run)) for run in runs)
    return [terms for terms in words if terms]


def pieces(text: str) -> list[str]:
    """`text` split at whitespace and ASCII punctuation, ASCII lower-cased: one pass of C-level byte operations.

    An ASCII piece is a finished word; `piece_terms` splits a piece with other characters further.
    """
    return piece_buffer(text).decode('utf-8', 'surrogatepass').split()


def piece_bytes(text: str) -> list[bytes]:
    """`pieces`, still UTF-8 encoded (see `decode_piece`), for the index: it numbers millions of pieces and so
    decodes only the distinct ones, a tenth faster.

    Blank space other than ASCII (a no-break space) does not split here; the piece's terms are the same, since
    `piece_terms` splits a piece with other characters at any character that is not a letter or digit.
    """
    return piece_buffer(text).split()


def decode_piece(piece: bytes) -> str:
    """A piece from `piece_bytes` as text."""
    return piece.decode('utf-8', 'surrogatepass')


def piece_buffer(text: str) -> bytes:
    """`text` as UTF-8 with ASCII lower-cased and every ASCII character but letters, digits and the apostrophe a
    space: its pieces (see `piece_bytes`) are its runs of bytes other than the space."""
    return text.encode('utf-8', 'surrogatepass').translate(_ASCII_WORDS)


def _piece_words(piece: str) -> list[str]:
    """The words of a piece holding non-ASCII characters or an apostrophe: normalised (NFKC, so full-width `Ｐ` is
    `p`), lower-cased, without contraction endings, and split at any non-alphanumeric character of any script."""
    if not piece.isascii():
        piece = unicodedata.normalize('NFKC', piece).lower()
    if "'" in piece or '’' in piece:  # in every match: the search is slow on long runs of letters (CJK text)
        piece = _CONTRACTION.sub(' ', piece)
    return _WORD.findall(piece)


_ASCII_WORDS = bytes(
    byte if byte >= 0x80 or byte == ord("'") else ord(chr(byte).lower()) if chr(byte).isalnum() else ord(' ')
    for byte in range(256)
)
"""Byte table: ASCII letters lower-cased, digits and apostrophes kept, other ASCII bytes become spaces, UTF-8
sequences untouched."""


def terms_of_pieces(pieces: Sequence[str]) -> list[tuple[str, ...]]:
    """`piece_terms` of each of `pieces`; new English words are stemmed in one batch, several times faster."""
    unseen = [piece for piece in dict.fromkeys(pieces) if piece not in _TERMS and _is_plain_word(piece)]
    room = max(_CACHE_LIMIT - len(_TERMS), 0)
    # Filled in bulk (one C call); words past a full cache are stemmed one by one as `piece_terms` meets them.
    _TERMS.update(islice(zip(unseen, zip(_stem_words(unseen)), strict=True), room))
    return list(map(piece_terms, pieces))


class _TermCache(dict[str, tuple[str, ...]]):
    """Piece → its terms, filled on first sight; lookups of known pieces stay in C."""

    def __missing__(self, piece: str) -> tuple[str, ...]:
        if piece in _STOPWORDS:
            terms = ()
        elif _is_plain_word(piece):
            terms = (_stem_word(piece),)
        elif _is_cjk_word(piece):
            terms = tuple(_cjk_terms(piece))
        elif piece.isascii() and (word := piece.strip("'")).isalnum():
            terms = piece_terms(word)  # a quoted word ('style', cases'): no contraction, the word's terms
        else:
            terms = tuple(chain.from_iterable(map(_word_terms, _piece_words(piece))))
        if len(self) < _CACHE_LIMIT:
            self[piece] = terms
        return terms


_CACHE_LIMIT = 500_000
_TERMS = _TermCache()

piece_terms: Callable[[str], tuple[str, ...]] = _TERMS.__getitem__
"""The search terms of one piece from `pieces` (none for a stop word, several for a CJK run)."""


def _is_plain_word(piece: str) -> bool:
    """Whether a piece is one ASCII word (no apostrophe) that is not a stop word: its one term is its stem."""
    return piece.isascii() and "'" not in piece and piece not in _STOPWORDS


def _is_cjk_word(piece: str) -> bool:
    """Whether a piece is one run of CJK letters, already normalised: its terms are its character pairs (the general
    path would find that through NFKC, lower case and three regexes; this is a third of the cost)."""
    return _CJK_ONLY.fullmatch(piece) is not None and piece.isalnum() and unicodedata.is_normalized('NFKC', piece)


def _word_terms(word: str) -> Iterable[str]:
    """The terms of one word of a non-ASCII piece."""
    if word.isascii():
        return piece_terms(word)
    if _IS_CJK.search(word):
        # CJK is written without spaces, so one word can mix scripts ("pdf文件"): split at script changes.
        return chain.from_iterable(map(_run_terms, filter(None, _CJK_RUN.split(word))))
    return (word,)


def _run_terms(run: str) -> Iterable[str]:
    return _cjk_terms(run) if _IS_CJK.match(run) else _word_terms(run)


def _cjk_terms(run: str) -> list[str]:
    """A run of CJK characters as overlapping character pairs; a lone character stays a term of its own."""
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]
