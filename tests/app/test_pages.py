"""ui.pages: the page registry."""

from ui.pages import PAGES, page_info


def test_page_urls_follow_file_names() -> None:
    assert page_info("home").url_path == "/"
    assert page_info("softmax").url_path == "/softmax"
    assert len({p.url_path for p in PAGES}) == len(PAGES)
