import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestApp, type TestApp } from '../../support/app.ts';
import { createStaff, signInStaff, type SignedInStaff } from './staff-support.ts';

/** GET /admin/claim-handlers: whom a claim may be assigned to, readable by every staff role. */

let t: TestApp;
let viewer: SignedInStaff;

before(async () => {
  t = await createTestApp();
  viewer = await signInStaff(t, 'viewer@insurer.example', 'viewer');
});
after(() => t.close());

test('lists the active claims handlers and admins only, by email', async () => {
  const handler = await createStaff(t, 'handler@insurer.example', 'claims');
  const admin = await createStaff(t, 'admin@insurer.example', 'admin');
  await createStaff(t, 'ops@insurer.example', 'operations');
  const gone = await createStaff(t, 'gone@insurer.example', 'claims');
  const deactivated = await t.app.inject({
    method: 'PATCH',
    url: `/admin/staff/${gone.staff_id}`,
    headers: t.adminHeaders,
    payload: { active: false },
  });
  assert.equal(deactivated.statusCode, 200);

  const listed = await t.app.inject({ url: '/admin/claim-handlers', headers: { cookie: viewer.cookie } });
  assert.equal(listed.statusCode, 200, listed.body);
  assert.deepEqual(listed.json<{ data: unknown[] }>().data, [
    { staff_id: admin.staff_id, email: 'admin@insurer.example', role: 'admin' },
    { staff_id: handler.staff_id, email: 'handler@insurer.example', role: 'claims' },
  ]);
});

test('answers 401 without a staff session or the admin key', async () => {
  const answer = await t.app.inject({ url: '/admin/claim-handlers' });
  assert.equal(answer.statusCode, 401);
});
