/**
 * Every kind of document rendered for the OpenAPI example policy and for a policy of hostile text, then read
 * back with poppler: pdftotext finds every required item and nothing of the other policy, no word leaves
 * the text area or lies over another, page 1 matches its golden image, the IPID fits two pages, and the
 * same content gives the same bytes. UPDATE_GOLDEN=1 rewrites the golden images (look at them first).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { rmSync } from 'node:fs';
import pixelmatch from 'pixelmatch';
import { PNG } from 'pngjs';
import {
  documentsFor,
  EXAMPLE_BRANDING,
  EXAMPLE_IDS,
  examplePolicy,
  HOSTILE_BRANDING,
  HOSTILE_IDS,
  hostilePolicy,
  type DocumentIds,
} from '../../../../test/support/documents.ts';
import type { Branding, DocumentInput } from '../document-content.ts';
import { CERTIFICATION_SENTENCE } from './certificate.ts';
import { documentFileName, renderDocument } from './index.ts';
import { IPID_HEADINGS } from './ipid.ts';
import { MARGIN_PT, PAGE_HEIGHT_PT, PAGE_WIDTH_PT } from './layout.ts';
import type { PolicyObject } from './policy-content.ts';
import { payByMileRulesInWords } from './rules-in-words.ts';
import { priceRows } from './schedule.ts';
import { distance, longDate, londonDateTime, money, printable, shortDate } from './text.ts';

const GOLDEN_DIR = join(import.meta.dirname, 'golden');
/** Share of page 1's pixels that may differ from the golden image (anti-aliasing, not layout). */
const GOLDEN_TOLERANCE = 0.004;
const work = mkdtempSync(join(tmpdir(), 'milepost-render-'));
after(() => {
  rmSync(work, { recursive: true, force: true });
});

/** Text without spaces or hyphens: pdftotext joins a word broken at a hyphen across lines, and drops the hyphen. */
const squash = (text: string): string => printable(text).replace(/[\s-]+/g, '');

/** The items a reader must find in each kind, from its content. */
function requiredItems(input: DocumentInput): string[] {
  switch (input.kind) {
    case 'certificate': {
      const c = input.content;
      return [
        c.certificateNumber,
        c.policyReference,
        c.registrationMark,
        c.policyholderName,
        londonDateTime(c.commencesAt),
        londonDateTime(c.expiresAt),
        'Persons or classes of persons entitled to drive',
        ...c.personsEntitledToDrive,
        'Limitations as to use',
        ...c.limitationsAsToUse,
        CERTIFICATION_SENTENCE,
        `${c.insurerName}, Authorised Insurers`,
      ];
    }
    case 'schedule': {
      const s = input.content;
      return [
        s.policyReference,
        s.policyVersionReference,
        s.policyholder.name,
        ...s.drivers.map((d) => d.name),
        s.vehicle.registrationMark,
        `${s.vehicle.make} ${s.vehicle.model}`,
        money(s.compulsoryExcessPence),
        money(s.voluntaryExcessPence),
        londonDateTime(s.term.startsAt),
        londonDateTime(s.term.endsAt),
        ...payByMileRulesInWords(s.rules),
        ...priceRows(s.price).flat(),
      ];
    }
    case 'ipid': {
      const c = input.content;
      return [
        c.productName,
        c.insurerName,
        ...Object.values(IPID_HEADINGS),
        c.whatIsThisInsurance,
        ...c.whatIsInsured,
        ...c.whatIsNotInsured,
        ...c.restrictions,
        ...c.whereCovered,
        ...c.obligations,
        ...c.whenAndHowToPay,
        ...c.whenCoverStartsAndEnds,
        ...c.howToCancel,
      ];
    }
    case 'statement_of_fact':
      return input.content.sections.flatMap((s) => [
        s.heading,
        ...s.answers.flatMap((a) => [a.question, a.answer]),
      ]);
    case 'renewal_notice': {
      const r = input.content;
      return [
        r.policyReference,
        r.registrationMark,
        ...priceRows(r.lastYearPrice).flat(),
        ...priceRows(r.newPrice).flat(),
        londonDateTime(r.newTerm.startsAt),
        londonDateTime(r.newTerm.endsAt),
        longDate(r.cancelAutoRenewalBy),
        ...r.howToCancelAutoRenewal,
      ];
    }
    case 'statement': {
      const s = input.content;
      return [
        s.policyReference,
        s.statementReference,
        `${longDate(s.periodStartOn)} to ${longDate(s.periodEndOn)}`,
        ...s.days.flatMap((d) => [
          shortDate(d.date),
          distance(d.distanceMetres, s.usageUnit),
          money(d.costPence),
        ]),
        ...s.cappedDays.flatMap((d) => [shortDate(d.date), money(d.creditPence)]),
        money(s.usagePremiumPence),
        money(s.subscriptionPremiumPence),
        money(-s.capCreditPence),
        money(-s.freeDistanceCreditPence),
        money(-s.creditsUsedPence),
        money(s.totalPremiumPence),
        money(s.billedPremiumPence),
        s.howPaid,
      ];
    }
    case 'credit_note': {
      const c = input.content;
      return [
        c.creditNoteNumber,
        c.relatesTo,
        ...c.lines.flatMap((l) => [l.description, money(l.amountPence)]),
        money(c.totalPence),
        c.settlement,
      ];
    }
    case 'cancellation_notice': {
      const c = input.content;
      return [
        c.policyReference,
        c.registrationMark,
        londonDateTime(c.effectiveAt),
        c.reason,
        ...c.lines.flatMap((l) => [l.description, money(l.amountPence)]),
        `Refund to you: ${money(c.balancePence)}`,
        c.settlement,
      ];
    }
  }
}

interface Case {
  readonly name: string;
  readonly policy: PolicyObject;
  readonly ids: DocumentIds;
  readonly branding: Branding;
}

const CASES: readonly Case[] = [
  { name: 'example', policy: examplePolicy(), ids: EXAMPLE_IDS, branding: EXAMPLE_BRANDING },
  { name: 'hostile', policy: hostilePolicy(), ids: HOSTILE_IDS, branding: HOSTILE_BRANDING },
];

/** What only that policy's documents say: another's must not contain any of it. */
const ownText = (c: Case): string[] => [
  c.ids.policyReference,
  c.policy.vehicle.reg,
  c.policy.proposer.last_names,
  c.policy.proposer.email,
  c.policy.policy.address.postcode,
];

interface Word {
  readonly page: number;
  readonly text: string;
  readonly xMin: number;
  readonly yMin: number;
  readonly xMax: number;
  readonly yMax: number;
}

/** Every word with its box in points, from pdftotext's bounding-box output. */
function wordsOf(path: string): Word[] {
  const html = execFileSync('pdftotext', ['-bbox', path, '-'], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const words: Word[] = [];
  let page = 0;
  for (const line of html.split('\n')) {
    if (line.includes('<page ')) page += 1;
    const m = /<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">(.*)<\/word>/.exec(line);
    if (m === null) continue;
    const [, xMin = '0', yMin = '0', xMax = '0', yMax = '0', text = ''] = m;
    words.push({
      page,
      text,
      xMin: Number(xMin),
      yMin: Number(yMin),
      xMax: Number(xMax),
      yMax: Number(yMax),
    });
  }
  return words;
}

/** Words whose boxes overlap by more than a sliver (a line printed over another). */
function overlapping(words: readonly Word[]): string[] {
  const clashes: string[] = [];
  for (let i = 0; i < words.length; i += 1)
    for (let j = i + 1; j < words.length; j += 1) {
      const a = words[i];
      const b = words[j];
      if (a === undefined || b === undefined || a.page !== b.page) continue;
      const dx = Math.min(a.xMax, b.xMax) - Math.max(a.xMin, b.xMin);
      const dy = Math.min(a.yMax, b.yMax) - Math.max(a.yMin, b.yMin);
      if (dx > 1.5 && dy > 2.5) clashes.push(`${a.text} / ${b.text} on page ${String(a.page)}`);
    }
  return clashes;
}

function comparePage1(pdfPath: string, goldenName: string): void {
  const prefix = join(work, goldenName);
  execFileSync('pdftoppm', ['-r', '50', '-png', '-f', '1', '-l', '1', '-singlefile', pdfPath, prefix]);
  const actualBytes = readFileSync(`${prefix}.png`);
  const goldenPath = join(GOLDEN_DIR, `${goldenName}.png`);
  if (process.env['UPDATE_GOLDEN'] === '1' || !existsSync(goldenPath)) {
    assert.notEqual(process.env['CI'], 'true', `golden image ${goldenPath} is missing`);
    mkdirSync(GOLDEN_DIR, { recursive: true });
    writeFileSync(goldenPath, actualBytes);
  }
  const actual = PNG.sync.read(actualBytes);
  const golden = PNG.sync.read(readFileSync(goldenPath));
  assert.deepEqual([actual.width, actual.height], [golden.width, golden.height], 'page size changed');
  const differing = pixelmatch(actual.data, golden.data, undefined, actual.width, actual.height, {
    threshold: 0.1,
  });
  const share = differing / (actual.width * actual.height);
  assert.ok(
    share <= GOLDEN_TOLERANCE,
    `${goldenName}: ${(share * 100).toFixed(2)}% of page 1 differs from ${goldenPath}`,
  );
}

for (const c of CASES) {
  const other = CASES.find((o) => o !== c);
  for (const input of documentsFor(c.policy, c.ids, c.branding)) {
    test(`${c.name} ${input.kind}: every item, nothing of another policy, inside the page, as the golden image`, async () => {
      const bytes = await renderDocument(input, c.branding);
      const again = await renderDocument(input, c.branding);
      const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
      assert.equal(sha(again), sha(bytes), 'the same content gave different bytes');
      const path = join(work, `${c.name}-${input.kind}.pdf`);
      writeFileSync(path, bytes);
      const text = squash(execFileSync('pdftotext', [path, '-'], { encoding: 'utf8', maxBuffer: 1 << 26 }));
      for (const item of requiredItems(input)) assert.ok(text.includes(squash(item)), `missing: ${item}`);
      for (const item of ownText(other ?? c))
        assert.ok(!text.includes(squash(item)), `another policy's: ${item}`);
      assert.ok(!text.includes('\u200f') && !text.includes('\u202e'), 'a bidi control was printed');

      const words = wordsOf(path);
      const outside = words.filter(
        (w) =>
          w.xMin < MARGIN_PT - 1 ||
          w.xMax > PAGE_WIDTH_PT - MARGIN_PT + 1 ||
          w.yMin < 0 ||
          w.yMax > PAGE_HEIGHT_PT - 20,
      );
      assert.deepEqual(
        outside.map((w) => w.text),
        [],
        'words outside the text area',
      );
      assert.deepEqual(overlapping(words), [], 'words printed over each other');

      const pages = Number(/Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', [path], { encoding: 'utf8' }))?.[1]);
      if (input.kind === 'ipid') assert.ok(pages <= 2, `the IPID has ${String(pages)} pages`);
      const fonts = execFileSync('pdffonts', [path], { encoding: 'utf8' });
      assert.match(
        fonts,
        /DejaVuSans\s+CID TrueType\s+Identity-H\s+yes yes yes/,
        'DejaVu Sans is not embedded',
      );
      assert.doesNotMatch(fonts, /Helvetica|Times|Courier/, 'a standard font crept in');
      comparePage1(path, `${c.name}-${input.kind.replace(/_/g, '-')}`);
    });
  }
}

test('an SVG logo is drawn as vectors and its link to a local file is not followed', async () => {
  const [certificate] = documentsFor(hostilePolicy(), HOSTILE_IDS, HOSTILE_BRANDING);
  assert.ok(certificate !== undefined);
  const path = join(work, 'svg-logo.pdf');
  writeFileSync(path, await renderDocument(certificate, HOSTILE_BRANDING));
  const images = execFileSync('pdfimages', ['-list', path], { encoding: 'utf8' }).trim().split('\n');
  assert.equal(images.length, 2, `images embedded:\n${images.join('\n')}`);
  assert.ok(!readFileSync(path, 'latin1').includes('root:'), 'a local file found its way into the PDF');
});

test('a PNG logo is embedded as an image', async () => {
  const [certificate] = documentsFor(examplePolicy(), EXAMPLE_IDS, EXAMPLE_BRANDING);
  assert.ok(certificate !== undefined);
  const path = join(work, 'png-logo.pdf');
  writeFileSync(path, await renderDocument(certificate, EXAMPLE_BRANDING));
  const images = execFileSync('pdfimages', ['-list', path], { encoding: 'utf8' }).trim().split('\n');
  assert.equal(images.length, 3, `images embedded:\n${images.join('\n')}`);
});

test('file names are readable ASCII whatever the reference holds', () => {
  const docs = documentsFor(examplePolicy(), EXAMPLE_IDS, EXAMPLE_BRANDING);
  assert.deepEqual(docs.map(documentFileName), [
    'certificate-MP-123456-2025-06-01.pdf',
    'schedule-MP-123456-2025-06-01.pdf',
    'ipid-pay-by-mile-car-2025-01-01.pdf',
    'statement-of-fact-MP-123456-2025-06-01.pdf',
    'renewal-notice-MP-123456-2025-06-01.pdf',
    'statement-MP-123456-2025-06-30.pdf',
    'credit-note-MP-123456-2025-06-01.pdf',
    'cancellation-notice-MP-123456-2025-06-01.pdf',
  ]);
  const [certificate] = docs;
  assert.ok(certificate?.kind === 'certificate');
  const odd = { ...certificate, content: { ...certificate.content, policyReference: 'Żółć/../\u202E"x<y>' } };
  assert.equal(documentFileName(odd), 'certificate-Zolc-x-y-2025-06-01.pdf');
});
