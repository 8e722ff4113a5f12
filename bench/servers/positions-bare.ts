import Fastify from 'fastify';
import pg from 'pg';

// Baseline of bench/positions.ts: a bare Fastify route that parses the same body and runs the service's
// INSERT (the same columns, unnest arrays and ON CONFLICT DO NOTHING) on a pool of the same size. No
// validation, no device lookup, no per-position checks, no `last_seen_at` update.

/** The policy id stored with every row (no binding is looked up here). */
const BARE_POLICY_ID = '00000000-0000-4000-8000-000000000001';

interface BarePosition {
  time: number;
  lat: number;
  lon: number;
  speed_kmh?: number;
  heading?: number;
  accuracy_m?: number;
  ignition?: boolean;
  odometer_metres?: number;
}

const pool = new pg.Pool({ connectionString: process.env['DATABASE_URL'], max: 10 });
const app = Fastify({ logger: false, bodyLimit: 4 * 1024 * 1024 });
app.post('/telematics/positions', async (request, reply) => {
  const body = request.body as { device_id: string; positions: BarePosition[] };
  const ps = body.positions;
  const column = <T>(pick: (p: BarePosition) => T) => ps.map(pick);
  const { rows } = await pool.query<{ accepted: number }>(
    `with inserted as (
         insert into positions (device_id, time, policy_id, lat, lon, speed_kmh, heading, accuracy_m, ignition,
           odometer_metres, received_at)
         select $1::uuid, to_timestamp(t), $2::uuid, la, lo, s, h, a, i, o, now()
         from unnest($3::bigint[], $4::float8[], $5::float8[], $6::float4[], $7::float4[], $8::float4[],
           $9::boolean[], $10::bigint[]) as u (t, la, lo, s, h, a, i, o)
         on conflict do nothing
         returning 1
       )
       select (select count(*) from inserted)::int as accepted`,
    [
      body.device_id,
      BARE_POLICY_ID,
      column((p) => p.time),
      column((p) => p.lat),
      column((p) => p.lon),
      column((p) => p.speed_kmh ?? null),
      column((p) => p.heading ?? null),
      column((p) => p.accuracy_m ?? null),
      column((p) => p.ignition ?? null),
      column((p) => p.odometer_metres ?? null),
    ],
  );
  const accepted = rows[0]?.accepted ?? 0;
  return reply.code(202).send({ accepted, duplicates: ps.length - accepted, rejected: [] });
});
const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${address}\n`);
process.on('SIGTERM', () => {
  void (async () => {
    await app.close();
    await pool.end();
    process.exit(0);
  })();
});
