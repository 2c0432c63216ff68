"""TableCodec: every column kind codes and decodes back to the same DataFrame; levels and keys."""

import numpy as np
import pandas as pd
import pytest

from sklearn_shapq.games import TableCodec
from sklearn_shapq.samplers import row_keys


def every_kind():
    return pd.DataFrame(
        {
            "object": pd.Series(["x", None, "y", "x"], dtype=object),
            "str": pd.Series(["a", "b", None, "a"], dtype="str"),
            "string": pd.Series(["p", None, "q", "q"], dtype="string"),
            "category": pd.Categorical(["lo", "hi", None, "lo"], categories=["lo", "mid", "hi"], ordered=True),
            "bool": [True, False, True, True],
            "int": np.array([1, 2, 3, 4], dtype=np.int32),
            "Int64": pd.array([1, None, 3, 4], dtype="Int64"),
            "boolean": pd.array([True, None, False, True], dtype="boolean"),
            "float": [0.5, np.nan, 1.5, 2.5],
        }
    )


def test_every_kind_round_trips_with_its_dtype():
    frame = every_kind()
    codec, codes = TableCodec.from_frame(frame)
    assert codes.dtype == np.float64 and codes.shape == frame.shape
    assert (codes[[1, 2, 1], [0, 1, 2]] < 0).all()  # a missing string: a kind of missing value of its own
    assert np.isnan(codes[[2, 1, 1, 1], [3, 6, 7, 8]]).all()  # missing numbers and categories: NaN
    pd.testing.assert_frame_equal(codec.decode(codes), frame)
    pd.testing.assert_frame_equal(codec.decode(codes[[3, 0]]), frame.iloc[[3, 0]].reset_index(drop=True))


def test_cells_swapped_between_rows_decode_to_the_swapped_cells():
    frame = every_kind()
    codec, codes = TableCodec.from_frame(frame)
    mixed = np.where([True, False] * 4 + [True], codes[0], codes[2])
    decoded = codec.decode(mixed[None, :])
    for j, column in enumerate(frame.columns):
        source = frame.iloc[0 if j % 2 == 0 else 2][column]
        assert (pd.isna(source) and pd.isna(decoded[column][0])) or decoded[column][0] == source


def test_new_levels_extend_a_copy_and_keep_old_codes():
    codec, codes = TableCodec.from_frame(every_kind())
    later = every_kind().iloc[:2].copy()
    later.loc[0, "object"] = "new"
    extended, later_codes = codec.encode(later)
    assert extended is not codec and codec.levels[0].tolist() == ["x", "y"]
    assert extended.levels[0].tolist() == ["x", "y", "new"]
    assert later_codes[0, 0] == 2.0
    pd.testing.assert_frame_equal(extended.decode(codes), every_kind())  # old codes decode as before
    same, _ = codec.encode(every_kind())
    assert same is codec  # nothing new: the codec itself


def test_keys_do_not_depend_on_the_order_levels_were_seen_in():
    frame = pd.DataFrame({"colour": ["red", "blue", "green"], "size": [1.0, 2.0, 3.0]})
    forward, forward_codes = TableCodec.from_frame(frame)
    backward, backward_codes = TableCodec.from_frame(frame.iloc[::-1].reset_index(drop=True))
    assert forward_codes[0, 0] != backward_codes[2, 0]  # "red" has another code ...
    keys = row_keys(1, forward.key_rows(forward_codes))
    np.testing.assert_array_equal(keys, row_keys(1, backward.key_rows(backward_codes))[::-1])  # ... the same key


def test_cells_are_the_values_as_objects():
    frame = every_kind()
    codec, codes = TableCodec.from_frame(frame)
    cells = codec.cells(codes)
    assert cells.dtype == object and cells[0, 0] == "x" and cells[0, 3] == "lo" and cells[1, 5] == 2
    assert cells[1, 0] == str(frame.iloc[1, 0])  # a missing string is shown as its text: labels stay strings
    assert pd.isna(cells[1, 6])  # a missing number stays NaN


def test_a_string_column_with_missing_cells_displays_as_strings_only():
    """shap's scatter labels a column by name only if its cells are strings (NaN first gave numeric ticks)."""
    frame = pd.DataFrame({"c": pd.Series(["a", None, np.nan, pd.NA, "b"], dtype=object)})
    codec, codes = TableCodec.from_frame(frame)
    assert codec.cells(codes)[:, 0].tolist() == ["a", "None", "nan", "<NA>", "b"]


def test_category_columns_are_recoded_to_the_fitted_categories():
    fitted = pd.CategoricalDtype(["lo", "mid", "hi"])
    codec, _ = TableCodec.from_frame(pd.DataFrame({"c": pd.Categorical(["lo"], dtype=fitted), "n": [2.0]}))
    for column in (
        pd.Categorical(["hi", None]),  # another categorical dtype
        pd.Categorical(["hi", None], categories=["hi", "lo", "mid"]),  # the same categories, another order
        pd.Series(["hi", None], dtype=object),  # strings for a hand-built row
    ):
        _, codes = codec.encode(pd.DataFrame({"c": column, "n": [1.0, 1.0]}))
        assert codes[0, 0] == 2.0 and np.isnan(codes[1, 0])
        assert codec.decode(codes)["c"].dtype == fitted


def test_values_outside_the_fitted_categories_or_strings_for_numbers_are_refused():
    fitted = pd.CategoricalDtype(["lo", "mid", "hi"])
    codec, _ = TableCodec.from_frame(pd.DataFrame({"c": pd.Categorical(["lo"], dtype=fitted), "n": [2.0]}))
    with pytest.raises(ValueError, match=r"Column 'c' of X has values \['phd'\] .* \['lo', 'mid', 'hi'\]"):
        codec.encode(pd.DataFrame({"c": pd.Categorical(["phd"]), "n": [1.0]}))
    with pytest.raises(TypeError, match="fitted with numbers"):
        codec.encode(pd.DataFrame({"c": pd.Categorical(["lo"], dtype=fitted), "n": ["one"]}))


def test_dates_and_durations_are_levels_that_round_trip_with_their_dtypes():
    frame = pd.DataFrame(
        {
            "when": pd.to_datetime(["2024-01-01", None, "2024-02-01"]),
            "zoned": pd.to_datetime(["2024-01-01", "2024-01-01", None]).tz_localize("UTC"),
            "took": pd.to_timedelta([1, None, 3], unit="D"),
            "n": [1.0, 2.0, 3.0],
        }
    )
    codec, codes = TableCodec.from_frame(frame)
    assert codes[1, 0] < 0 and codes[0, 1] == codes[1, 1]  # NaT: a kind of missing value; equal times: one level
    pd.testing.assert_frame_equal(codec.decode(codes[[2, 1, 0]]), frame.iloc[[2, 1, 0]].reset_index(drop=True))


def test_complex_numbers_are_refused_naming_the_column():
    with pytest.raises(TypeError, match="Column 'z' has dtype complex128"):
        TableCodec.from_frame(pd.DataFrame({"z": [1j], "n": [1.0]}))


def test_none_and_nan_stay_apart():
    frame = pd.DataFrame({"c": pd.Series(["a", None, np.nan, "b"], dtype=object)})
    codec, codes = TableCodec.from_frame(frame)
    decoded = codec.decode(codes[[1, 2]])["c"].tolist()
    assert decoded[0] is None and isinstance(decoded[1], float) and np.isnan(decoded[1])
    later, later_codes = codec.encode(pd.DataFrame({"c": pd.Series([pd.NA, None], dtype=object)}))
    assert later.decode(later_codes)["c"].tolist()[0] is pd.NA and later.decode(later_codes)["c"].tolist()[1] is None
    keys = row_keys(0, later.key_rows(np.concatenate([codes, later_codes])))
    assert keys[1] == keys[5] and len(set(keys.tolist())) == 5  # None twice: one key; NaN, pd.NA, a, b apart


def test_an_int_column_with_nan_or_fractions_at_explain_is_refused_not_cast():
    codec, _ = TableCodec.from_frame(pd.DataFrame({"s": ["a", "b"], "age": np.array([30, 40])}))
    for age in ([np.nan, 41.0], [30.5, 41.0]):
        with pytest.raises(ValueError, match="Column 'age' of X has missing or fractional values"):
            codec.encode(pd.DataFrame({"s": ["a", "b"], "age": age}))
    _, codes = codec.encode(pd.DataFrame({"s": ["a", "b"], "age": [31.0, 42.0]}))  # whole floats: fine
    assert codec.decode(codes)["age"].tolist() == [31, 42]
