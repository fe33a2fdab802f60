"""What a figure saved for slides holds (web/js/figure/export.js), read as a slide tool reads it:
a PNG's size from its IHDR and what it shows (decoded by the browser), an SVG's title, texts by
their role, and colour key."""
import base64
import struct
import xml.etree.ElementTree as ET

SVG_NS = "{http://www.w3.org/2000/svg}"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_chunks(data):
    assert data[:8] == PNG_SIGNATURE, data[:8]
    at = 8
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        yield kind.decode("ascii"), data[at + 8:at + 8 + length]
        at += 12 + length


def png_size(data):
    """(width, height) from the PNG's IHDR, its first chunk."""
    kind, body = next(png_chunks(data))
    assert kind == "IHDR", kind
    return struct.unpack(">II", body[:8])


# What a PNG shows, decoded by the browser (createImageBitmap of the file's bytes: nothing is
# loaded from a URL, so the page's Content-Security-Policy does not apply): its size, the colour
# of its corner (the paper), and how much of it is not that paper.
PNG_LOOKS = """async (b64) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const bitmap = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
    const canvas = document.createElement('canvas');
    canvas.width = bitmap.width; canvas.height = bitmap.height;
    const ctx = canvas.getContext('2d');
    ctx.drawImage(bitmap, 0, 0);
    const px = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    const corner = Array.from(px.slice(0, 4));
    const colours = new Set();
    let inked = 0;
    for (let i = 0; i < px.length; i += 4) {
        if (Math.abs(px[i] - corner[0]) + Math.abs(px[i + 1] - corner[1]) + Math.abs(px[i + 2] - corner[2]) > 30) inked++;
        if (i % 64 === 0) colours.add((px[i] << 16) | (px[i + 1] << 8) | px[i + 2]);
    }
    return { width: canvas.width, height: canvas.height, corner, inked: inked / (px.length / 4),
             colours: colours.size };
}"""


def luminance(rgb):
    """WCAG's relative luminance of an sRGB colour (0..255 a channel)."""
    lin = [(v / 255) / 12.92 if v / 255 <= 0.04045 else ((v / 255 + 0.055) / 1.055) ** 2.4 for v in rgb[:3]]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def svg_figure(text):
    """An SVG figure's parts: {width, height, title, texts: {role: [text, ...]}, background,
    outlines (how many), images (how many <image>s), gradients, bars (a bar chart's bars), tracks (their tracks)}."""
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == SVG_NS + "svg", root.tag
    texts = {}
    for el in root.iter(SVG_NS + "text"):
        texts.setdefault(el.get("class") or "", []).append(el.text or "")
    background = next(el for el in root.iter(SVG_NS + "rect") if el.get("class") == "background")
    outlines = [g for g in root.iter(SVG_NS + "g") if g.get("class") == "outlines"]
    return {
        "width": float(root.get("width")), "height": float(root.get("height")),
        "title": root.find(SVG_NS + "title").text, "texts": texts,
        "background": background.get("fill"),
        "outlines": sum(len(g.findall(SVG_NS + "rect")) for g in outlines),
        "images": len(list(root.iter(SVG_NS + "image"))),
        "gradients": len(list(root.iter(SVG_NS + "linearGradient"))),
        "bars": sum(1 for el in root.iter(SVG_NS + "rect") if el.get("class") == "bar"),
        "tracks": sum(1 for el in root.iter(SVG_NS + "rect") if el.get("class") == "bar-track"),
    }


def png_looks(engine_or_page, data):
    """PNG_LOOKS of the PNG `data` (bytes), in the page of a Playwright page or an engine."""
    return engine_or_page.evaluate(PNG_LOOKS, base64.b64encode(data).decode("ascii"))


def save_figure(page, figure, fmt, keys=False):
    """Save `figure` (an element id) in `fmt` ("png", "projector", "svg") through its "Download
    figure" menu, by mouse or by keys, in a Playwright page; returns (file name, bytes)."""
    button = page.locator("#%s-download" % figure)
    with page.expect_download() as info:
        if keys:
            button.focus()
            page.keyboard.press("Enter")
            for _ in range(["png", "projector", "svg"].index(fmt)):
                page.keyboard.press("ArrowDown")
            page.keyboard.press("Enter")
        else:
            button.click()
            page.locator("#%s-download-menu [data-format=%s]" % (figure, fmt)).click()
    saved = info.value
    with open(saved.path(), "rb") as f:
        return saved.suggested_filename, f.read()


def made_ms(page, figure):
    """How long the last figure saved from `figure`'s menu took to make, in ms (its data-made)."""
    text = page.get_attribute("#%s-download >> xpath=.." % figure, "data-made")
    return int(text.rsplit(" ", 2)[-2])


# The longest task the page runs from now on (window.__longest, in ms).
WATCH_LONG_TASKS = """() => { window.__longest = 0;
    new PerformanceObserver((list) => { for (const e of list.getEntries())
        window.__longest = Math.max(window.__longest, e.duration); }).observe({ type: 'longtask' }); }"""
