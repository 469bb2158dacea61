"""The one "... and N more" of every message that names a few of many."""

from forensics.model import first_few


def test_first_few_names_the_first_and_counts_the_rest():
    assert first_few([], 3) == ""
    assert first_few(["a", "b", "c"], 3) == "a, b, c"
    assert first_few(["a", "b", "c", "d", "e"], 3) == "a, b, c and 2 more"
    assert first_few(["x, y", "z", "w"], 1, "; ") == "x, y; and 2 more"  # items that hold commas
    assert first_few(["x", "y"], 2, "; ") == "x; y"
