/**
 * The statement's map: the period's routes over the outline of Great Britain, drawn as PDF vectors in Web
 * Mercator (the projection of the web app's maps), offline, fitted to the routes.
 */
import type { LonLat } from '../document-content.ts';
import type { Layout } from './layout.ts';
import { clipRing, hundredthText, simplifyLine } from './map-geometry.ts';
import { ukOutline } from './uk-outline.ts';

const EARTH_RADIUS_METRES = 6_371_008.8;
/** The least ground the map spans, so a month of short trips still shows the coast and towns around. */
const MIN_SPAN_METRES = 40_000;
/** Room around the routes, as a share of their extent on each side. */
const PADDING_SHARE = 0.1;
/*
 * NOTE: a point within this distance of the line through its neighbours is dropped (Douglas–Peucker): a
 * quarter of a point is a dot at 300 dpi, so the drawing is the same while the page's content, which pdfkit
 * writes a point at a time and deflates, stays small.
 */
const TOLERANCE_PT = 0.25;
/** The outline is cut this far outside the map's box, so the edges the cut adds (and their stroke) stay hidden. */
const CUT_MARGIN_PT = 2;
/** Great Britain and Ireland as a whole, for a period without journeys. */
const ISLES: readonly LonLat[] = [
  [-10.5, 49.8],
  [1.8, 58.7],
];

const mercatorX = (lng: number): number => (lng * Math.PI) / 180;
const mercatorY = (lat: number): number => Math.log(Math.tan(Math.PI / 4 + (lat * Math.PI) / 360));
const latOf = (y: number): number => ((2 * Math.atan(Math.exp(y)) - Math.PI / 2) * 180) / Math.PI;

interface View {
  readonly minX: number;
  readonly maxY: number;
  /** Points per Mercator unit. */
  readonly scale: number;
  readonly width: number;
  readonly height: number;
}

function fitView(points: readonly LonLat[], width: number, height: number): View {
  let minX = Infinity;
  let maxX = -Infinity;
  let minY = Infinity;
  let maxY = -Infinity;
  for (const [lng, lat] of points) {
    minX = Math.min(minX, mercatorX(lng));
    maxX = Math.max(maxX, mercatorX(lng));
    minY = Math.min(minY, mercatorY(lat));
    maxY = Math.max(maxY, mercatorY(lat));
  }
  const midLat = latOf((minY + maxY) / 2);
  // NOTE: a Mercator unit covers R·cos(latitude) metres of ground, so the least span depends on latitude.
  const minSpan = MIN_SPAN_METRES / (EARTH_RADIUS_METRES * Math.cos((midLat * Math.PI) / 180));
  let spanX = Math.max(maxX - minX, minSpan) * (1 + 2 * PADDING_SHARE);
  let spanY = Math.max(maxY - minY, minSpan) * (1 + 2 * PADDING_SHARE);
  if (spanX / spanY < width / height) spanX = (spanY * width) / height;
  else spanY = (spanX * height) / width;
  const centreX = (minX + maxX) / 2;
  const centreY = (minY + maxY) / 2;
  return { minX: centreX - spanX / 2, maxY: centreY + spanY / 2, scale: width / spanX, width, height };
}

/** Mercator points as page points in a view, from the view's top left corner. */
function toPage(view: View, mercator: ArrayLike<number>): Float64Array {
  const out = new Float64Array(mercator.length);
  for (let i = 0; i < mercator.length; i += 2) {
    out[i] = ((mercator[i] ?? 0) - view.minX) * view.scale;
    out[i + 1] = (view.maxY - (mercator[i + 1] ?? 0)) * view.scale;
  }
  return out;
}

/*
 * NOTE: the path goes to the page as one piece of content, the same bytes as pdfkit's `moveTo`/`lineTo`/
 * `closePath` would write an operator at a time (`x y m`, `x y l`, `h`, each ending a line). Through those,
 * each point of the map was a string and a byte array of its own, kept with the page until the document
 * ends: 1,480 of a statement's 4,070 pieces of page content, each surviving into the old generation.
 */
/** Adds one polyline's path (not stroked) of page points, offset by `origin`. */
function tracePath(
  doc: PDFKit.PDFDocument,
  origin: readonly [number, number],
  points: ArrayLike<number>,
  close: boolean,
): void {
  let content = '';
  for (let i = 0; i < points.length; i += 2) {
    const x = hundredthText(origin[0] + (points[i] ?? 0));
    const y = hundredthText(origin[1] + (points[i + 1] ?? 0));
    content += `${i === 0 ? '' : '\n'}${x} ${y} ${i === 0 ? 'm' : 'l'}`;
  }
  if (close) content += content === '' ? 'h' : '\nh';
  if (content !== '') doc.addContent(content);
}

/** A route's points in Web Mercator radians. */
function projected(route: readonly LonLat[]): Float64Array {
  const out = new Float64Array(route.length * 2);
  route.forEach(([lng, lat], i) => {
    out[2 * i] = mercatorX(lng);
    out[2 * i + 1] = mercatorY(lat);
  });
  return out;
}

const finite = (p: LonLat): boolean =>
  Number.isFinite(p[0]) && Number.isFinite(p[1]) && Math.abs(p[1]) < 85 && Math.abs(p[0]) <= 180;

interface Box {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** The view's box in degrees. */
function boundsOf(view: View): { west: number; east: number; south: number; north: number } {
  return {
    west: (view.minX * 180) / Math.PI,
    east: ((view.minX + view.width / view.scale) * 180) / Math.PI,
    north: latOf(view.maxY),
    south: latOf(view.maxY - view.height / view.scale),
  };
}

/** The land of every ring that reaches into a view of the given size, in page points from its top left. */
function outlinePaths(view: View): number[][] {
  const { west, east, south, north } = boundsOf(view);
  const cut = {
    left: -CUT_MARGIN_PT,
    top: -CUT_MARGIN_PT,
    right: view.width + CUT_MARGIN_PT,
    bottom: view.height + CUT_MARGIN_PT,
  };
  const paths: number[][] = [];
  for (const ring of ukOutline()) {
    if (ring.east < west || ring.west > east || ring.north < south || ring.south > north) continue;
    const inside = clipRing(toPage(view, ring.mercator), cut);
    if (inside.length >= 6) paths.push(simplifyLine(inside, TOLERANCE_PT));
  }
  return paths;
}

/** Sea, then the land's paths, clipped to the box. */
function drawOutline(doc: PDFKit.PDFDocument, paths: readonly number[][], box: Box): void {
  doc.rect(box.x, box.y, box.width, box.height).fill('#dfeaf3');
  doc.rect(box.x, box.y, box.width, box.height).clip();
  for (const path of paths) tracePath(doc, [box.x, box.y], path, true);
  doc.lineWidth(0.4).fillAndStroke('#f7f5ef', '#9aa7b1');
}

const INSET_PT = { width: 78, height: 100, margin: 6 };
let insetPaths: readonly number[][] | undefined;

/** The whole of the isles in a corner, with the main map's area marked, so any month's map has its place. */
function drawInset(doc: PDFKit.PDFDocument, main: View, box: Box, accent: string): void {
  const inset: Box = {
    x: box.x + box.width - INSET_PT.width - INSET_PT.margin,
    y: box.y + INSET_PT.margin,
    width: INSET_PT.width,
    height: INSET_PT.height,
  };
  const view = fitView(ISLES, inset.width, inset.height);
  // The inset is the same view on every statement: its paths are cut and thinned once.
  insetPaths ??= outlinePaths(view);
  doc.save();
  drawOutline(doc, insetPaths, inset);
  const { west, east, south, north } = boundsOf(main);
  const [x0, y0] = [(mercatorX(west) - view.minX) * view.scale, (view.maxY - mercatorY(north)) * view.scale];
  const [x1, y1] = [(mercatorX(east) - view.minX) * view.scale, (view.maxY - mercatorY(south)) * view.scale];
  const w = Math.max(x1 - x0, 4);
  const h = Math.max(y1 - y0, 4);
  doc
    .rect(inset.x + (x0 + x1) / 2 - w / 2, inset.y + (y0 + y1) / 2 - h / 2, w, h)
    .lineWidth(1)
    .stroke(accent);
  doc.restore();
  doc.rect(inset.x, inset.y, inset.width, inset.height).lineWidth(0.5).stroke('#9aa7b1');
}

/**
 * Draws the map in a box (the routes over the coast, and an inset of the isles marking where they are)
 * and moves below it. Tagged as a figure whose alternative text says what it shows.
 */
export function drawRouteMap(
  l: Layout,
  routes: ReadonlyArray<readonly LonLat[]>,
  box: Box,
  alt: string,
): void {
  const { doc } = l;
  const clean = routes.map((route) => route.filter(finite)).filter((route) => route.length > 0);
  const view = fitView(clean.length === 0 ? ISLES : clean.flat(), box.width, box.height);
  const origin: [number, number] = [box.x, box.y];
  l.root.add(
    doc.struct('Figure', { alt }, () => {
      doc.save();
      drawOutline(doc, outlinePaths(view), box);
      for (const route of clean) {
        tracePath(doc, origin, simplifyLine(toPage(view, projected(route)), TOLERANCE_PT), false);
      }
      doc.lineWidth(1.6).lineJoin('round').lineCap('round').strokeOpacity(0.85).stroke(l.accent);
      doc.restore();
      doc.rect(box.x, box.y, box.width, box.height).lineWidth(0.5).stroke('#9aa7b1');
      if (clean.length > 0) drawInset(doc, view, box, l.accent);
    }),
  );
  doc.x = box.x;
  doc.y = box.y + box.height + 6;
}
