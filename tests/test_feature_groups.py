"""Feature groups: players from named or indexed columns, their order, and the errors."""

import numpy as np
import pytest

from sklearn_shapq._feature_groups import resolve_feature_groups

COLUMNS = ["age", "colour_red", "colour_blue", "income", "city"]


def test_no_groups_makes_every_column_a_player():
    groups = resolve_feature_groups(None, COLUMNS)
    assert groups.names == COLUMNS
    np.testing.assert_array_equal(groups.player_of_column, np.arange(5))


def test_a_group_takes_the_place_of_its_first_column_by_name_or_index():
    groups = resolve_feature_groups({"colour": ["colour_blue", 1], "place": ["city"]}, COLUMNS)
    assert groups.names == ["age", "colour", "income", "place"]
    np.testing.assert_array_equal(groups.player_of_column, [0, 1, 1, 2, 3])
    assert [m.tolist() for m in groups.members] == [[0], [1, 2], [3], [4]]
    masks = np.array([[True, False, True, False], [False, True, False, False]])
    np.testing.assert_array_equal(
        groups.column_masks(masks), [[True, False, False, True, False], [False, True, True, False, False]]
    )


def test_negative_indices_count_from_the_end():
    names = resolve_feature_groups({"last two": [-2, -1]}, COLUMNS).names
    assert names == ["age", "colour_red", "colour_blue", "last two"]


@pytest.mark.parametrize(
    ("feature_groups", "error", "match"),
    [
        ({"g": ["height"]}, ValueError, "'height', which is not a column"),
        ({"g": [5]}, ValueError, "column index 5, but there are 5 columns"),
        ({"g": ["age", "age"]}, ValueError, "'age' appears twice in that group"),
        ({"g": ["age"], "h": [0, 3]}, ValueError, "in groups 'g' and 'h'"),
        ({"g": []}, ValueError, "is empty"),
        ({"g": "age"}, TypeError, "must be a list of column names or indices"),
        ({"g": [True]}, ValueError, "True, which is not a column"),
        ({"city": ["age", "income"]}, ValueError, "also names of columns outside the group"),
    ],
)
def test_bad_groups_are_refused_with_the_reason(feature_groups, error, match):
    with pytest.raises(error, match=match):
        resolve_feature_groups(feature_groups, COLUMNS)


def test_a_group_may_keep_the_name_of_its_only_column():
    assert resolve_feature_groups({"city": ["city"]}, COLUMNS).names == COLUMNS


def test_player_data_keeps_lone_columns_and_gives_groups_nan():
    groups = resolve_feature_groups({"colour": ["colour_red", "colour_blue"]}, COLUMNS)
    X = np.arange(10.0).reshape(2, 5)
    np.testing.assert_array_equal(groups.player_data(X), [[0.0, np.nan, 3.0, 4.0], [5.0, np.nan, 8.0, 9.0]])
    np.testing.assert_array_equal(resolve_feature_groups(None, COLUMNS).player_data(X), X)
