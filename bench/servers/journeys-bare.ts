import Fastify from 'fastify';
import pg from 'pg';

// Baseline: a bare Fastify route that parses the same body and does the same single INSERT (one row of
// the journeys table's shape, into a copy of it with the same indexes and constraints) on a pool of the
// same size, and answers with the stored row. No validation, no decoding, no rating, no event.
const pool = new pg.Pool({ connectionString: process.env['DATABASE_URL'], max: 10 });
const COMPANY_AND_VERSION_ID = '00000000-0000-4000-8000-000000000001';

interface Body {
  route: string;
  start_time: number;
  end_time: number;
  /** The bench sends a uuid here, so that it stands for the policy id too. */
  policy_reference: string;
  provider_reference?: string;
}

const app = Fastify({ logger: false });
app.post('/journeys', async (request, reply) => {
  const body = request.body as Body;
  const { rows } = await pool.query(
    `insert into bare_journeys (
       company_id, environment, policy_id, policy_reference, policy_version_id, provider_reference,
       route, route_precision, point_count, start_at, end_at, distance_metres, distance_unit,
       usage_rate, usage_premium_pence, start_lat, start_lng, end_lat, end_lng,
       start_name, start_postcode, end_name, end_postcode, created_at)
     values ($1, 'sandbox', $2, $3, $1, $4, $5, 5, 1000, to_timestamp($6), to_timestamp($7), 30000, 'mile',
       0.045, 84, 51.5, -0.1, 51.6, -0.2, 'London', 'SW1A 1AA', 'London', 'WC2R 0RL', now())
     returning *`,
    [
      COMPANY_AND_VERSION_ID,
      body.policy_reference,
      body.policy_reference,
      body.provider_reference ?? null,
      body.route,
      body.start_time,
      body.end_time,
    ],
  );
  return reply.code(201).send(rows[0]);
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
