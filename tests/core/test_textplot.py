"""The Unicode-block heatmap used in text exports."""

import unicodedata

import numpy as np

from core import text_heatmap


def display_width(s):
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def test_hand_example_shades_relative_to_the_maximum():
    # levels = floor(w / 0.9 · 4): 0.3 -> 1 ░, 0.9 -> 4 █, 0.5 -> 2 ▒, 0.6 -> 2 ▒
    text = text_heatmap(np.array([[0.3, 0.9], [0.5, 0.6]]), ["a", "b"], numbers=False, legend=False)
    lines = text.split("\n")
    assert [line.split() for line in lines] == [["a", "b"], ["a", "░░", "██"], ["b", "▒▒", "▒▒"]]


def test_only_the_maximum_cell_is_full_block():
    w = np.random.default_rng(0).dirichlet(np.ones(5), size=5)
    labels = list("vwxyz")
    lines = text_heatmap(w, labels, numbers=False, legend=False).split("\n")
    i, j = np.unravel_index(np.argmax(w), w.shape)
    full = [r for r, line in enumerate(lines) if "██" in line]
    assert full == [i + 1]
    assert sum(line.count("█") for line in lines) == 2
    # ASCII labels: one column per character, so cell j spans a fixed slice
    cell = (len(lines[0]) - 1) // 5  # header: a 1-column label gutter, then 5 cells
    row = lines[i + 1]
    assert row[1 + j * cell : 1 + (j + 1) * cell].strip() == "██"


def test_labels_appear_in_the_header_and_row_starts():
    text = text_heatmap(np.eye(3), ["the", "cat", "sat"], ["k1", "k2", "k3"], legend=False)
    header, *rows = text.split("\n")
    assert header.split() == ["k1", "k2", "k3"]
    assert [r.split()[0] for r in rows] == ["the", "cat", "sat"]


def test_cjk_labels_keep_every_line_the_same_display_width():
    labels = ["我", "爱", "北京", "cat", "。"]
    w = np.random.default_rng(1).dirichlet(np.ones(5), size=5)
    lines = text_heatmap(w, labels, legend=False).split("\n")
    assert len(lines) == 6
    assert len({display_width(line) for line in lines}) == 1
    for label, line in zip(labels, lines[1:], strict=True):
        assert line.split()[0] == label


def test_all_zero_matrix_is_blank():
    text = text_heatmap(np.zeros((2, 2)), ["a", "b"], legend=False)
    assert not any(c in text for c in "░▒▓█")


def test_cells_carry_their_numbers_and_a_last_line_explains_the_shades():
    w = np.array([[0.25, 0.75], [1.0, -0.001]])
    *rows, legend = text_heatmap(w, ["a", "b"]).split("\n")[1:]
    assert rows[0].split() == ["a", "░░", "0.25", "▓▓", "0.75"]
    assert rows[1].split() == ["b", "██", "1.00", "0.00"], "no -0.00"
    assert legend.startswith("█ = max (1.00)") and "▓ >= 75%" in legend and "░ >= 25%" in legend


def test_values_that_are_not_finite_print_a_dash_and_stay_blank():
    lines = text_heatmap(np.array([[np.nan, 1.0]]), ["a"], legend=False).split("\n")
    assert lines[1].split() == ["a", "-", "██", "1.00"]
