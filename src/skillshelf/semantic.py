"""Hybrid search's embedding model: `load_encoder` runs the pinned model from a folder of its files, for machines
that cannot download it; `Encoder` is the contract of your own.

The default model needs the `semantic` extra (`pip install 'skillshelf[semantic]'`); an encoder of your own needs
nothing.
"""

from .ranking.semantic import MODEL_FILES, MODEL_ID, MODEL_REVISION, Encoder, SemanticUnavailableError, load_encoder

__all__ = ('MODEL_FILES', 'MODEL_ID', 'MODEL_REVISION', 'Encoder', 'SemanticUnavailableError', 'load_encoder')
