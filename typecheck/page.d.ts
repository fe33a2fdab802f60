// What the page's modules (web/js) use that no script of the repository declares: the two
// libraries the page loads as classic scripts (Plotly.js, KaTeX: only the calls the page makes),
// and the properties Plotly and the page put on a figure's element.

/** A matrix as the page keeps it (js/page/render.js): a patched one carries the version of its last
 * patch and, for each version, the cell it wrote ([version, row * cols + col]). */
interface StoredMatrix extends Matrix {
  version?: number;
  log?: Array<[number, number]>;
}
type Matrix = import("../web/js/protocol.js").Matrix;
type HeatmapSpec = import("../web/js/protocol.js").HeatmapSpec;

/** A heatmap's cells as js/heatmap/bitmap.js paints them. */
interface CellBitmap {
  cells: HTMLCanvasElement;
  image: ImageData;
  pixels: Uint32Array;
  rows: number;
  cols: number;
  scale: string;
  zmin: number;
  zmax: number;
  data: Float64Array | null;
  version: number;
  /** the canvas under the plot area, once painted */
  view?: HTMLCanvasElement;
  [more: string]: any;
}

/** A figure's element: what Plotly.js keeps on it, and what the page adds. */
interface PlotElement extends HTMLElement {
  /** Plotly's traces (a line chart's are the page's own, js/figure/line-chart.js) */
  data?: Array<{ [key: string]: any }>;
  layout?: { [key: string]: any };
  /** Plotly's computed layout (its private name; the page reads the plot area's size) */
  _fullLayout?: any;
  /** Plotly's event hook, once Plotly has drawn into the element */
  on?(event: string, handler: (...args: any[]) => void): void;
  /** the spec and matrix drawn (js/heatmap/draw.js) */
  vitHover?: { spec: HeatmapSpec; m: StoredMatrix };
  vitHoverBound?: boolean;
  vitBitmap?: CellBitmap | null;
  vitBitmapWatched?: boolean;
  /** whether the page paints the cells' numbers */
  vitText?: boolean;
}

/** Plotly.js (the page's own heatmap bundle, or the official cartesian one): the calls made. */
interface PlotlyStatic {
  react(el: HTMLElement, data: object[], layout?: object, config?: object): Promise<PlotElement>;
  relayout(el: HTMLElement, update: object): Promise<PlotElement>;
  toImage(figure: HTMLElement | object, options?: object): Promise<string>;
  Plots: { resize(el: HTMLElement): Promise<void> };
}

/** KaTeX: the one call made (js/panels/text.js). */
interface KatexStatic {
  render(tex: string, el: HTMLElement, options?: {
    displayMode?: boolean;
    throwOnError?: boolean;
    output?: "html" | "mathml" | "htmlAndMathml";
  }): void;
}

declare var Plotly: PlotlyStatic;
/** loaded on demand: undefined until its script has run */
declare var katex: KatexStatic | undefined;

// PageIds (each id of web/index.html and its element) is written by tests/test_types.py.
interface Document {
  getElementById<K extends keyof PageIds>(elementId: K): PageIds[K];
}
/** The page's `$`: the element of an id of web/index.html as it is there; any other id's as an
 * HTMLElement. */
type ById = <K extends string>(id: K) => K extends keyof PageIds ? PageIds[K] : HTMLElement;

/** Newer than the lib the projects name (es2023); js/host.js uses it where it exists. */
interface Uint8ArrayConstructor {
  fromBase64?(text: string): Uint8Array;
}
