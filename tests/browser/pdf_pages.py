"""A printed PDF read as a person reads the paper: each page drawn as an image by pdf.js in
Chromium (the pixels checked: where the ink is, whether any reaches the page's edges) and its
text as pdf.js extracts it (what is printed, in order).

pdf.js (pdfjs-dist) is pinned in artifacts.json (npm) and fetched by the build's cache, like
axe-core (tests/browser/engines/axe.py); it is never part of a site. It runs in a page of its own
at a made-up origin (http://pdf.test/), whose requests Playwright answers from the cache: the
PDF's bytes are handed to it, never loaded from the site under test.
"""
import base64
import functools
import os
import re
import pinned

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ORIGIN = "http://pdf.test/"
PAGE = b"<!doctype html><meta charset=utf-8><title>pdf pages</title><body></body>"
TYPES = {".mjs": "text/javascript", ".html": "text/html; charset=utf-8"}

# Each page drawn at `scale` device px per PDF point on a white canvas: its size in points, the
# box of its ink (pixels darker than near-white, as fractions of the page), how many inked
# pixels lie within `band` points of each edge, its text items in reading order (pdf.js's
# order, which is the order they were painted in), and, if `images`, the page as a PNG.
READ = """async ([b64, scale, band, images]) => {
    const pdfjs = await import('/pdf.min.mjs');
    pdfjs.GlobalWorkerOptions.workerSrc = '/pdf.worker.min.mjs';
    const data = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const doc = await pdfjs.getDocument({ data, isEvalSupported: false }).promise;
    const pages = [];
    for (let n = 1; n <= doc.numPages; n++) {
        const page = await doc.getPage(n);
        const view = page.getViewport({ scale });
        const canvas = document.createElement('canvas');
        canvas.width = Math.ceil(view.width); canvas.height = Math.ceil(view.height);
        const ctx = canvas.getContext('2d');
        ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, canvas.width, canvas.height);
        await page.render({ canvasContext: ctx, canvas, viewport: view }).promise;
        const { width: w, height: h } = canvas;
        const px = ctx.getImageData(0, 0, w, h).data;
        const edge = Math.round(band * scale);
        let x0 = w, y0 = h, x1 = -1, y1 = -1, inked = 0;
        const near = { left: 0, right: 0, top: 0, bottom: 0 };
        for (let y = 0; y < h; y++) {
            for (let x = 0; x < w; x++) {
                const i = 4 * (y * w + x);
                if (px[i] + px[i + 1] + px[i + 2] > 3 * 235) continue;
                inked++;
                if (x < x0) x0 = x; if (x > x1) x1 = x; if (y < y0) y0 = y; if (y > y1) y1 = y;
                if (x < edge) near.left++; if (x >= w - edge) near.right++;
                if (y < edge) near.top++; if (y >= h - edge) near.bottom++;
            }
        }
        const content = await page.getTextContent();
        const texts = content.items.filter((t) => t.str && t.str.trim())
            .map((t) => ({ text: t.str, x: t.transform[4], w: t.width, y: view.viewBox[3] - t.transform[5],
                           size: Math.hypot(t.transform[2], t.transform[3]) }));
        const [, , pw, ph] = page.view;
        pages.push({ width: pw, height: ph, inked: inked / (w * h), near,
                     ink: x1 < 0 ? null : [x0 / w, y0 / h, (x1 + 1) / w, (y1 + 1) / h],
                     texts, png: images ? canvas.toDataURL('image/png') : null });
    }
    return pages;
}"""


@functools.lru_cache(maxsize=1)
def pdfjs_files():
    """{name: bytes} of pdf.js's two modules, from the build's cache (or VIT_HEAD_MIRROR)."""
    folder = pinned.unpacked("pdfjs-dist")
    files = {}
    for name in ("pdf.min.mjs", "pdf.worker.min.mjs"):
        with open(os.path.join(folder, name), "rb") as f:
            files[name] = f.read()
    return files


class PdfReader:
    """pdf.js in a page of its own, in a Playwright browser (Chromium)."""

    def __init__(self, browser):
        self.context = browser.new_context()
        self.page = self.context.new_page()
        files = pdfjs_files()

        def answer(route):
            name = route.request.url[len(ORIGIN):].split("?")[0] or "index.html"
            if name == "index.html":
                return route.fulfill(status=200, body=PAGE, content_type=TYPES[".html"])
            if name in files:
                return route.fulfill(status=200, body=files[name], content_type=TYPES[".mjs"])
            return route.fulfill(status=404, body=b"")

        self.context.route(ORIGIN + "**", answer)
        self.page.goto(ORIGIN + "index.html")

    def pages(self, pdf, scale=1.0, band=6, images=False):
        """Each page of the PDF `pdf` (bytes), read (READ)."""
        return self.page.evaluate(READ, [base64.b64encode(pdf).decode("ascii"), scale, band, images])

    def close(self):
        self.context.close()


def save_images(pages, stem):
    """Write each page's PNG (read with images=True) as `stem`-N.png; their paths."""
    paths = []
    for n, page in enumerate(pages, 1):
        path = "%s-%d.png" % (stem, n)
        with open(path, "wb") as f:
            f.write(base64.b64decode(page["png"].split(",", 1)[1]))
        paths.append(path)
    return paths


# The titles the worked example prints, top to bottom (index.html's h1 and h2s).
PIPELINE_TITLES = ["The ViT classification head, computed live", "Take the CLS token", "LayerNorm, per sample",
                   "Multiply by W_head", "Logits"]

# Paper in PDF points (1/72 in), portrait, and the page's own margin (css/embed-print.css: @page).
PAPER_PT = {"A4": (595.28, 841.89), "Letter": (612.0, 792.0)}
MM = 72 / 25.4
MARGIN_PT = 12 * MM


def squeeze(text):
    """Text without its white space: pdf.js splits words at ligatures ("classi", "fi", ...)."""
    return re.sub(r"\s+", "", text)


def places(pages, text):
    """Where `text` is printed: [(page index, y in pt from the page's top)], in page order."""
    want, found = squeeze(text), []
    for n, page in enumerate(pages):
        joined, starts = "", []
        for item in page["texts"]:
            starts.append(len(joined))
            joined += squeeze(item["text"])
        at = joined.find(want)
        while at >= 0:
            item = max(i for i, s in enumerate(starts) if s <= at)
            found.append((n, page["texts"][item]["y"]))
            at = joined.find(want, at + 1)
    return sorted(found)


def handout_problems(pages, paper, titles, title_px, most_pages=14):
    """What is wrong with a handout printed on `paper`, read (PdfReader.pages): the paper's size,
    a sensible number of pages, ink or text in the right and left margins (something ran off
    its column or the page), `titles` each printed, top to bottom in this order, the first of
    them the first text of page 1 (nothing drawn over the page's title) and printed at its size
    on screen, `title_px` CSS px (0.75 pt each): a browser that shrinks the page to fit what
    runs past its edge (Chromium does) prints it smaller."""
    problems = []
    width, height = PAPER_PT[paper]
    if not 1 <= len(pages) <= most_pages:
        problems.append("%d pages" % len(pages))
    # the page's margin, less 1 mm for anti-aliased edges
    inner = (MARGIN_PT - MM) / width
    for n, page in enumerate(pages, 1):
        if abs(page["width"] - width) > 1 or abs(page["height"] - height) > 1:
            problems.append("page %d is %.0f x %.0f pt, not %s" % (n, page["width"], page["height"], paper))
        if page["ink"] and (page["ink"][0] < inner or page["ink"][2] > 1 - inner):
            problems.append("page %d: ink in the side margins, %.3f to %.3f of its width"
                            % (n, page["ink"][0], page["ink"][2]))
        for item in page["texts"]:
            if item["x"] + item["w"] > width - MARGIN_PT + MM or item["x"] < MARGIN_PT - MM:
                problems.append("page %d: %r printed at x %.0f to %.0f pt, past the margins"
                                % (n, item["text"], item["x"], item["x"] + item["w"]))
    at, before = (-1, -1.0), "the top"
    for title in titles:
        # at the same height or lower (the stages stand two side by side)
        later = [p for p in places(pages, title) if p[0] > at[0] or (p[0] == at[0] and p[1] > at[1] - 2)]
        if not later:
            problems.append("%r is not printed below %r (page %d)" % (title, before, at[0] + 1))
            continue
        at, before = later[0], title
    if pages and titles:
        first = squeeze("".join(item["text"] for item in sorted(pages[0]["texts"], key=lambda t: t["y"])))
        if not first.startswith(squeeze(titles[0])):
            problems.append("page 1 does not begin with %r: %r" % (titles[0], first[:80]))
        top = min(pages[0]["texts"], key=lambda t: t["y"])
        if abs(top["size"] - 0.75 * title_px) > 0.3:
            problems.append("the title printed at %.1f pt, not %.1f: the page was shrunk to fit"
                            % (top["size"], 0.75 * title_px))
    return problems


# The page laid out for paper without printing (for WebKit, whose driver cannot print): the
# page's beforeprint handlers run, then its print rules apply (each @media print rule made to
# match everywhere), and what is wrong is said: a figure (Plotly's layers, the page's canvas of
# cells) past its stage or panel, the body wider than the paper's 180 mm column, the
# walk-through laid over the page, the page's title covered; then the rules and afterprint back.
PRINT_LAYOUT = """() => {
    const rules = [];
    const find = (list) => { for (const r of list) {
        if (r.type === CSSRule.MEDIA_RULE && r.media.mediaText.trim() === 'print') rules.push(r);
    } };
    for (const sheet of document.styleSheets) { try { find(sheet.cssRules); } catch (e) { /* another origin */ } }
    window.scrollTo(0, 0);
    dispatchEvent(new Event('beforeprint'));
    for (const r of rules) r.media.mediaText = 'all';
    const problems = [];
    const shown = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
    const body = document.body.getBoundingClientRect();
    const mm = 96 / 25.4;
    if (body.width > 180 * mm + 1) problems.push('body ' + body.width.toFixed(0) + ' px wide');
    for (const fig of document.querySelectorAll('.js-plotly-plot')) {
        const box = fig.closest('.stage, .panel');
        if (!box || !shown(fig) || !shown(box)) continue;
        const edge = box.getBoundingClientRect();
        for (const part of [...fig.querySelectorAll('.main-svg'), ...fig.parentElement.querySelectorAll('canvas.heatmap-bitmap')]) {
            const r = part.getBoundingClientRect();
            if (r.width && (r.right > edge.right + 1 || r.left < edge.left - 1)) {
                problems.push(fig.id + ' ' + part.tagName + ' ' + r.left.toFixed(0) + '..' + r.right.toFixed(0) +
                              ' past its box ' + edge.left.toFixed(0) + '..' + edge.right.toFixed(0));
            }
        }
    }
    for (const box of document.querySelectorAll('.stage, .panel')) {
        const r = box.getBoundingClientRect();
        if (shown(box) && r.right > body.right + 1) problems.push(box.id + ' ends at ' + r.right.toFixed(0));
    }
    const walk = document.getElementById('walk');
    if (shown(walk) && getComputedStyle(walk).position !== 'static') problems.push('walk-through ' + getComputedStyle(walk).position);
    const h1 = document.querySelector('h1').getBoundingClientRect();
    const top = document.elementFromPoint(h1.left + 10, h1.top + h1.height / 2);
    if (!top || !top.closest('h1')) problems.push('the title is covered by ' + (top ? top.outerHTML.slice(0, 80) : 'nothing'));
    for (const r of rules) r.media.mediaText = 'print';
    dispatchEvent(new Event('afterprint'));
    return [...new Set(problems)];
}"""

# After printing: no figure still drawn for paper (each as wide as its element again). The
# figures made ahead out of sight are neither printed nor drawn for paper (js/figure/print.js).
BACK_ON_SCREEN = """() => !document.documentElement.classList.contains('printing') &&
    Array.from(document.querySelectorAll('.js-plotly-plot'))
        .filter((el) => el._fullLayout && el.offsetParent && el.clientWidth
                        && getComputedStyle(el).visibility !== 'hidden')
        .every((el) => Math.abs(el._fullLayout.width - el.clientWidth) < 1)"""
