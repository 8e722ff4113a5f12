import Fastify from 'fastify';
import pg from 'pg';
import { decide, rate, type QuoteInput, type RateBookContent } from '../../src/modules/rating/rules/index.ts';

// The baseline of the quotes benchmark: a bare Fastify route that reads the same rate tables (the
// product's rate book and its version in force, as Milepost does) from the same database and rates the
// quote with the same pure rules, with no authentication, validation, storage or breakdown view.
const pool = new pg.Pool({ connectionString: process.env['DATABASE_URL'], max: 10 });
const app = Fastify({ logger: false });

app.post('/quotes', async (request) => {
  const input = request.body as QuoteInput;
  const startAt = new Date(input.policy.start_date * 1000);
  const book = await pool.query<{ id: string }>(
    `select b.id from rate_books b join products p on p.id = b.product_id
     where p.product_reference = $1 limit 1`,
    [input.policy.product_reference],
  );
  const version = await pool.query<{ content: RateBookContent }>(
    `select content from rate_book_versions
     where rate_book_id = $1 and status = 'approved' and effective_from <= $2
     order by effective_from desc limit 1`,
    [book.rows[0]?.id, startAt],
  );
  const content = version.rows[0]?.content;
  if (content === undefined) throw new Error('no rate book');
  const on = startAt.toISOString().slice(0, 10);
  const rated = rate(content, input, on);
  if (!rated.ok) throw new Error('unrated');
  return { ...rated.value, decision: decide(content, input, on) };
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
