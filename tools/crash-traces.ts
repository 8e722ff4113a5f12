/**
 * Writes the committed crash-detection test set, test/fixtures/crash-traces.txt.gz: the crash traces, then
 * the ordinary trips, one encoded trace a line (test/support/crash-traces.ts). Run `npm run fixtures:crashes`.
 */
import { writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import {
  CRASH_TRACE_COUNT,
  encodeTrace,
  makeTrace,
  ORDINARY_TRIP_COUNT,
} from '../test/support/crash-traces.ts';

const lines: string[] = [];
for (let i = 0; i < CRASH_TRACE_COUNT; i++) lines.push(encodeTrace(makeTrace('crash', i)));
for (let i = 0; i < ORDINARY_TRIP_COUNT; i++) lines.push(encodeTrace(makeTrace('ordinary', i)));
const path = new URL('../test/fixtures/crash-traces.txt.gz', import.meta.url);
// mtime 0 in the header comes from gzipSync itself, so the same traces give the same bytes.
const bytes = gzipSync(lines.join('\n') + '\n', { level: 9 });
writeFileSync(path, bytes);
console.log(`${lines.length} traces, ${bytes.length} bytes`);
