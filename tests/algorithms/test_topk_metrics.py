"""Tie-aware quality measures of an estimated top-k set, against hand cases and brute-force eligible sets."""

from itertools import combinations

import numpy as np
import pytest

from sklearn_shapq.algorithms import binary_precision, inclusion_exclusion_error, ratio_precision


@pytest.mark.parametrize(
    ("top_k", "ratio", "error"),
    [
        ([0, 1], 1.0, 0.0),
        ([0, 2], 1.0, 0.0),
        ([2, 0], 1.0, 0.0),
        ([1, 2], 0.5, 1.0),
        ([0, 3], 0.5, 1.0),
        ([1, 3], 0.5, 1.0),
        ([2, 3], 0.5, 1.0),
        ([3, 1], 0.5, 1.0),
    ],
)
def test_metrics_hand_cases_with_ties(top_k, ratio, error):
    phi = [3.0, 2.0, 2.0, 1.0]  # k = 2: {0, 1} and {0, 2} are both eligible
    assert ratio_precision(phi, top_k)[0] == ratio
    assert binary_precision(phi, top_k)[0] == float(ratio == 1.0)
    assert inclusion_exclusion_error(phi, top_k)[0] == error


def test_metrics_more_hand_cases():
    phi = [5.0, 4.0, 4.0, 4.0, 0.0]
    np.testing.assert_array_equal(ratio_precision(phi, [[0, 3], [1, 2], [2, 4], [0, 4]]), [1.0, 0.5, 0.5, 0.5])
    np.testing.assert_array_equal(binary_precision(phi, [[0, 3], [1, 2], [2, 4], [0, 4]]), [1.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(inclusion_exclusion_error(phi, [[0, 3], [1, 2], [2, 4], [0, 4]]), [0, 1, 4, 4])
    # k = 3 inside a tie of three: any two of them with player 0
    np.testing.assert_array_equal(ratio_precision(phi, [[3, 0, 1], [1, 2, 3], [4, 1, 2]]), [1.0, 2 / 3, 2 / 3])
    # k = d: only the full set, trivially right
    assert ratio_precision(phi, [[4, 3, 2, 1, 0]])[0] == 1.0
    assert inclusion_exclusion_error(phi, [[4, 3, 2, 1, 0]])[0] == 0.0
    # per-row φ (n, d) with per-row sets
    rows = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])
    np.testing.assert_array_equal(binary_precision(rows, [[2], [0]]), [1.0, 1.0])
    np.testing.assert_array_equal(inclusion_exclusion_error(rows, [[0], [0]]), [2.0, 0.0])


def test_metrics_validation():
    with pytest.raises(ValueError, match="repeated"):
        ratio_precision([1.0, 2.0, 3.0], [1, 1])
    with pytest.raises(ValueError, match="between 1 and d"):
        binary_precision([1.0, 2.0], [0, 1, 1])
    with pytest.raises(ValueError, match="between 1 and d"):
        inclusion_exclusion_error([1.0, 2.0], np.zeros((1, 0), int))
    with pytest.raises(ValueError, match="lie in"):
        ratio_precision([1.0, 2.0, 3.0], [0, 3])
    with pytest.raises(ValueError, match="lie in"):
        inclusion_exclusion_error([1.0, 2.0, 3.0], [-1])


@pytest.mark.parametrize("seed", range(4))
def test_metrics_against_brute_force_eligible_sets(seed):
    """ε = 0 iff eligible iff binary precision 1; ratio = max over eligible K of |K̂ ∩ K| / k."""
    rng = np.random.default_rng(seed)
    d = 6
    phi = rng.integers(0, 4, d).astype(float)  # many ties
    for k in range(1, d + 1):
        sets = [list(c) for c in combinations(range(d), k)]
        sums = np.array([phi[s].sum() for s in sets])
        eligible = [set(s) for s, total in zip(sets, sums, strict=True) if total == sums.max()]
        kth = np.sort(phi)[::-1][k - 1]
        ratio, binary, error = (
            ratio_precision(phi, sets),
            binary_precision(phi, sets),
            inclusion_exclusion_error(phi, sets),
        )
        for r, s in enumerate(sets):
            is_eligible = set(s) in eligible
            assert binary[r] == float(is_eligible)
            assert (error[r] == 0.0) == is_eligible
            assert ratio[r] == pytest.approx(max(len(set(s) & e) for e in eligible) / k)
            outside = [j for j in range(d) if j not in s]
            expected = max([kth - phi[i] for i in s] + [phi[j] - kth for j in outside] + [0.0])
            assert error[r] == expected
