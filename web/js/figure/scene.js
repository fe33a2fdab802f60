// A figure for a slide, as a scene: a list of plain shapes (rectangles, lines, paths, circles,
// texts, a gradient, a matrix's cells as an image, clipped groups) in the figure's own CSS px,
// which the page draws two ways: as SVG text (toSvg) and on a canvas (toPng). Both read the one
// scene, so the SVG and the PNGs of a figure show the same thing (js/figure/export.js makes the
// scenes; docs/figures.md, "Figures for slides").
//
// Why a scene of the page's own and not Plotly.toImage: the page paints each heatmap's cells, its
// numbers and its colour key itself (js/heatmap/bitmap.js, js/heatmap/draw.js), so Plotly's own image
// of a figure has its axes and title only; and Plotly rasterizes through an <img> of a blob:
// URL, which the page's Content-Security-Policy (img-src data:) refuses. Here nothing is loaded:
// the PNG is painted on a canvas directly, the SVG is text, and a big matrix's cells go into it
// as one PNG of one pixel per cell (a data: URL inside the file, never loaded by the page).
//
// Text is always placed at its alphabetic baseline (no dominant-baseline, which slide tools
// read differently), in the page's font stack; every text is an SVG <text>: selectable, UTF-8.
// The shapes (role: what the shape is in the figure, for the tests and the SVG's classes;
// crisp: edges on device pixels; the cells' canvas holds one pixel per cell, stretched, sharp):
/**
 * @typedef {{x: number, y: number, w: number, h: number}} Box
 * @typedef {{kind: "rect", x: number, y: number, w: number, h: number, fill?: string, stroke?: string, width?: number, crisp?: boolean, role?: string}} SceneRect
 * @typedef {{kind: "line", x1: number, y1: number, x2: number, y2: number, stroke: string, width: number, dash?: ?string, role?: string}} SceneLine
 * @typedef {{kind: "path", d: string, stroke?: string, width?: number, dash?: ?string, fill?: string, role?: string}} ScenePath
 * @typedef {{kind: "circle", cx: number, cy: number, r: number, fill: string, role?: string}} SceneCircle
 * @typedef {{kind: "text", x: number, y: number, text: string, size: number, fill: string, anchor?: "start"|"middle"|"end", weight?: number, rotate?: number, role?: string}} SceneText
 * @typedef {{kind: "gradient", x: number, y: number, w: number, h: number, stops: Array<[number, string]>, stroke?: string, width?: number, role?: string}} SceneGradient
 * @typedef {{kind: "cells", x: number, y: number, w: number, h: number, canvas: HTMLCanvasElement, role?: string}} SceneCells
 * @typedef {{kind: "group", clip?: Box, items: SceneItem[], crisp?: boolean, role?: string}} SceneGroup
 * @typedef {SceneRect|SceneLine|ScenePath|SceneCircle|SceneText|SceneGradient|SceneCells|SceneGroup} SceneItem
 */

export const FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";

let measurer = null;

/** The width of `text` at `size` px (and `weight`) in the figures' font, in CSS px. */
export function textWidth(text, size, weight = 400) {
  if (!measurer) measurer = document.createElement("canvas").getContext("2d");
  measurer.font = `${weight} ${size}px ${FONT}`;
  return measurer.measureText(text).width;
}

/** `text` broken at spaces into lines no wider than `width` (a word longer stays whole). */
export function wrapLines(text, width, size, weight = 400) {
  const lines = [];
  let line = "";
  for (const word of String(text).trim().split(/\s+/)) {
    const longer = line ? `${line} ${word}` : word;
    if (line && textWidth(longer, size, weight) > width) {
      lines.push(line);
      line = word;
    } else {
      line = longer;
    }
  }
  if (line) lines.push(line);
  return lines;
}

/** A colour the SVG and the canvas both take, or null for none (transparent). */
export function paint(colour) {
  if (!colour || colour === "none" || colour === "transparent") return null;
  if (/^rgba\(.*,\s*0(\.0*)?\s*\)$/.test(colour)) return null;
  return colour;
}

// ---- PNG ------------------------------------------------------------------------------------
//
// The page writes its PNGs itself: the canvas's pixels, each row after PNG's Sub filter, deflated
// by the browser's CompressionStream (off the page's turn), in PNG's chunks. Chromium's own
// encoders (canvas.toBlob, OffscreenCanvas.convertToBlob) wait for the page's idle time, which
// after a click came seconds later (the 2x PNG of a 768 x 1000 W_head: 2.4 s, its cells for the
// SVG 6.8 s, the same calls unprompted 0.04-0.09 s). CompressionStream is in every browser the
// page runs in (Chrome 80, Firefox 113, Safari 16.4); without it, canvas.toBlob.

// The work is done a slice at a time (about 1 MB of pixels, a few ms), the page's turn given
// back between slices, so that no task holds the page for long: a 1920 x 1080 PNG is 8 MB of
// pixels, which in one go held the page for 0.4-0.5 s.
const SLICE = 1 << 20;
const breathe = () => new Promise((resolve) => setTimeout(resolve, 0));

let crcTable = null;
function crcStep(bytes, crc) {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  for (let i = 0; i < bytes.length; i++) crc = crcTable[(crc ^ bytes[i]) & 255] ^ (crc >>> 8);
  return crc;
}

// A PNG chunk: its length, type, data and the CRC-32 of type and data.
async function chunk(type, data) {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  let crc = 0xffffffff;
  for (let at = 4; at < 8 + data.length; at += SLICE) {
    crc = crcStep(out.subarray(at, Math.min(at + SLICE, 8 + data.length)), crc);
    if (at + SLICE < 8 + data.length) await breathe();
  }
  view.setUint32(8 + data.length, (crc ^ 0xffffffff) >>> 0);
  return out;
}

/** RGBA pixels (`width` x `height`, 4 bytes each) as a PNG file (8-bit RGBA). */
export async function pngOf(rgba, width, height) {
  const stride = width * 4;
  const stream = new CompressionStream("deflate"); // zlib's format: what PNG's IDAT holds
  const deflated = new Response(stream.readable).arrayBuffer();
  const writer = stream.writable.getWriter();
  const rows = Math.max(1, Math.floor(SLICE / stride));
  for (let y0 = 0; y0 < height; y0 += rows) {
    const y1 = Math.min(height, y0 + rows);
    const raw = new Uint8Array((y1 - y0) * (stride + 1));
    for (let y = y0, o = 0; y < y1; y++) {
      raw[o++] = 1; // Sub: each byte less the one a pixel to its left
      const i0 = y * stride;
      for (let x = 0; x < 4; x++) raw[o++] = rgba[i0 + x];
      for (let i = i0 + 4; i < i0 + stride; i++) raw[o++] = (rgba[i] - rgba[i - 4]) & 255;
    }
    await writer.write(raw);
    await breathe();
  }
  await writer.close();
  const idat = new Uint8Array(await deflated);
  const ihdr = new Uint8Array(13);
  const view = new DataView(ihdr.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  ihdr.set([8, 6, 0, 0, 0], 8); // 8 bits, RGBA, deflate, no filter method of its own, no interlace
  const signature = new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10]);
  const parts = [signature, await chunk("IHDR", ihdr), await chunk("IDAT", idat), await chunk("IEND", new Uint8Array(0))];
  return new Blob(parts, { type: "image/png" });
}

function newCanvas(width, height) {
  const canvas = document.createElement("canvas");
  canvas.width = width;
  canvas.height = height;
  return canvas;
}

// The canvas as a PNG blob.
function encodePng(canvas) {
  if (typeof CompressionStream === "function") {
    const { width, height } = canvas;
    return pngOf(canvas.getContext("2d").getImageData(0, 0, width, height).data, width, height);
  }
  return new Promise((resolve, reject) => {
    canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error("the browser could not make the PNG"))), "image/png");
  });
}

// ---- SVG ----------------------------------------------------------------------------------

function escapeXml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;",
                                                   '"': "&quot;", "'": "&apos;" })[c]);
}

const n = (v) => String(Math.round(v * 100) / 100);

function attrs(pairs) {
  return Object.entries(pairs).filter(([, v]) => v !== null && v !== undefined && v !== "")
    .map(([k, v]) => ` ${k}="${typeof v === "number" ? n(v) : escapeXml(v)}"`).join("");
}

function strokeAttrs(item) {
  const stroke = paint(item.stroke);
  if (!stroke) return { stroke: "none" };
  return { stroke, "stroke-width": item.width === undefined ? 1 : item.width,
           "stroke-dasharray": item.dash || null };
}

// The cells of a canvas (one pixel per cell) as a PNG data: URL.
async function pngDataUrl(cells) {
  const canvas = newCanvas(cells.width, cells.height);
  canvas.getContext("2d").drawImage(cells, 0, 0);
  const blob = await encodePng(canvas);
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
}

/**
 * The scene as an SVG document (text), `title` and `desc` in its <title> and <desc>.
 * @returns {Promise<string>}
 */
export async function toSvg(scene) {
  let ids = 0;
  const defs = [];
  const images = new Map(); // canvas -> its data: URL, made once
  for (const item of walk(scene.items)) {
    if (item.kind === "cells" && !images.has(item.canvas)) images.set(item.canvas, await pngDataUrl(item.canvas));
  }
  const draw = (item) => {
    switch (item.kind) {
      case "rect":
        return `<rect${attrs({ class: item.role, x: item.x, y: item.y, width: item.w, height: item.h,
                               fill: paint(item.fill) || "none", ...strokeAttrs(item) })}/>`;
      case "line":
        return `<line${attrs({ x1: item.x1, y1: item.y1, x2: item.x2, y2: item.y2, ...strokeAttrs(item) })}/>`;
      case "path":
        return `<path${attrs({ d: item.d, fill: paint(item.fill) || "none", ...strokeAttrs(item),
                               "stroke-linejoin": "round" })}/>`;
      case "circle":
        return `<circle${attrs({ cx: item.cx, cy: item.cy, r: item.r, fill: paint(item.fill) || "none" })}/>`;
      case "text":
        return `<text${attrs({ class: item.role, x: item.x, y: item.y, "font-size": item.size,
                               "font-weight": item.weight && item.weight !== 400 ? item.weight : null,
                               fill: paint(item.fill) || "none",
                               "text-anchor": item.anchor && item.anchor !== "start" ? item.anchor : null,
                               transform: item.rotate ? `rotate(${item.rotate} ${n(item.x)} ${n(item.y)})` : null })}>` +
               `${escapeXml(item.text)}</text>`;
      case "gradient": {
        const id = `gradient-${++ids}`;
        defs.push(`<linearGradient id="${id}" x1="0" y1="0" x2="1" y2="0">` +
                  item.stops.map(([at, colour]) => `<stop offset="${n(at)}" stop-color="${escapeXml(colour)}"/>`).join("") +
                  "</linearGradient>");
        return `<rect${attrs({ x: item.x, y: item.y, width: item.w, height: item.h, fill: `url(#${id})`,
                               ...strokeAttrs(item) })}/>`;
      }
      case "cells":
        // one pixel per cell, stretched: drawn sharp, as the page draws them
        return `<image${attrs({ x: item.x, y: item.y, width: item.w, height: item.h, preserveAspectRatio: "none",
                                "image-rendering": "optimizeSpeed", style: "image-rendering:pixelated" })}` +
               ` xlink:href="${images.get(item.canvas)}"/>`;
      case "group": {
        const id = `clip-${++ids}`;
        const { x, y, w, h } = item.clip;
        defs.push(`<clipPath id="${id}"><rect${attrs({ x, y, width: w, height: h })}/></clipPath>`);
        return `<g${attrs({ class: item.role, "clip-path": `url(#${id})`,
                            "shape-rendering": item.crisp ? "crispEdges" : null })}>` +
               `${item.items.map(draw).join("")}</g>`;
      }
      default:
        throw new Error(`no such shape: ${item.kind}`);
    }
  };
  const body = scene.items.map(draw).join("\n");
  const { width, height } = scene;
  return '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"` +
    `${attrs({ width, height, viewBox: `0 0 ${n(width)} ${n(height)}`, "font-family": FONT })}>\n` +
    `<title>${escapeXml(scene.title)}</title>\n` +
    (scene.desc ? `<desc>${escapeXml(scene.desc)}</desc>\n` : "") +
    (defs.length ? `<defs>${defs.join("")}</defs>\n` : "") +
    `<rect class="background" width="100%" height="100%" fill="${escapeXml(scene.background)}"/>\n` +
    `${body}\n</svg>\n`;
}

function* walk(items) {
  for (const item of items) {
    yield item;
    if (item.kind === "group") yield* walk(item.items);
  }
}

// ---- canvas -------------------------------------------------------------------------------

const ALIGN = { start: "left", middle: "center", end: "right" };

function dashOf(dash) {
  return dash ? String(dash).split(/[\s,]+/).map(Number).filter((v) => v >= 0) : [];
}

// Draw the scene's items on `ctx`, whose transform maps the scene's px to the canvas's.
function drawOn(ctx, items, scale, ox, oy) {
  for (const item of items) {
    switch (item.kind) {
      case "rect": {
        const fill = paint(item.fill), stroke = paint(item.stroke);
        if (item.crisp && fill) {
          // each edge rounded to a device pixel, so that cells side by side leave no seam
          const x0 = Math.round(ox + item.x * scale), x1 = Math.round(ox + (item.x + item.w) * scale);
          const y0 = Math.round(oy + item.y * scale), y1 = Math.round(oy + (item.y + item.h) * scale);
          ctx.save();
          ctx.setTransform(1, 0, 0, 1, 0, 0);
          ctx.fillStyle = fill;
          ctx.fillRect(x0, y0, x1 - x0, y1 - y0);
          ctx.restore();
        } else if (fill) {
          ctx.fillStyle = fill;
          ctx.fillRect(item.x, item.y, item.w, item.h);
        }
        if (stroke) {
          ctx.strokeStyle = stroke;
          ctx.lineWidth = item.width === undefined ? 1 : item.width;
          ctx.setLineDash(dashOf(item.dash));
          ctx.strokeRect(item.x, item.y, item.w, item.h);
        }
        break;
      }
      case "line":
        if (!paint(item.stroke)) break;
        ctx.strokeStyle = item.stroke;
        ctx.lineWidth = item.width === undefined ? 1 : item.width;
        ctx.setLineDash(dashOf(item.dash));
        ctx.beginPath();
        ctx.moveTo(item.x1, item.y1);
        ctx.lineTo(item.x2, item.y2);
        ctx.stroke();
        break;
      case "path": {
        const path = new Path2D(item.d);
        if (paint(item.fill)) {
          ctx.fillStyle = item.fill;
          ctx.fill(path);
        }
        if (paint(item.stroke)) {
          ctx.strokeStyle = item.stroke;
          ctx.lineWidth = item.width === undefined ? 1 : item.width;
          ctx.lineJoin = "round";
          ctx.setLineDash(dashOf(item.dash));
          ctx.stroke(path);
        }
        break;
      }
      case "circle":
        if (!paint(item.fill)) break;
        ctx.fillStyle = item.fill;
        ctx.beginPath();
        ctx.arc(item.cx, item.cy, item.r, 0, 2 * Math.PI);
        ctx.fill();
        break;
      case "text":
        if (!paint(item.fill)) break;
        ctx.save();
        ctx.font = `${item.weight || 400} ${item.size}px ${FONT}`;
        ctx.fillStyle = item.fill;
        ctx.textAlign = ALIGN[item.anchor || "start"];
        ctx.textBaseline = "alphabetic";
        ctx.translate(item.x, item.y);
        if (item.rotate) ctx.rotate((item.rotate * Math.PI) / 180);
        ctx.fillText(item.text, 0, 0);
        ctx.restore();
        break;
      case "gradient": {
        const g = ctx.createLinearGradient(item.x, 0, item.x + item.w, 0);
        for (const [at, colour] of item.stops) g.addColorStop(at, colour);
        ctx.fillStyle = g;
        ctx.fillRect(item.x, item.y, item.w, item.h);
        if (paint(item.stroke)) {
          ctx.strokeStyle = item.stroke;
          ctx.lineWidth = item.width === undefined ? 1 : item.width;
          ctx.setLineDash([]);
          ctx.strokeRect(item.x, item.y, item.w, item.h);
        }
        break;
      }
      case "cells":
        ctx.save();
        ctx.imageSmoothingEnabled = false;
        ctx.drawImage(item.canvas, 0, 0, item.canvas.width, item.canvas.height, item.x, item.y, item.w, item.h);
        ctx.restore();
        break;
      case "group":
        ctx.save();
        ctx.beginPath();
        ctx.rect(item.clip.x, item.clip.y, item.clip.w, item.clip.h);
        ctx.clip();
        drawOn(ctx, item.items, scale, ox, oy);
        ctx.restore();
        break;
      default:
        throw new Error(`no such shape: ${item.kind}`);
    }
  }
}

/**
 * The scene painted as a PNG: at `scale` device px per CSS px, or (`width` and `height` given)
 * fitted into a picture of that size, centred on the scene's background.
 * @returns {Promise<{blob: Blob, width: number, height: number}>}
 */
export function toPng(scene, { scale = 2, width = 0, height = 0 } = {}) {
  const fit = width && height;
  const k = fit ? Math.min(width / scene.width, height / scene.height) : scale;
  const canvas = newCanvas(fit ? width : Math.ceil(scene.width * k), fit ? height : Math.ceil(scene.height * k));
  const ox = fit ? Math.round((canvas.width - scene.width * k) / 2) : 0;
  const oy = fit ? Math.round((canvas.height - scene.height * k) / 2) : 0;
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = scene.background;
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.setTransform(k, 0, 0, k, ox, oy);
  drawOn(ctx, scene.items, k, ox, oy);
  const out = { width: canvas.width, height: canvas.height };
  return encodePng(canvas).then((blob) => {
    canvas.width = canvas.height = 0; // its memory let go at once (a 1920 x 1080 one is 8 MB)
    return { blob, ...out };
  });
}
