import { buildApp, buildWorkerApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { createContainer } from './container.ts';
import { DataDirInUseError } from './platform/db/data-dir-lock.ts';
import {
  DataDirUnwritableError,
  EmbeddedDatabaseUnusableError,
  isDatabaseUnavailable,
  READ_ONLY_TRANSACTION,
} from './platform/db/database.ts';
import { startTracing } from './platform/tracing.ts';

/** Another process listens on PORT (an API and a worker on one host need a PORT each). */
class PortInUseError extends Error {
  constructor(port: number) {
    super(`port ${String(port)} is in use: set PORT`);
    this.name = 'PortInUseError';
  }
}

/** HOST names no address of this machine (an unknown name, another machine's address). */
class HostUnusableError extends Error {
  constructor(host: string, reason: string) {
    super(`cannot listen on HOST ${host} (${reason}): set HOST to an address of this machine`);
    this.name = 'HostUnusableError';
  }
}

/**
 * The PostgreSQL that DATABASE_URL names could not be reached, or refused this service (no such
 * database, role or password), before anything started. Named without its credentials.
 */
class DatabaseUnreachableError extends Error {
  constructor(databaseUrl: string, error: Error) {
    let where = 'its address';
    try {
      const url = new URL(databaseUrl);
      where = `${url.hostname}:${url.port === '' ? '5432' : url.port}${url.pathname}`;
    } catch {
      // loadConfig has parsed it already; the fallback only keeps a password out of the message.
    }
    // A connection refused on every address of a host name is an AggregateError without a message.
    const code = (error as { code?: unknown }).code;
    const reason = error.message === '' ? String(code) : error.message;
    const readOnly =
      code === READ_ONLY_TRANSACTION
        ? ' (it accepts no writes: a hot standby, or default_transaction_read_only is on)'
        : '';
    super(`cannot use the database at DATABASE_URL (${where}): ${reason}${readOnly}`);
    this.name = 'DatabaseUnreachableError';
  }
}

/** A getaddrinfo or bind error that says HOST is not an address this machine can listen on. */
const HOST_ERRORS = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EADDRNOTAVAIL', 'EAI_NONAME']);

/**
 * PostgreSQL's refusals that a start cannot get past: 28 (the role or its password), 3D000 (no such
 * database). A connection lost or refused, or a database that takes no writes, counts too
 * (isDatabaseUnavailable).
 */
function isDatabaseUnusable(error: unknown): error is Error {
  const code = (error as { code?: unknown } | undefined)?.code;
  return (
    isDatabaseUnavailable(error) ||
    (error instanceof Error && typeof code === 'string' && (code.startsWith('28') || code === '3D000'))
  );
}

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
  // Before anything that makes spans: off (no OTEL_EXPORTER_OTLP_ENDPOINT), it loads nothing.
  const tracing = await startTracing({
    endpoint: config.otelExporterEndpoint,
    serviceName: config.otelServiceName,
    role: config.role,
  });
  let container;
  try {
    container = await createContainer(config);
  } catch (error) {
    if (config.databaseUrl !== undefined && isDatabaseUnusable(error))
      throw new DatabaseUnreachableError(config.databaseUrl, error);
    throw error;
  }
  const { logger } = container;
  // Every process serves /healthz, /readyz and /metrics on PORT; a worker serves nothing else.
  const app = config.role === 'worker' ? await buildWorkerApp(container) : await buildApp(container);
  let address: string;
  try {
    address = await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    // Nothing has started yet: the database (and the embedded one's lock) is let go before exiting.
    await app.close();
    await container.close();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new PortInUseError(config.port);
    if (code !== undefined && HOST_ERRORS.has(code)) throw new HostUnusableError(config.host, code);
    throw error;
  }
  // The sandbox gateway calls the built-in processor sandbox, which only the API side serves.
  if (config.role !== 'worker') container.setListeningUrl(address);
  await container.start();
  logger.info({ role: config.role, database: container.database.kind, url: address }, 'milepost started');

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
    // NOTE: requests in flight get SHUTDOWN_TIMEOUT_MS, as the worker loops do and at the same time;
    // then their connections are cut. A request waiting on a processor that did not answer (up to a
    // minute) used to hold the process until its forced exit, before any loop had stopped, so the
    // jobs it ran were never handed back to another worker.
    const cutOff = setTimeout(() => {
      logger.warn('requests still in flight at SHUTDOWN_TIMEOUT_MS: closing their connections');
      app.server.closeAllConnections();
    }, config.shutdownTimeoutMs);
    try {
      await Promise.all([app.close(), container.stopWorkers()]);
      clearTimeout(cutOff);
      await container.close();
      // The spans of the last requests and jobs are sent before the process exits.
      await tracing.shutdown();
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
  if (error instanceof PortInUseError) {
    process.stderr.write(`milepost: ${error.message}\n`);
    process.exit(78); // EX_CONFIG: PORT names a port another process holds
  }
  if (error instanceof HostUnusableError) {
    process.stderr.write(`milepost: ${error.message}\n`);
    process.exit(78); // EX_CONFIG
  }
  if (error instanceof DatabaseUnreachableError) {
    process.stderr.write(`milepost: ${error.message}\n`);
    process.exit(69); // EX_UNAVAILABLE: a supervisor starts it again once the database answers
  }
  if (error instanceof EmbeddedDatabaseUnusableError) {
    process.stderr.write(`milepost: ${error.message}\n`);
    process.exit(1);
  }
  if (error instanceof DataDirUnwritableError) {
    process.stderr.write(`milepost: ${error.message}\n`);
    process.exit(73); // EX_CANTCREAT
  }
  if (error instanceof DataDirInUseError) {
    process.stderr.write(`milepost: ${error.message}\n`);
    process.exit(75); // EX_TEMPFAIL: try again once the other process has stopped
  }
  process.stderr.write(
    `milepost: failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
