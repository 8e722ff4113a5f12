import { load, report, startServer } from './support.ts';

// GET /healthz through the full stack against a bare Fastify hello-world, in the same run.
const duration = Number(process.env['BENCH_SECONDS'] ?? 8);
const bare = await startServer('servers/bare-hello.ts');
await load({ url: `${bare.url}/healthz`, duration: 3 }); // warm-up
const baseline = await load({ url: `${bare.url}/healthz`, duration });
await bare.stop();

const ours = await startServer('servers/milepost.ts');
await load({ url: `${ours.url}/healthz`, duration: 3 });
const result = await load({ url: `${ours.url}/healthz`, duration });
await ours.stop();

report('healthz', result, baseline, 0.9);
