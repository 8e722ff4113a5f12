import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { fixedClock } from '../../../src/platform/clock.ts';
import { createCompany, createTestApp, signedInPolicyholder, type TestApp } from '../../support/app.ts';
import { make } from '../../support/factories.ts';
import { examplePolicyInput } from '../../support/policy-arbitraries.ts';
import {
  bearerOf,
  caller,
  claimsOf,
  claimsPass,
  crashBody,
  JPEG,
  PDF,
  PNG,
  positionsAround,
  reportClaim,
  type Claim,
  type Headers,
  type Problem,
} from './claims-support.ts';

// First notice of loss from crash events over HTTP, the policyholder's answers, reports and photos.
// The example policy's term: 2025-06-01 to 2026-05-31 (London).
const clock = fixedClock('2025-07-20T12:00:00Z');
let t: TestApp;
let acme: Awaited<ReturnType<typeof createCompany>>;
let rival: Awaited<ReturnType<typeof createCompany>>;
const call = caller(() => t);

const input = (email: string) => ({
  ...examplePolicyInput(),
  proposer: { ...examplePolicyInput().proposer, email },
});
let holder: Awaited<ReturnType<typeof signedInPolicyholder>>;
let stranger: Awaited<ReturnType<typeof signedInPolicyholder>>;
let deviceId: string;
let bearer: Headers;
let strangerHeaders: Headers;
const nowS = () => Math.floor(clock.now().getTime() / 1000);

before(async () => {
  t = await createTestApp({ overrides: { clock } });
  acme = await createCompany(t.app, 'Acme Insurance');
  rival = await createCompany(t.app, 'Rival Mutual');
  holder = await signedInPolicyholder(
    t,
    acme.sandbox,
    'crash-holder@example.com',
    input('crash-holder@example.com'),
  );
  stranger = await signedInPolicyholder(
    t,
    acme.sandbox,
    'crash-stranger@example.com',
    input('crash-stranger@example.com'),
  );
  deviceId = (await make.device(t.app, acme, holder.policyReference)).device_id;
  // The device reports from its binding on: an hour of driving later, a crash.
  clock.advance(3_600_000);
});
beforeEach(async () => {
  bearer = await bearerOf(t, acme.client_id, holder);
  strangerHeaders = await bearerOf(t, acme.client_id, stranger);
});
after(() => t.close());

async function crash(timeS: number, extra: object = {}, headers: Headers = acme.sandbox) {
  return call('POST', '/telematics/events', headers, crashBody(deviceId, timeS, extra));
}

describe('a crash over HTTP opens a draft claim', () => {
  let claim: Claim;
  let crashS: number;

  test('the crash is stored once; a second report within 2 minutes is the same crash', async () => {
    crashS = nowS() - 5;
    const positions = await call('POST', '/telematics/positions', acme.sandbox, {
      device_id: deviceId,
      positions: positionsAround(crashS - 60, 90).filter((p) => p.time <= nowS()),
    });
    assert.equal(positions.statusCode, 202, positions.body);
    const first = await crash(crashS, { delta_v_kmh: 31, airbag_deployed: true });
    assert.equal(first.statusCode, 201, first.body);
    const stored = first.json<{ crash_reference: string; duplicate: boolean; policy_reference: string }>();
    assert.equal(stored.duplicate, false);
    assert.equal(stored.policy_reference, holder.policyReference);
    const again = await crash(crashS + 90);
    assert.equal(again.statusCode, 200, again.body);
    assert.deepEqual(again.json(), { ...stored, duplicate: true });
    const before = await crash(crashS - 100);
    assert.equal(before.statusCode, 200, before.body);
    assert.equal(before.json<{ crash_reference: string }>().crash_reference, stored.crash_reference);
  });

  test('the worker opens one draft with the crash file, the cover in force, the place; the policyholder is emailed', async () => {
    assert.equal(
      (await claimsOf(t, bearer, holder.policyReference)).length,
      0,
      'nothing before the worker runs',
    );
    await claimsPass(t, clock);
    await claimsPass(t, clock);
    const claims = await claimsOf(t, bearer, holder.policyReference);
    assert.equal(claims.length, 1);
    claim = claims[0]!;
    assert.equal(claim.state, 'draft');
    assert.equal(claim.source, 'crash');
    assert.deepEqual(claim.next_states, ['open', 'withdrawn', 'rejected']);
    assert.equal(claim.speed_kmh, 48);
    assert.equal(claim.place_name, 'London');
    assert.ok(claim.postcode !== null);
    const { cover, crash_file: file } = claim;
    assert.ok(cover !== null && file !== null);
    assert.equal(cover.in_force, true);
    assert.equal(cover.vehicle.reg, examplePolicyInput().vehicle.reg);
    assert.ok(cover.drivers.length >= 1);
    assert.equal(file.airbag_deployed, true);
    assert.equal(file.delta_v_kmh, 31);
    assert.equal(file.complete, false, 'the 30 s after the crash have not passed');
    assert.ok(file.positions.length > 50);
    assert.ok(file.positions.every((p) => p.time >= crashS - 60 && p.time <= crashS + 30));
    assert.equal(claim.notes, undefined, 'no staff notes for the policyholder');
    const emails = await t.container.services.notifications.emailsTo('crash-holder@example.com');
    const email = emails.find((e) => e.subject === 'Have you had an accident?');
    assert.ok(email, 'the policyholder is emailed');
    assert.match(email.text ?? '', new RegExp(claim.claim_reference));
    const opened = await t.container.database.db
      .selectFrom('events')
      .select('data')
      .where('type', '=', 'claim.opened')
      .execute();
    assert.equal(opened.length, 1);
  });

  test('positions sent after the crash complete its file once the 30 s (and a grace) have passed', async () => {
    clock.advance(60_000);
    const late = await call('POST', '/telematics/positions', acme.sandbox, {
      device_id: deviceId,
      positions: positionsAround(crashS - 60, 90).filter((p) => p.time > crashS - 5),
    });
    assert.equal(late.statusCode, 202, late.body);
    await claimsPass(t, clock);
    const [after] = await claimsOf(t, bearer, holder.policyReference);
    assert.equal(after?.crash_file?.complete, true);
    assert.equal(after.crash_file.positions.length, 90, 'every position of [crash − 60 s, crash + 30 s]');
    const owed = await t.container.database.db.selectFrom('claim_crashes_owed').selectAll().execute();
    assert.equal(owed.length, 0);
  });

  test('another policyholder or company reaches neither the claim nor the device', async () => {
    for (const url of [
      `/policys/${holder.policyReference}/claims`,
      `/policys/${holder.policyReference}/claims/${claim.claim_reference}`,
    ]) {
      assert.equal((await call('GET', url, strangerHeaders)).statusCode, 404, url);
      assert.equal((await call('GET', url, rival.sandbox)).statusCode, 404, url);
    }
    const theirs = await call(
      'GET',
      `/policys/${stranger.policyReference}/claims/${claim.claim_reference}`,
      strangerHeaders,
    );
    assert.equal(theirs.statusCode, 404, 'a claim of another policy is not found under one’s own');
    assert.equal((await call('GET', `/claims/${claim.claim_reference}`, rival.sandbox)).statusCode, 404);
    assert.equal((await crash(nowS(), {}, rival.sandbox)).statusCode, 404, 'another company’s device');
    const confirm = await call(
      'POST',
      `/policys/${holder.policyReference}/claims/${claim.claim_reference}/confirm`,
      strangerHeaders,
      { injuries: false, other_vehicles: true, police_attended: false },
    );
    assert.equal(confirm.statusCode, 404);
  });

  test('"I’ve had an accident": the draft becomes open with the answers; only once', async () => {
    const url = `/policys/${holder.policyReference}/claims/${claim.claim_reference}/confirm`;
    const answers = {
      injuries: false,
      other_vehicles: true,
      police_attended: false,
      other_parties: 'Blue van AB12 CDE',
    };
    const bad = await call('POST', url, bearer, { ...answers, injuries: 'no' });
    assert.equal(bad.statusCode, 422);
    assert.ok(bad.json<Problem>().errors?.some((e) => e.path === '/body/injuries'));
    const confirmed = await call('POST', url, bearer, answers);
    assert.equal(confirmed.statusCode, 200, confirmed.body);
    const open = confirmed.json<Claim>();
    assert.equal(open.state, 'open');
    assert.equal(open.other_vehicles, true);
    assert.equal(open.other_parties, 'Blue van AB12 CDE');
    assert.ok(open.opened_at !== null);
    const twice = await call('POST', url, bearer, answers);
    assert.equal(twice.statusCode, 409, twice.body);
    const cancel = await call(
      'POST',
      `/policys/${holder.policyReference}/claims/${claim.claim_reference}/cancel`,
      bearer,
    );
    assert.equal(cancel.statusCode, 409, 'an open claim is no false alarm');
  });
});

describe('crash events are validated', () => {
  test('422 names the field; unknown device 404; a time before the binding or in the future 422', async () => {
    const missing = await call('POST', '/telematics/events', acme.sandbox, {
      device_id: deviceId,
      type: 'crash',
      time: nowS(),
      lat: 51.5,
      lon: -0.1,
      speed_kmh: 30,
    });
    assert.equal(missing.statusCode, 422);
    assert.ok(
      missing.json<Problem>().errors?.some((e) => e.path === '/body/peak_acceleration_g'),
      missing.body,
    );
    const cases: Array<[object, string]> = [
      [{ type: 'brake' }, '/body/type'],
      [{ lat: 91 }, '/body/lat'],
      [{ speed_kmh: -1 }, '/body/speed_kmh'],
      [{ time: 'yesterday' }, '/body/time'],
      [{ colour: 'red' }, '/body'],
      [{ time: nowS() - 86_400 * 365 }, '/body/time'],
      [{ time: nowS() + 3600 }, '/body/time'],
    ];
    for (const [extra, path] of cases) {
      const r = await crash(nowS(), extra);
      assert.equal(r.statusCode, 422, `${JSON.stringify(extra)}: ${r.body}`);
      assert.ok(
        r.json<Problem>().errors?.some((e) => e.path.startsWith(path)),
        `${path}: ${r.body}`,
      );
    }
    const unknown = await call(
      'POST',
      '/telematics/events',
      acme.sandbox,
      crashBody('no-such-device', nowS()),
    );
    assert.equal(unknown.statusCode, 404);
    const noCredentials = await call(
      'POST',
      '/telematics/events',
      { client_id: acme.client_id },
      crashBody(deviceId, nowS()),
    );
    assert.equal(noCredentials.statusCode, 401);
  });
});

describe('false alarms and unanswered drafts', () => {
  test('"false alarm" withdraws the draft', async () => {
    clock.advance(10 * 60_000);
    assert.equal((await crash(nowS())).statusCode, 201);
    await claimsPass(t, clock);
    const draft = (await claimsOf(t, bearer, holder.policyReference)).find((c) => c.state === 'draft');
    assert.ok(draft);
    const r = await call(
      'POST',
      `/policys/${holder.policyReference}/claims/${draft.claim_reference}/cancel`,
      bearer,
    );
    assert.equal(r.statusCode, 200, r.body);
    assert.equal(r.json<Claim>().state, 'withdrawn');
  });

  test('a draft unanswered past the company’s time goes to staff', async () => {
    const settings = await call('PUT', '/claims-settings', acme.sandbox, { response_hours: 2 });
    assert.equal(settings.statusCode, 200, settings.body);
    assert.equal(settings.json<{ response_hours: number }>().response_hours, 2);
    assert.equal(
      (await call('PUT', '/claims-settings', acme.sandbox, { response_hours: 0 })).statusCode,
      422,
    );
    clock.advance(10 * 60_000);
    assert.equal((await crash(nowS())).statusCode, 201);
    await claimsPass(t, clock);
    const draft = (await claimsOf(t, bearer, holder.policyReference)).find((c) => c.state === 'draft');
    assert.ok(draft?.respond_by);
    assert.equal(Date.parse(draft.respond_by) - clock.now().getTime(), 2 * 3_600_000);
    clock.advance(2 * 3_600_000 + 1000);
    const pass = await claimsPass(t, clock);
    assert.equal(pass.referred, 1);
    const queue = await call('GET', '/claims?referred=true', acme.sandbox);
    assert.equal(queue.statusCode, 200, queue.body);
    const referred = queue.json<{ claims: Claim[] }>().claims;
    assert.deepEqual(
      referred.map((c) => c.claim_reference),
      [draft.claim_reference],
    );
    assert.ok(referred[0]?.referred_at !== null);
    assert.equal((await claimsPass(t, clock)).referred, 0, 'referred once');
  });
});

describe('a claim reported by the policyholder, and its photos', () => {
  let claim: Claim;
  test('reported with no crash: open at once with the cover then in force; bad input 422', async () => {
    claim = await reportClaim(t, bearer, holder.policyReference, nowS() - 3600);
    assert.equal(claim.state, 'open');
    assert.equal(claim.source, 'reported');
    assert.equal(claim.crash_file, null);
    assert.equal(claim.cover?.in_force, true);
    const future = await call('POST', `/policys/${holder.policyReference}/claims`, bearer, {
      occurred_at: nowS() + 3600,
      lat: 51.5,
      lon: -0.1,
      description: 'x',
      injuries: false,
      other_vehicles: false,
      police_attended: false,
    });
    assert.equal(future.statusCode, 422);
    const missing = await call('POST', `/policys/${holder.policyReference}/claims`, bearer, {
      occurred_at: nowS(),
    });
    assert.equal(missing.statusCode, 422);
    const theirs = await call('POST', `/policys/${holder.policyReference}/claims`, strangerHeaders, {
      occurred_at: nowS() - 60,
      lat: 51.5,
      lon: -0.1,
      description: 'x',
      injuries: false,
      other_vehicles: false,
      police_attended: false,
    });
    assert.equal(theirs.statusCode, 404);
  });

  const upload = (body: Buffer, contentType: string, headers: Headers = bearer) =>
    t.app.inject({
      method: 'POST',
      url: `/policys/${holder.policyReference}/claims/${claim.claim_reference}/photos`,
      headers: { ...headers, 'content-type': contentType },
      payload: body,
    });

  test('photos are stored with their type judged by content; too big or not an image 422', async () => {
    const jpeg = await upload(JPEG, 'image/jpeg');
    assert.equal(jpeg.statusCode, 201, jpeg.body);
    const png = await upload(PNG, 'application/octet-stream');
    assert.equal(png.statusCode, 201, png.body);
    const photos = png.json<Claim>().photos;
    // The test's clock stands still, so both photos share an upload time: compare the types as a set.
    assert.deepEqual(photos.map((p) => p.content_type).sort(), ['image/jpeg', 'image/png']);
    const pdf = await upload(PDF, 'image/jpeg');
    assert.equal(pdf.statusCode, 422, pdf.body);
    const tooBig = await upload(Buffer.concat([JPEG, Buffer.alloc(10 * 1024 * 1024)]), 'image/jpeg');
    assert.equal(tooBig.statusCode, 422, tooBig.body.slice(0, 300));
    assert.match(tooBig.json<Problem>().detail, /10 MiB/);
    const empty = await upload(Buffer.alloc(0), 'image/png');
    assert.equal(empty.statusCode, 422, empty.body);
    assert.equal((await upload(JPEG, 'image/jpeg', strangerHeaders)).statusCode, 404);
    assert.equal((await upload(JPEG, 'image/jpeg', rival.sandbox)).statusCode, 404);
    const read = await t.app.inject({
      method: 'GET',
      url: `/policys/${holder.policyReference}/claims/${claim.claim_reference}/photos/${photos.find((p) => p.content_type === 'image/png')!.photo_id}`,
      headers: bearer,
    });
    assert.equal(read.statusCode, 200);
    assert.equal(read.headers['content-type'], 'image/png');
    assert.deepEqual(read.rawPayload, PNG);
  });
});

describe('a policy’s reported claims in progress are bounded', () => {
  test('a policyholder has 10 at once; the 11th answers 409 and stores nothing, until one has ended', async () => {
    const email = 'many-claims@example.com';
    const reporter = await signedInPolicyholder(t, acme.sandbox, email, input(email));
    const headers = await bearerOf(t, acme.client_id, reporter);
    const report = (as: Headers = headers) =>
      call('POST', `/policys/${reporter.policyReference}/claims`, as, {
        occurred_at: nowS() - 3600,
        lat: 51.5155,
        lon: -0.1419,
        description: 'Scraped a wall.',
        injuries: false,
        other_vehicles: false,
        police_attended: false,
      });
    // Reported at once, they are counted in turn.
    const answers = await Promise.all(Array.from({ length: 11 }, () => report()));
    const statuses = answers.map((a) => a.statusCode).sort();
    assert.deepEqual(statuses, [...Array<number>(10).fill(201), 409]);
    const refused = answers.find((a) => a.statusCode === 409)!;
    assert.match(refused.headers['content-type'] ?? '', /^application\/problem\+json/);
    assert.match(refused.json<Problem>().detail, /at most 10 reported claims in progress/);
    const claims = await claimsOf(t, headers, reporter.policyReference);
    assert.equal(claims.length, 10);
    assert.equal((await report()).statusCode, 409);

    const ended = await call('POST', `/claims/${claims[0]!.claim_reference}/transitions`, acme.sandbox, {
      state: 'withdrawn',
    });
    assert.equal(ended.statusCode, 200, ended.body);
    assert.equal((await report()).statusCode, 201);
    assert.equal((await report()).statusCode, 409);
    // The company's integration reports for the policy without that bound.
    assert.equal((await report(acme.sandbox)).statusCode, 201);
  });
});

describe('a report sent again under its report_reference', () => {
  test('opens one claim: sent twice at once, 201 and 200 with the same claim; another report 409', async () => {
    const email = 'report-again@example.com';
    const reporter = await signedInPolicyholder(t, acme.sandbox, email, input(email));
    const headers = await bearerOf(t, acme.client_id, reporter);
    const body = {
      occurred_at: nowS() - 1800,
      lat: 51.5155,
      lon: -0.1419,
      description: 'Reversed into a bollard.',
      injuries: false,
      other_vehicles: false,
      police_attended: false,
      report_reference: 'app-0f1e2d3c4b5a6978',
    };
    const report = (sent: object) =>
      call('POST', `/policys/${reporter.policyReference}/claims`, headers, sent);
    const both = await Promise.all([report(body), report(body)]);
    assert.deepEqual(both.map((a) => a.statusCode).sort(), [200, 201], both.map((a) => a.body).join('\n'));
    const [first, second] = both.map((a) => a.json<Claim>());
    assert.equal(first!.claim_reference, second!.claim_reference);
    assert.equal((await claimsOf(t, headers, reporter.policyReference)).length, 1);

    const other = await report({ ...body, description: 'Reversed into a wall.' });
    assert.equal(other.statusCode, 409, other.body);
    assert.match(other.json<Problem>().detail, /report_reference app-0f1e2d3c4b5a6978 names another report/);
    // A new reference is a new report; the same reference on another policy is that policy's own.
    const next = await report({ ...body, report_reference: 'app-1' });
    assert.equal(next.statusCode, 201, next.body);
    assert.notEqual(next.json<Claim>().claim_reference, first!.claim_reference);
    assert.equal((await claimsOf(t, headers, reporter.policyReference)).length, 2);
    const elsewhere = await call('POST', `/policys/${holder.policyReference}/claims`, bearer, body);
    assert.equal(elsewhere.statusCode, 201, elsewhere.body);
    const spaced = await report({ ...body, report_reference: 'has space' });
    assert.equal(spaced.statusCode, 422, spaced.body);
  });
});
