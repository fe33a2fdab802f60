"""The docs' pages (buildtools/assembly/docs_html.py): every doc of docs/ rendered as the build renders
it, and read back with the standard library's HTML parser. Each page declares UTF-8 and its own
policy, has no script and no inline style, loses and adds no word of its doc, keeps its
formulas' alignment, gives every heading an id, and links only to pages and ids that exist."""
import doctest
import glob
import html
import os
import re
from collections import Counter
from html.parser import HTMLParser

import pytest

from buildtools.assembly import docs_html
from buildtools.onefile import page as onefile
from buildtools.errors import BuildError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))
LINKED = ("math.md", "training.md", "tiny-vit.md", "own-model.md")  # web/index.html's


def read(*parts):
    with open(os.path.join(*parts), encoding="utf-8") as f:
        return f.read()


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """{doc name: its page's HTML}, as the build writes them."""
    site = tmp_path_factory.mktemp("site")
    written = docs_html.write(ROOT, str(site))
    assert written == ["docs/" + docs_html.page_name(n) for n in DOCS]
    return {n: read(str(site), "docs", docs_html.page_name(n)) for n in DOCS}


class Page(HTMLParser):
    """A page's elements, ids, links and the text of its <main> (the table of sections and
    the code blocks apart)."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.tags, self.ids, self.hrefs, self.headings = [], [], [], []
        self.words, self.pre, self.stack = [], [], []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag not in ("meta", "link", "wbr", "br"):
            self.stack.append((tag, attrs))
        if "id" in attrs:
            self.ids.append(attrs["id"])
        if "href" in attrs and tag == "a":
            self.hrefs.append(attrs["href"])
        if re.fullmatch(r"h[1-6]", tag):
            self.headings.append([int(tag[1]), attrs.get("id"), ""])
        if tag == "pre":
            self.pre.append([attrs.get("class", ""), ""])

    def handle_endtag(self, tag):
        while self.stack and self.stack.pop()[0] != tag:
            pass

    def handle_data(self, data):
        inside = [t for t, _ in self.stack]
        if "main" not in inside or "nav" in inside:
            return
        if "pre" in inside:
            self.pre[-1][1] += data
        else:
            self.words.append(data)
        if any(re.fullmatch(r"h[1-6]", t) for t in inside):
            self.headings[-1][2] += data


def md_blocks(text):
    """A doc's fenced and indented code blocks' texts, and its text without them."""
    lines, blocks, rest, i = text.splitlines(), [], [], 0
    while i < len(lines):
        fence = re.match(r"^ {0,3}(```+)", lines[i])
        if fence:
            j = lines.index(fence.group(1), i + 1)
            blocks.append("\n".join(lines[i + 1:j]))
            i = j + 1
            continue
        rest.append(lines[i])
        i += 1
    return blocks, "\n".join(rest)


@pytest.mark.parametrize("name", DOCS)
def test_a_page_declares_utf8_and_a_policy_and_runs_no_script(pages, name):
    text = pages[name]
    # the first thing in <head>, well within the 1024 bytes a browser looks in for it
    assert text.index('<meta charset="utf-8">') < 100
    assert '<meta http-equiv="Content-Security-Policy" content="%s">' % docs_html.POLICY in text
    assert "default-src 'none'" in docs_html.POLICY and "script-src" not in docs_html.POLICY
    page = Page(text)
    assert not [t for t, _ in page.tags if t in ("script", "style", "iframe", "object", "img")]
    assert not [a for _, attrs in page.tags for a in attrs if a == "style" or a.startswith("on")]
    assert ("link", {"rel": "stylesheet", "href": "../css/docs.css"}) in page.tags
    assert os.path.isfile(os.path.join(ROOT, "web", "css", "docs.css"))
    assert page.hrefs[0] == "../index.html" and "Back to the explorer" in text


@pytest.mark.parametrize("name", DOCS)
def test_every_heading_has_its_id_and_the_title_is_the_docs_own(pages, name):
    md = read(ROOT, "docs", name)
    page = Page(pages[name])
    _, outside = md_blocks(md)
    expected = [(len(m.group(1)), docs_html._plain(m.group(2)))
                for m in re.finditer(r"^(#{1,6}) (.+)$", outside, re.M)]
    assert [(level, re.sub(r"\s+", " ", t).strip()) for level, _, t in page.headings] == expected
    ids = [i for _, i, _ in page.headings]
    assert all(ids) and len(set(page.ids)) == len(page.ids)
    assert re.search(r"<title>%s \u00b7" % re.escape(html.escape(expected[0][1], quote=False)),
                     pages[name])


@pytest.mark.parametrize("name", DOCS)
def test_the_page_has_every_word_of_its_doc_and_no_other(pages, name):
    """The words of <main> (its list of sections aside) are the doc's, in order: its Markdown
    syntax, comments and link targets left out, nothing lost, nothing doubled."""
    md = read(ROOT, "docs", name)
    blocks, outside = md_blocks(md)
    outside = re.sub(r"<!--.*?-->", "", outside, flags=re.S)
    outside = re.sub(r"\]\([^)\s]+\)", "]", outside)          # a link's target
    outside = re.sub(r"^ {4,}.*$", "", outside, flags=re.M)    # indented blocks: below
    outside = re.sub(r"^ {0,3}(#+|\d+\.|[-*]) ", " ", outside, flags=re.M)
    page = Page(pages[name])
    got = re.findall(r"\w+", " ".join(page.words))
    assert got == re.findall(r"\w+", outside)
    # and the code blocks: their lines exactly (fenced) or dedented by 4 (formulas)
    fenced = [text for cls, text in page.pre if cls != "formula"]
    assert fenced == blocks


@pytest.mark.parametrize("name", DOCS)
def test_its_characters_arrive_as_written(pages, name):
    """Every character outside ASCII (ε, γ, ≈, ×, ...) the doc holds, the page holds as text
    as many times: nothing written as an entity a renderer might mangle, nothing lost."""
    md = read(ROOT, "docs", name)
    text = pages[name].split('<main class="doc">', 1)[1]
    text = re.sub(r'<nav class="doc-toc".*?</nav>', "", text, flags=re.S)
    assert "&#" not in text
    count = lambda s: Counter(c for c in s if ord(c) > 127)
    assert count(html.unescape(re.sub(r"<[^>]+>", "", text))) == count(
        re.sub(r"<!--.*?-->", "", md, flags=re.S))


def test_the_formulas_keep_their_columns_and_no_tex_is_left():
    md = read(ROOT, "docs", "math.md")
    page = Page(docs_html.render("math.md", md, {"math.md": docs_html.headings(md)}))
    formulas = [text for cls, text in page.pre if cls == "formula"]
    assert len(formulas) == 4
    layer_norm = formulas[1].splitlines()
    assert layer_norm[0].startswith("mu    = mean(h_cls, axis=-1)") and len(layer_norm) == 3
    # the shapes line up, as in the doc
    assert len({line.index("(B, ") for line in layer_norm}) == 1
    for name in DOCS:
        assert "$$" not in read(ROOT, "docs", name)  # the docs write no TeX for a page to show raw
    with pytest.raises(BuildError, match=r"TeX \(\$\$\)"):
        docs_html.render("x.md", "# X\n\n$$ a^2 $$\n", {})


def test_links_go_to_pages_and_sections_that_exist(pages):
    ids = {docs_html.page_name(n): set(Page(t).ids) for n, t in pages.items()}
    for name, text in pages.items():
        page = Page(text)
        for href in page.hrefs:
            if href.startswith(("https://", "http://")) or href == "../index.html":
                continue
            target, _, anchor = href.partition("#")
            target = target or docs_html.page_name(name)
            assert target in ids, (name, href)
            assert not anchor or anchor in ids[target], (name, href)
    # the docs' index links to every other doc's page
    index = Page(pages["README.md"]).hrefs
    assert {docs_html.page_name(n) for n in DOCS if n != "README.md"} <= set(index)
    # a mention with a section goes to the section
    assert 'href="hosts.html#the-one-file-distvit-head-explorerhtml">docs/hosts.md, "The one ' \
        'file"</a>' in "".join(pages.values())


@pytest.mark.parametrize("name", LINKED)
def test_the_page_links_to_the_docs_pages(name):
    """web/index.html links to the pages the build writes (never to a .md or .txt), and the
    pages it links to say where to go back."""
    index = read(ROOT, "web", "index.html")
    assert 'href="docs/%s"' % docs_html.page_name(name) in index
    assert not re.search(r'href="docs/[^"]*\.(md|txt)"', index)


def test_mentions_and_links_of_the_markdown_subset():
    heads = {"a.md": [("One", "one"), ("Two: more", "two-more")], "b.md": [("B", "b")]}
    doc = docs_html._Doc("b.md", heads)
    assert doc.inline('see docs/a.md, "Two" and [it](a.md#one) and [r](../README.md)') == (
        'see <a href="a.html#two-more">docs/a.md, "Two"</a> and <a href="a.html#one">it</a> '
        'and r')
    assert doc.inline('docs/a.md, "Three"; docs/c.md') == \
        '<a href="a.html">docs/a.md</a>, "Three"; docs/c.md'
    assert doc.inline("`<b>` **x** *y* a * b (https://e.org/x_(y)).") == (
        "<code>&lt;b&gt;</code> <strong>x</strong> <em>y</em> a * b "
        '(<a href="https://e.org/x_(y)">https://e.org/x_(y)</a>).')
    assert doc.inline("`docs/a.md` z_L and W_head") == \
        '<a href="a.html"><code>docs/<wbr>a.md</code></a> z_L and W_head'
    body = doc.blocks("""- one
  two
- three

1. x

       code
2. y
| h | k |
| --- | ---: |
| 1 \\| 2 | 3 |
<!-- gone -->
""".splitlines())
    assert body == ("<ul><li>one\ntwo</li><li>three</li></ul>\n"
                    '<ol><li><p>x</p>\n<pre class="formula" tabindex="0"><code>code</code></pre>'
                    "</li><li><p>y</p></li></ol>\n"
                    '<div class="table-wrap" tabindex="0"><table><thead><tr><th>h</th>'
                    '<th class="al-r">k</th></tr></thead><tbody><tr><td>1 | 2</td>'
                    '<td class="al-r">3</td></tr></tbody></table></div>')


def test_a_checkout_without_docs_writes_no_pages(tmp_path):
    assert docs_html.write(str(tmp_path), str(tmp_path / "site")) == []


def test_the_one_files_links_open_the_docs_on_the_page():
    assert doctest.testmod(onefile, optionflags=doctest.ELLIPSIS).failed == 0
    assert doctest.testmod(docs_html).failed == 0
    html_ = onefile.doc_links(read(ROOT, "web", "index.html"))
    assert "docs/" not in " ".join(re.findall(r'href="([^"]*)"', html_))
    assert {m for m in re.findall(r'href="#doc=([\w-]+)', html_)} >= {
        docs_html.page_name(n)[:-len(".html")] for n in LINKED}
