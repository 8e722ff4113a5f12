import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { createContainer } from './container.ts';
import { DataDirInUseError } from './platform/db/data-dir-lock.ts';

/** Starts the service: HTTP API and worker in one process, or one side with ROLE=api|worker. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`milepost: ${error.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }
  const container = await createContainer(config);
  const { logger } = container;
  let app: FastifyInstance | undefined;
  if (config.role !== 'worker') {
    app = await buildApp(container);
    const address = await app.listen({ port: config.port, host: config.host });
    container.setListeningUrl(address);
  }
  await container.start();
  logger.info(
    {
      role: config.role,
      database: container.database.kind,
      ...(app === undefined ? {} : { url: `http://${config.host}:${config.port}` }),
    },
    'milepost started',
  );

  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: no new requests; finishing requests and jobs in flight');
    const timer = setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs + 5_000);
    timer.unref();
    try {
      await app?.close();
      await container.close();
      logger.info('stopped');
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'error while shutting down');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  if (error instanceof DataDirInUseError) {
    process.stderr.write(`milepost: ${error.message}\n`);
    process.exit(75); // EX_TEMPFAIL: try again once the other process has stopped
  }
  process.stderr.write(
    `milepost: failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
