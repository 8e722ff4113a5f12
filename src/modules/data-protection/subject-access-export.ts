import { Zip, ZipDeflate } from 'fflate';
import type { Executor } from '../../schema.ts';
import { journeyFeature } from './rules/index.ts';
import { pageJourneys } from './subject-access-journey-repository.ts';
import { documentSections } from './subject-access-documents.ts';
import { claimSections } from './subject-access-claims.ts';
import { quoteSections } from './subject-access-quotes.ts';
import { listPolicies, type Subject } from './subject-access-repository.ts';
import {
  accountSections,
  correspondenceSections,
  deviceSections,
  eventSections,
  exportContext,
  journeySections,
  pages,
  paymentSections,
  policySections,
  usageSections,
  type ExportOptions,
} from './subject-access-sections.ts';

export {
  EXPORT_SECTIONS,
  WITHHELD_BODY_TEMPLATES,
  type CardDetailsLookup,
  type ExportOptions,
  type ExportSection,
} from './subject-access-sections.ts';

/** The person found, as `findSubject` answers. */
export interface FoundSubject {
  readonly subject: Subject;
  readonly account: Record<string, unknown>;
}

const NOTES = [
  'Every record Milepost holds about this policyholder, one section per kind of record; `contents` (at the end) counts each.',
  'Times are UTC (ISO 8601). Amounts ending in `_pence` are in pence; distances ending in `_metres` in metres.',
  'A journey’s `route` is a Google encoded polyline at `route_precision` decimal places; the .zip form of this export has the routes as GeoJSON.',
  'Passwords, reset codes and session tokens are stored only as one-way hashes and are not shown; bodies of emails that carried a temporary password or a reset code are withheld (`body_withheld`).',
  'Card numbers are never held by Milepost: payments show the card’s brand and last four digits where known.',
  'Each issued document (certificate, schedule, notices, statements as PDF) is in `documents`, its PDF bytes in `content_base64` (base64); `sha256` is of those bytes.',
  'Crashes reported by their devices are in `crash_events`; each claim in `claims` carries its crash file, exposures, payments, reserve movements, notes and photos (bytes in `content_base64`).',
  'Quotes asked for with any of their email addresses, and quotes bound to their policies, are in `quotes`, with what was asked (`input`, pseudonymised once a quote never bound passed its retention), the price and how it was made.',
];

type JourneyKey = { start_at: Date; journey_reference: string };

/** The sections of the document, in order: each writes its own, a page of rows at a time. */
const SECTIONS = [
  accountSections,
  policySections,
  journeySections,
  deviceSections,
  usageSections,
  paymentSections,
  correspondenceSections,
  eventSections,
  documentSections,
  claimSections,
  quoteSections,
];

/**
 * The subject access document as JSON text, written as it is read: a page of rows at a time, so a
 * person with millions of positions costs a page of memory, not the document. Sections are read one
 * after another (not in one snapshot): a row written meanwhile may or may not appear.
 */
export async function* subjectAccessJson(
  db: Executor,
  found: FoundSubject,
  generatedAt: Date,
  options: ExportOptions = {},
): AsyncGenerator<string> {
  const { subject } = found;
  const ctx = await exportContext(db, subject, options);
  yield `{\n  "generated_at": ${JSON.stringify(generatedAt.toISOString())}`;
  yield `,\n  "subject": ${JSON.stringify({
    user_reference: subject.userReference,
    company_reference: subject.companyReference,
    company_name: subject.companyName,
    environment: subject.environment,
  })}`;
  yield `,\n  "notes": ${JSON.stringify(NOTES)}`;
  yield `,\n  "account": ${JSON.stringify(found.account)}`;
  for (const section of SECTIONS) yield* section(ctx);
  yield `,\n  "contents": ${JSON.stringify(ctx.counts)}\n}\n`;
}

/** The journeys' routes as one GeoJSON FeatureCollection, written a page of journeys at a time. */
export async function* routesGeoJson(db: Executor, subject: Subject): AsyncGenerator<string> {
  const policies = await listPolicies(db, subject);
  yield '{"type":"FeatureCollection","features":[';
  let first = true;
  for (const policy of policies)
    for await (const batch of pages((after?: JourneyKey) => pageJourneys(db, policy.id, after))) {
      let text = '';
      for (const journey of batch) {
        const feature = journeyFeature(journey);
        if (feature === undefined) continue;
        text += `${first ? '\n' : ',\n'}${JSON.stringify(feature)}`;
        first = false;
      }
      if (text !== '') yield text;
    }
  yield '\n]}\n';
}

/**
 * A .zip of `export.json` (the document) and `routes.geojson`, deflated as it is read. fflate's
 * ZipDeflate is synchronous: each push hands its output to the callback before returning, so the
 * chunks are collected and yielded after each push, and the reader's pace is the database's.
 */
export async function* subjectAccessZip(
  db: Executor,
  found: FoundSubject,
  generatedAt: Date,
  options: ExportOptions = {},
): AsyncGenerator<Uint8Array> {
  const out: Uint8Array[] = [];
  let failure: Error | null = null;
  const zip = new Zip((error, chunk) => {
    if (error !== null) failure = error;
    else out.push(chunk);
  });
  const drain = function* (): Generator<Uint8Array> {
    if (failure !== null) throw failure;
    while (out.length > 0) {
      const chunk = out.shift();
      if (chunk !== undefined && chunk.length > 0) yield chunk;
    }
  };
  const encoder = new TextEncoder();
  const files: Array<[string, () => AsyncIterable<string>]> = [
    ['export.json', () => subjectAccessJson(db, found, generatedAt, options)],
    ['routes.geojson', () => routesGeoJson(db, found.subject)],
  ];
  for (const [name, text] of files) {
    const file = new ZipDeflate(name, { level: 6 });
    file.mtime = generatedAt;
    zip.add(file);
    for await (const chunk of text()) {
      file.push(encoder.encode(chunk));
      yield* drain();
    }
    file.push(new Uint8Array(0), true);
    yield* drain();
  }
  zip.end();
  yield* drain();
}
