"""The page skeleton (ui/steps.py), through a page drawn by it: what its options do to where a
step's controls go."""

from tests.app.conftest import open_page

ROPE = "pages/11_rope.py"  # its seed group is `beside` the base group


def _columns(root, key: str) -> list | None:
    """The columns around the widget ``key`` under ``root``, outermost first, each as
    ``(its row, the column)``; None if it is not there."""

    def find(node, chain: tuple) -> tuple | None:
        for child in node.children.values():
            if isinstance(getattr(child, "children", None), dict):
                found = find(child, (*chain, child))
                if found is not None:
                    return found
            elif getattr(child, "key", None) == key:
                return chain
        return None

    chain = find(root, (root,))
    if chain is None:
        return None
    return [(chain[i - 1], b) for i, b in enumerate(chain) if type(b).__name__ == "Column"]


def test_a_group_beside_another_shares_its_row_on_a_slide():
    at = open_page(ROPE, lang="en", step="1", present="1")
    (_, chart_column), (row, left) = _columns(at.main, "_choice_base")
    (_, same_column), (seed_row, right) = _columns(at.main, "seed")
    assert same_column is chart_column  # below the chart, in its column
    assert seed_row is row and left is not right  # one row: the base left, the seed right
    assert list(row.children.values()) == [left, right]


def test_a_group_listed_without_its_neighbour_takes_the_whole_place():
    at = open_page(ROPE, lang="en", step="3", present="1")  # the base alone, the seed hidden
    assert len(_columns(at.main, "_choice_base")) == 1  # just the slide's chart column


def test_students_find_the_two_groups_one_below_the_other_in_the_sidebar():
    at = open_page(ROPE, lang="en", step="1")
    assert _columns(at.sidebar, "_choice_base") == []
    assert _columns(at.sidebar, "seed") == []
