import Fastify from 'fastify';

// Baseline: the least a Fastify server can do for a GET.
const app = Fastify({ logger: false });
app.get('/healthz', async () => ({ status: 'ok' }));
const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${address}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
