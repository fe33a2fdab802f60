"""docs/*.md as the site's HTML pages (docs/<name>.html; docs/README.md is docs/index.html).

A page a student opens from the explorer must read right from any static server: each page
declares UTF-8 itself (``python3 -m http.server`` sends .html without a charset), carries its
own Content-Security-Policy (no script at all; the site's css/docs.css for its styles), links
back to the explorer, and links to the other docs' pages.

The Markdown is the subset docs/ is written in, rendered here so that the build needs nothing
it did not need before: ATX headings (ids as GitHub makes them), paragraphs, bullet and ordered
lists whose items hold paragraphs and code, fenced code, indented code (the docs' formulas,
aligned plain text: shown as formula blocks, their columns kept), GFM tables, HTML comments
(left out), inline code, **strong**, *em*, [links](x.md), bare https:// URLs, and the docs'
mentions of one another (``docs/hosts.md, "The one file"``) made links, to the section when it
names one. Any other HTML is text, escaped: nothing in a doc reaches a page as markup. A link to
a file that is not a page of the site (``../README.md``) is shown as its text. A doc written with
TeX ($$) stops the build: there is no typesetter here to leave it raw for.
"""
import os
import re
from html import escape

from ..errors import BuildError

STYLESHEET = "../css/docs.css"  # web/css/docs.css, from the page's folder
POLICY = "default-src 'none'; style-src 'self'; img-src data:; base-uri 'none'; form-action 'none'"
INDEX = "README.md"  # the docs' own index: docs/index.html
TOC_MIN = 4  # a page with this many sections or more opens with their list
PAGE = """<!doctype html>
<html lang="en" class="doc-site">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{policy}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>{title} \u00b7 ViT head explorer</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="{css}">
</head>
<body>
<header class="doc-bar"><nav aria-label="The explorer and its docs">{bar}</nav></header>
<main class="doc">
{body}
</main>
</body>
</html>
"""

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)\s*$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
_ITEM = re.compile(r"^( {0,3})(?:[-*+]|(\d{1,9})[.)])(?: +|$)")
_DELIM = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_CODE = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.S)
_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\s]+)\)")
_MENTION = re.compile(r'(?<![\w/.-])docs/([\w-]+\.md)(?:(,\s+)"([^"]{1,80})")?')
_URL = re.compile(r"https?://[^\s<>\"\x00]+")


def page_name(md):
    """The page a doc becomes.

    >>> page_name("math.md"), page_name("README.md")
    ('math.html', 'index.html')
    """
    return "index.html" if md == INDEX else md[:-len(".md")] + ".html"


def _plain(text):
    """A heading's words, without its inline markup."""
    text = _LINK.sub(r"\1", text).replace("`", "").replace("*", "")
    return re.sub(r"\s+", " ", text).strip()


def _slug(text, used):
    """GitHub's id for a heading: lower case, punctuation dropped, spaces as hyphens, a
    repeated one numbered."""
    base = re.sub(r"[^\w\- ]", "", _plain(text).lower()).replace(" ", "-")
    slug, n = base, 0
    while slug in used:
        n += 1
        slug = "%s-%d" % (base, n)
    used.add(slug)
    return slug


def _indent(line):
    return len(line) - len(line.lstrip(" "))


def _ends_paragraph(lines, j):
    """Whether lines[j] starts a block that ends the paragraph before it."""
    line, item = lines[j], _ITEM.match(lines[j])
    return bool(_HEADING.match(line) or _FENCE.match(line) or line.lstrip().startswith("<!--")
                or (item and item.group(2) in (None, "1"))
                or (line.lstrip().startswith("|") and j + 1 < len(lines)
                    and _DELIM.match(lines[j + 1])))


def _cells(row):
    """A table row's cells: split at each "|" that is not escaped nor inside code (GitHub splits
    there too, and cuts "`{input | W_head}`" in two)."""
    row = re.sub(r"^\||(?<!\\)\|$", "", row.strip())
    cells = [""]
    for part in re.split(r"(`+[^`]*?`+|\\\||\|)", row):
        if part == "|":
            cells.append("")
        else:
            cells[-1] += "|" if part == "\\|" else part
    return cells


def _spans(text):
    """**strong** and *em* in escaped text."""
    text = re.sub(r"\*\*(?=\S)(.+?)(?<=\S)\*\*", r"<strong>\1</strong>", text, flags=re.S)
    return re.sub(r"(?<![*\w])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![*\w])", r"<em>\1</em>", text,
                  flags=re.S)


def _pre(lines, attributes):
    """A code block, in a box that scrolls sideways (and takes the focus to) when it must."""
    return '<pre%s tabindex="0"><code%s>%s</code></pre>' % (
        attributes + (escape("\n".join(lines), quote=False),))


class _Doc(object):
    """One doc being rendered: its name, every doc's headings [(text, id)] by name (where links
    point), and its own headings as found: (level, id, text, HTML)."""

    def __init__(self, name, headings):
        self.name, self.headings, self.used, self.found = name, headings, set(), []

    def href(self, target, section=None):
        """The page (and section) a link or mention points to; None: not a page of the site."""
        doc = re.match(r"^(?:\./)?([\w-]+\.md)(#[\w-]+)?$", target)
        if doc and doc.group(1) in self.headings:
            found = [s for t, s in self.headings[doc.group(1)]  # "Limits", or "Limits: ..."
                     if section and re.match(re.escape(section) + r"(?!\w)", t, re.I)]
            return page_name(doc.group(1)) + (doc.group(2) or ("#" + found[0] if found else ""))
        return target if re.match(r"^(https?://|#)", target) else None

    def inline(self, text):
        """A paragraph's (or cell's, or heading's) text as HTML."""
        kept = []

        def keep(fragment, rest=""):
            kept.append(fragment)
            return "\x00%d\x00%s" % (len(kept) - 1, rest)

        def link(href, shown):
            return '<a href="%s">%s</a>' % (escape(href), shown) if href else shown

        def code(m):
            body = m.group(2).replace("\n", " ")
            body = body[1:-1] if body[:1] == body[-1:] == " " and body.strip() else body
            doc = re.match(r"^docs/([\w-]+\.md)$", body)
            # a long path may break after a slash (a table's column need not be as wide as it)
            return keep(link(doc and self.href(doc.group(1)), "<code>%s</code>" % escape(
                body, quote=False).replace("/", "/<wbr>")))

        def mention(m):
            href = self.href(m.group(1), m.group(3) and " ".join(m.group(3).split()))
            whole = bool(href) and ("#" in href or not m.group(3))
            if not href:
                return m.group(0)
            return keep(link(href, escape(m.group(0) if whole else "docs/" + m.group(1), False)),
                        "" if whole else m.group(0)[len("docs/" + m.group(1)):])

        def url(m):
            address = m.group(0)
            while address[-1] in ".,;:!?" or (address[-1] == ")" and
                                              address.count(")") > address.count("(")):
                address = address[:-1]
            return keep(link(address, escape(address)), m.group(0)[len(address):])

        text = _CODE.sub(code, text)
        text = _LINK.sub(lambda m: keep(link(self.href(m.group(2)), _spans(escape(
            m.group(1), False)))), text)
        text = _URL.sub(url, _MENTION.sub(mention, text))
        if "$$" in text:
            raise BuildError("docs/%s has TeX ($$), which buildtools/assembly/docs_html.py does "
                             "not typeset" % self.name,
                             "write the formula as the docs do: an indented block of plain text")
        text = _spans(escape(text, quote=False))
        while "\x00" in text:
            text = re.sub(r"\x00(\d+)\x00", lambda m: kept[int(m.group(1))], text)
        return text

    def blocks(self, lines, tight=False):
        """Block-level Markdown (a list of lines) as HTML; `tight`: a tight list item's
        paragraphs are not wrapped in <p>."""
        out, i, n = [], 0, len(lines)
        while i < n:
            line = lines[i]
            fence, heading = _FENCE.match(line), _HEADING.match(line)
            if not line.strip():
                i += 1
            elif line.lstrip().startswith("<!--"):
                while i < n and "-->" not in lines[i]:
                    i += 1
                i += 1
            elif fence:
                j = i + 1
                while j < n and lines[j].strip() != fence.group(1):
                    j += 1
                lang = fence.group(2) and ' class="language-%s"' % fence.group(2)
                out.append(_pre(lines[i + 1:j], ("", lang)))
                i = j + 1
            elif _indent(line) >= 4:  # the docs' formulas
                j = i
                while j < n and (_indent(lines[j]) >= 4 or not lines[j].strip()):
                    j += 1
                while not lines[j - 1].strip():
                    j -= 1
                out.append(_pre([l[4:] for l in lines[i:j]], (' class="formula"', "")))
                i = j
            elif heading:
                level, words = len(heading.group(1)), heading.group(2)
                slug = _slug(words, self.used)
                self.found.append((level, slug, _plain(words), self.inline(words)))
                out.append('<h{0} id="{1}">{3}</h{0}>'.format(*self.found[-1]))
                i += 1
            elif line.lstrip().startswith("|") and i + 1 < n and _DELIM.match(lines[i + 1]):
                j = i + 2
                while j < n and lines[j].lstrip().startswith("|"):
                    j += 1
                out.append(self.table(lines[i], lines[i + 1], lines[i + 2:j]))
                i = j
            elif _ITEM.match(line):
                html, i = self.list(lines, i)
                out.append(html)
            else:
                j = i + 1
                while j < n and lines[j].strip() and not _ends_paragraph(lines, j):
                    j += 1
                words = self.inline("\n".join(l.strip() for l in lines[i:j]))
                out.append(words if tight else "<p>%s</p>" % words)
                i = j
        return "\n".join(out)

    def list(self, lines, i):
        """The list that starts at line i: (its HTML, the line after it)."""
        first, n, items, loose = _ITEM.match(lines[i]), len(lines), [], False
        ordered = first.group(2) is not None
        while True:
            m = _ITEM.match(lines[i])
            width = len(m.group(0)) + (len(m.group(0)) == len(lines[i]))
            body, j = [lines[i][width:]], i + 1
            while j < n:
                if not lines[j].strip():  # the item goes on if its next line is indented
                    k = j
                    while k < n and not lines[k].strip():
                        k += 1
                    if k == n or _indent(lines[k]) < width:
                        break
                    body, loose, j = body + [""] * (k - j), True, k
                if _indent(lines[j]) >= width:
                    body.append(lines[j][width:])
                elif body[-1].strip() and not (_ITEM.match(lines[j]) or _ends_paragraph(lines, j)):
                    body.append(lines[j].strip())  # a paragraph's lazy continuation
                else:
                    break
                j += 1
            items.append(body)
            k = j
            while k < n and not lines[k].strip():
                k += 1
            m = _ITEM.match(lines[k]) if k < n else None
            if not m or (m.group(2) is not None) != ordered:
                break
            loose, i = loose or k > j, k
        tag, start = ("ol", int(first.group(2))) if ordered else ("ul", 1)
        return "<%s%s>%s</%s>" % (tag, ' start="%d"' % start if start != 1 else "", "".join(
            "<li>%s</li>" % self.blocks(body, tight=not loose) for body in items), tag), j

    def table(self, header, delim, rows):
        """A GFM table, in a box that scrolls sideways when it is wider than the page; its
        alignment by class (a style attribute would need the policy's leave)."""
        aligns = [(' class="al-c"' if c.startswith(":") else ' class="al-r"')
                  if c.endswith(":") else "" for c in (c.strip() for c in _cells(delim))]

        def row(text, tag):  # an empty header cell (a corner) is no header
            cells = _cells(text) + [""] * (len(aligns) - len(_cells(text)))
            return "<tr>%s</tr>" % "".join("<{0}{1}>{2}</{0}>".format(
                tag if c.strip() else "td", a, self.inline(c.strip()))
                for c, a in zip(cells, aligns))
        head = "<thead>%s</thead>" % row(header, "th") if "".join(_cells(header)).strip() else ""
        return '<div class="table-wrap" tabindex="0"><table>%s<tbody>%s</tbody></table></div>' % (
            head, "".join(row(r, "td") for r in rows))


def headings(markdown, name=""):
    """A doc's headings, [(text, id)], in order (where links to its sections point)."""
    doc = _Doc(name, {})
    doc.blocks(markdown.splitlines())
    return [(text, slug) for _, slug, text, _ in doc.found]


def render(name, markdown, all_headings):
    """The page of doc `name` (e.g. "math.md") whose text is `markdown`; `all_headings`:
    {doc name: headings(its text)} of every doc the site has pages for."""
    doc = _Doc(name, all_headings)
    body = doc.blocks(markdown.splitlines())
    sections = ["<li><a href=\"#%s\">%s</a></li>" % (slug, re.sub(r"</?a\b[^>]*>", "", words))
                for level, slug, _, words in doc.found if level == 2]
    if len(sections) >= TOC_MIN:
        body = body.replace("</h1>", '</h1>\n<nav class="doc-toc" aria-label="Sections"><details>'
                            "<summary>Sections of this page</summary><ol>%s</ol></details></nav>"
                            % "".join(sections), 1)
    title = [words for level, _, _, words in doc.found if level == 1][:1] or [escape(name)]
    bar = '<a class="doc-back" href="../index.html">\u2190 Back to the explorer</a>' + (
        '<a href="index.html">All the docs</a>' if name != INDEX else "")
    return PAGE.format(policy=POLICY, title=re.sub(r"<[^>]+>", "", title[0]), css=STYLESHEET,
                       bar=bar, body=body)


def write(root, site):
    """Every doc of root/docs/ as its page in site/docs/; returns the pages' paths in the site
    (["docs/index.html", "docs/math.html", ...]), none when the checkout has no docs."""
    folder = os.path.join(root, "docs")
    texts = {}
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if name.endswith(".md"):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                texts[name] = f.read()
    all_headings = {name: headings(text, name) for name, text in texts.items()}
    written = []
    for name, text in sorted(texts.items()):
        os.makedirs(os.path.join(site, "docs"), exist_ok=True)
        written.append("docs/" + page_name(name))
        with open(os.path.join(site, "docs", page_name(name)), "w", encoding="utf-8") as f:
            f.write(render(name, text, all_headings))
    return written
