import pytest

from rag_lab.errors import ConfigError
from rag_lab.limits import MAX_BUDGET, MAX_TOP_K, check_budget, check_top_k


@pytest.mark.parametrize("value", [0, -1, MAX_TOP_K + 1, 10**9, True, 1.5, "5", None])
def test_top_k_outside_its_cap_is_a_config_error_naming_the_range(value: object) -> None:
    with pytest.raises(ConfigError, match=f"top_k must be a whole number from 1 to {MAX_TOP_K}"):
        check_top_k(value)


@pytest.mark.parametrize("value", [-1, MAX_BUDGET + 1, 10**9, False, 2.0, None])
def test_budget_outside_its_cap_is_a_config_error_naming_the_range(value: object) -> None:
    with pytest.raises(ConfigError, match=f"budget must be a whole number from 0 to {MAX_BUDGET}"):
        check_budget(value)


def test_values_at_the_caps_pass_unchanged() -> None:
    assert (check_top_k(1), check_top_k(MAX_TOP_K)) == (1, MAX_TOP_K)
    assert (check_budget(0), check_budget(MAX_BUDGET)) == (0, MAX_BUDGET)
