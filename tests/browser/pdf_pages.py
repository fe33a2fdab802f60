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
            .map((t) => ({ text: t.str, x: t.transform[4], y: view.viewBox[3] - t.transform[5] }));
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
    from buildtools import manifest
    from buildtools.cache import MIRROR_ENV, Cache, default_cache_dir
    art = manifest.load(os.path.join(ROOT, "artifacts.json")).artifact("pdfjs-dist")
    folder, _ = Cache(default_cache_dir(), log=lambda m: None,
                      mirror=os.environ.get(MIRROR_ENV) or None).unpacked(art)
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
