"""Plain text out of HTML (factcheck.html): what search snippets, lead extracts and rendered pages become."""

from __future__ import annotations

from factcheck.html import has_tags, paragraphs_text, sectioned_text, strip_html


def test_strip_html_drops_tags_decodes_entities_and_keeps_what_only_looks_like_a_tag() -> None:
    assert strip_html('The <span class="searchmatch">Eiffel</span> &quot;Iron Lady&quot;') == 'The Eiffel "Iron Lady"'
    assert strip_html("330&nbsp;m<br>tall &amp; <b>old</b>") == "330 m tall & old"
    assert strip_html("<script>alert(1)</script>x < 5 and y<z") == "x < 5 and y<z"


def test_has_tags_tells_markup_from_a_comparison() -> None:
    assert has_tags("<p>Tall.</p>") and has_tags("a<br/>b") and has_tags("<!-- note -->")
    assert not has_tags("x < 5 and a <= b") and not has_tags("Tall.\nShort.")


def test_paragraphs_text_keeps_paragraphs_and_leaves_out_infoboxes_footnotes_and_edit_links() -> None:
    html = (
        '<div class="mw-parser-output"><table class="infobox"><tr><td><p>Height 330 m</p></td></tr></table>'
        '<p>The <b>Eiffel Tower</b> is a tower.<sup class="reference">[1]</sup></p>'
        '<span class="mw-editsection">[edit]</span><p style="display: none">Hidden.</p>'
        "<p>It is in\n <a href='/wiki/Paris'>Paris</a>.<br>Built 1889.</p><p> </p></div>"
    )
    assert paragraphs_text(html) == "The Eiffel Tower is a tower.\nIt is in Paris.Built 1889."


def test_sectioned_text_keeps_the_headings_of_either_markup_and_leaves_out_the_table_of_contents() -> None:
    html = (
        '<div class="mw-parser-output"><p>The lead.</p>'
        '<div id="toc" class="toc"><div class="toctitle"><h2 id="mw-toc-heading">Contents</h2></div>'
        '<ul><li><a href="#History"><span class="toctext">History</span></a></li></ul></div>'
        '<h2><span class="mw-headline" id="History">History</span><span class="mw-editsection">[edit]</span></h2>'
        "<p>Built in 1889.<sup>[1]</sup></p>"
        '<div class="mw-heading mw-heading3"><h3 id="Height">Height</h3></div><p>330&#160;m.</p>'
        "<h2> </h2><table><tr><th><h4>In a table</h4></th></tr></table></div>"
    )
    assert sectioned_text(html) == "The lead.\n== History ==\nBuilt in 1889.\n=== Height ===\n330 m."
    assert paragraphs_text(html) == "The lead.\nBuilt in 1889.\n330 m."  # no headings without asking
