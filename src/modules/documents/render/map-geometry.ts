/**
 * Plane geometry for the statement's map, in page points (`[x0, y0, x1, y1, …]`): a ring cut to a rectangle
 * and a line thinned to what a reader can see, so the PDF carries only the points that draw something.
 */

export interface Rect {
  readonly left: number;
  readonly top: number;
  readonly right: number;
  readonly bottom: number;
}

type Inside = (x: number, y: number) => boolean;
/** Where the segment (ax, ay)–(bx, by) crosses the rectangle's edge that `inside` tests. */
type Cross = (ax: number, ay: number, bx: number, by: number) => [number, number];

function clipEdge(ring: readonly number[], inside: Inside, cross: Cross): number[] {
  const out: number[] = [];
  const count = ring.length / 2;
  for (let i = 0; i < count; i += 1) {
    const ax = ring[2 * ((i + count - 1) % count)] ?? 0;
    const ay = ring[2 * ((i + count - 1) % count) + 1] ?? 0;
    const bx = ring[2 * i] ?? 0;
    const by = ring[2 * i + 1] ?? 0;
    const aIn = inside(ax, ay);
    const bIn = inside(bx, by);
    if (aIn !== bIn) out.push(...cross(ax, ay, bx, by));
    if (bIn) out.push(bx, by);
  }
  return out;
}

const atX =
  (x: number) =>
  (ax: number, ay: number, bx: number, by: number): [number, number] => [
    x,
    ay + ((by - ay) * (x - ax)) / (bx - ax),
  ];
const atY =
  (y: number) =>
  (ax: number, ay: number, bx: number, by: number): [number, number] => [
    ax + ((bx - ax) * (y - ay)) / (by - ay),
    y,
  ];

/*
 * NOTE: Sutherland–Hodgman against each side in turn. The filled area inside the rectangle is exactly the
 * ring's; what it adds runs along the rectangle's sides, so the caller cuts to a rectangle a little larger
 * than the map and those edges (and their stroke) fall outside the map's clip. Zoomed in on a town, the
 * coast of Great Britain is a few dozen points instead of a few thousand.
 */
/** A closed ring cut to a rectangle; fewer than three points when nothing of it is inside. */
export function clipRing(ring: ArrayLike<number>, rect: Rect): number[] {
  let points = Array.from(ring);
  points = clipEdge(points, (x) => x >= rect.left, atX(rect.left));
  points = clipEdge(points, (x) => x <= rect.right, atX(rect.right));
  points = clipEdge(points, (_x, y) => y >= rect.top, atY(rect.top));
  points = clipEdge(points, (_x, y) => y <= rect.bottom, atY(rect.bottom));
  return points;
}

/** Squared distance from (px, py) to the segment (ax, ay)–(bx, by). */
function segmentDistanceSquared(
  px: number,
  py: number,
  ax: number,
  ay: number,
  bx: number,
  by: number,
): number {
  const dx = bx - ax;
  const dy = by - ay;
  const lengthSquared = dx * dx + dy * dy;
  const t =
    lengthSquared === 0 ? 0 : Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / lengthSquared));
  const ex = ax + t * dx - px;
  const ey = ay + t * dy - py;
  return ex * ex + ey * ey;
}

/**
 * A line's points thinned by Douglas–Peucker: every dropped point lies within `tolerance` of the line kept,
 * so at the page's scale the drawing is the same. The first and last points are always kept.
 */
export function simplifyLine(points: ArrayLike<number>, tolerance: number): number[] {
  const count = points.length / 2;
  if (count <= 2) return Array.from(points);
  const keep = new Uint8Array(count);
  keep[0] = 1;
  keep[count - 1] = 1;
  const limit = tolerance * tolerance;
  const stack: number[] = [0, count - 1];
  while (stack.length > 0) {
    const last = stack.pop() ?? 0;
    const first = stack.pop() ?? 0;
    const ax = points[2 * first] ?? 0;
    const ay = points[2 * first + 1] ?? 0;
    const bx = points[2 * last] ?? 0;
    const by = points[2 * last + 1] ?? 0;
    let farthest = -1;
    let farthestSquared = limit;
    for (let i = first + 1; i < last; i += 1) {
      const d = segmentDistanceSquared(points[2 * i] ?? 0, points[2 * i + 1] ?? 0, ax, ay, bx, by);
      if (d > farthestSquared) {
        farthest = i;
        farthestSquared = d;
      }
    }
    if (farthest < 0) continue;
    keep[farthest] = 1;
    stack.push(first, farthest, farthest, last);
  }
  const out: number[] = [];
  for (let i = 0; i < count; i += 1) if (keep[i] === 1) out.push(points[2 * i] ?? 0, points[2 * i + 1] ?? 0);
  return out;
}

/*
 * NOTE: a coordinate is written to a hundredth of a point (finer than any printer's dot, and half the digits
 * pdfkit would write), as `String` writes that hundredth (`12.3`, `-0.05`, `7`), but from whole hundredths by
 * integer arithmetic: JavaScript's shortest form of a fraction took most of the map's time.
 */
/** Whole hundredths at most this large are written exactly by the integer arithmetic (far beyond any page). */
const LARGEST_HUNDREDTHS = 1e15;

/** A page coordinate rounded to a hundredth of a point, as `String(Math.round(value * 100) / 100)` writes it. */
export function hundredthText(value: number): string {
  const hundredths = Math.round(value * 100);
  if (!(Math.abs(hundredths) < LARGEST_HUNDREDTHS)) return String(hundredths / 100);
  const magnitude = Math.abs(hundredths);
  const whole = Math.floor(magnitude / 100);
  const rest = magnitude - whole * 100;
  const sign = hundredths < 0 ? '-' : '';
  if (rest === 0) return whole === 0 ? '0' : `${sign}${String(whole)}`;
  if (rest % 10 === 0) return `${sign}${String(whole)}.${String(rest / 10)}`;
  return `${sign}${String(whole)}.${rest < 10 ? '0' : ''}${String(rest)}`;
}
