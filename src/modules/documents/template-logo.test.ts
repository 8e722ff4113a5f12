import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PNG } from 'pngjs';
import { checkLogo, LOGO_MAX_BYTES } from './template-logo.ts';

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

function png(widthPx: number, heightPx: number): Uint8Array {
  const image = new PNG({ width: widthPx, height: heightPx });
  image.data.fill(0x80);
  return new Uint8Array(PNG.sync.write(image));
}

const reasonOf = (mediaType: 'image/png' | 'image/svg+xml', bytes: Uint8Array): string => {
  const check = checkLogo(mediaType, bytes);
  if (check.ok) assert.fail('accepted');
  return check.reason;
};

test('a PNG is accepted with its size in pixels', () => {
  const check = checkLogo('image/png', png(120, 40));
  assert.ok(check.ok);
  assert.equal(check.logo.widthPx, 120);
  assert.equal(check.logo.heightPx, 40);
});

test('a PNG is refused without its signature, truncated, corrupted or too large a picture', () => {
  assert.match(
    reasonOf('image/png', utf8('<svg xmlns="http://www.w3.org/2000/svg"/>'.padEnd(64))),
    /PNG signature/,
  );
  const good = png(30, 30);
  assert.match(reasonOf('image/png', good.subarray(0, good.length - 20)), /cannot be decoded/);
  const corrupt = good.slice();
  corrupt[40] = (corrupt[40] ?? 0) ^ 0xff;
  assert.match(reasonOf('image/png', corrupt), /cannot be decoded/);
  // A header claiming 100,000 pixels a side is refused before anything is inflated.
  const huge = good.slice();
  new DataView(huge.buffer).setUint32(16, 100_000);
  assert.match(reasonOf('image/png', huge), /100000×30 pixels/);
});

test('a logo above 256 KiB or empty is refused, naming the limit', () => {
  assert.match(reasonOf('image/png', new Uint8Array(LOGO_MAX_BYTES + 1)), /at most 262144/);
  assert.match(reasonOf('image/svg+xml', new Uint8Array()), /empty/);
});

const svg = (body: string, attributes = 'viewBox="0 0 200 50"'): Uint8Array =>
  utf8(
    `<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" ${attributes}>${body}</svg>`,
  );

test('a plain SVG with gradients and local references is accepted, sized by its viewBox', () => {
  const check = checkLogo(
    'image/svg+xml',
    svg(
      '<defs><linearGradient id="g"><stop offset="0" stop-color="#123456"/></linearGradient></defs>' +
        '<!-- the mark --><rect width="200" height="50" fill="url(#g)" style="fill: url(\'#g\')"/>' +
        '<use xlink:href="#g"/><text x="4" y="30">Ŵyn &amp; Łódź</text><style>rect { fill: #abcdef }</style>',
    ),
  );
  assert.ok(check.ok, check.ok ? '' : check.reason);
  assert.equal(check.logo.widthPx, 200);
  assert.equal(check.logo.heightPx, 50);
  const sized = checkLogo('image/svg+xml', svg('<rect width="1" height="1"/>', 'width="64.5" height="32"'));
  assert.ok(sized.ok);
  assert.equal(sized.logo.widthPx, 65);
});

test('an SVG that runs or reaches out is refused, naming what it holds', () => {
  const cases: Array<[string, RegExp]> = [
    ['<script>alert(1)</script>', /script element/],
    ['<svg:script xmlns:svg="http://www.w3.org/2000/svg">alert(1)</svg:script>', /script element/],
    ['<rect width="1" height="1" onclick="alert(1)"/>', /event handler attribute \(onclick on <rect>\)/],
    ['<foreignObject><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject>', /foreignObject/],
    ['<image href="https://tracker.example/p.png" width="1" height="1"/>', /outside the file/],
    ['<image xlink:href="file:///etc/passwd"/>', /outside the file/],
    ['<a href="javascript:alert(1)"><rect/></a>', /outside the file/],
    ['<rect fill="url(https://x.example/a.svg#g)"/>', /url\(\) or @import/],
    ['<style>@import url("https://x.example/s.css");</style>', /style sheet/],
    ['<set attributeName="onclick" to="alert(1)"/>', /animates a link or event handler/],
    ['<?xml-stylesheet href="https://x.example/s.css"?><rect/>', /processing instruction/],
  ];
  for (const [body, reason] of cases) assert.match(reasonOf('image/svg+xml', svg(body)), reason, body);
  assert.match(reasonOf('image/svg+xml', svg('', 'viewBox="0 0 1 1" onload="alert(1)"')), /onload on <svg>/);
});

test('an SVG that is not one, not well-formed, declares entities or has no size is refused', () => {
  assert.match(
    reasonOf('image/svg+xml', utf8('<!DOCTYPE svg [<!ENTITY a "aaaa">]><svg viewBox="0 0 1 1">&a;</svg>')),
    /DOCTYPE/,
  );
  assert.match(reasonOf('image/svg+xml', utf8('<svg viewBox="0 0 1 1"><g></svg>')), /not well-formed XML/);
  assert.match(reasonOf('image/svg+xml', utf8('<html><body/></html>')), /root element is not <svg>/);
  assert.match(reasonOf('image/svg+xml', svg('<rect/>', '')), /no size/);
  assert.match(reasonOf('image/svg+xml', new Uint8Array([0x3c, 0xff, 0xfe])), /not UTF-8/);
});

test('an SVG whose <use> references multiply past what a logo draws is refused; a few uses are fine', () => {
  // Eight levels of ten uses each: 1.6 kB naming 10^8 rectangles, which ran the renderer out of memory.
  let defs = '<rect id="a0" width="1" height="1"/>';
  for (let level = 1; level <= 8; level++)
    defs += `<g id="a${String(level)}">${`<use href="#a${String(level - 1)}"/>`.repeat(10)}</g>`;
  const bomb = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><defs>${defs}</defs><use href="#a8"/></svg>`;
  assert.match(reasonOf('image/svg+xml', utf8(bomb)), /draws more than 20000 elements/);
  const few = `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 10 10"><defs><circle id="dot" r="1"/></defs>${'<use xlink:href="#dot" x="2"/>'.repeat(50)}<use href="#self" id="self"/></svg>`;
  assert.ok(checkLogo('image/svg+xml', utf8(few)).ok);
});

test('an SVG nested deeper than the parser reads is refused with a reason, not an error', () => {
  const deep = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10">${'<g>'.repeat(101)}${'</g>'.repeat(101)}</svg>`;
  assert.match(reasonOf('image/svg+xml', utf8(deep)), /cannot be read/);
});
