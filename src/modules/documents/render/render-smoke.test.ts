import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { defaultBranding, type DocumentInput } from '../document-content.ts';
import { documentFileName, renderDocument } from './index.ts';

const certificate: DocumentInput = {
  kind: 'certificate',
  content: {
    policyReference: 'MP-123456',
    issuedAt: new Date('2025-06-01T09:00:00Z'),
    certificateNumber: 'MP-123456-1',
    registrationMark: 'AB12 CDE',
    vehicleDescription: 'Volkswagen Golf',
    policyholderName: 'Amelia Rose Clarke',
    commencesAt: new Date('2025-05-31T23:00:00Z'),
    expiresAt: new Date('2026-05-31T22:59:59Z'),
    personsEntitledToDrive: ['The policyholder'],
    limitationsAsToUse: ['Social, domestic and pleasure purposes'],
    insurerName: 'Acme Insurance plc',
  },
};

test('a certificate renders to a PDF whose text has its items, the same bytes each time', async () => {
  const first = await renderDocument(certificate, defaultBranding('Acme Motor'));
  const second = await renderDocument(certificate, defaultBranding('Acme Motor'));
  assert.deepEqual(Buffer.from(first), Buffer.from(second));
  const path = join(mkdtempSync(join(tmpdir(), 'milepost-doc-')), 'c.pdf');
  writeFileSync(path, first);
  const text = execFileSync('pdftotext', [path, '-'], { encoding: 'utf8' });
  for (const item of ['AB12 CDE', 'Amelia Rose Clarke', '00:00 on 1 June 2025', 'Acme Insurance plc'])
    assert.ok(text.includes(item), item);
});

test('file names are readable ASCII: kind, reference, date', () => {
  assert.equal(documentFileName(certificate), 'certificate-MP-123456-2025-06-01.pdf');
});
