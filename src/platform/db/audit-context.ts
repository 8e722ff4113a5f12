import { AsyncLocalStorage } from 'node:async_hooks';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import { inStatementSpan } from './statement-names.ts';

/**
 * Who is acting, for the audit trail: what every transaction of an audited request tells the
 * database (`milepost.audit`), so that the audit triggers (migration 0027) record each changed row
 * with it in the same transaction as the change.
 */
export interface AuditActor {
  /** `staff:<email>` or `admin-key`. */
  readonly actor: string;
  readonly staff_id: string | null;
  readonly role: string | null;
  /** The route's operationId, e.g. `journeys.void`. */
  readonly action: string;
  /** What the request named, e.g. `journey:J-1234`. */
  readonly resource: string | null;
  /**
   * The policy the request named in its path or body, if any: the triggers record the rows that name
   * no policy of their own (an account, a device, an email) against it.
   */
  readonly policy_reference?: string | null;
  readonly company_id: string | null;
  readonly environment: string | null;
  readonly request_id: string;
  readonly source_address: string;
  /** ISO time from the service's clock. */
  readonly at: string;
}

const actors = new AsyncLocalStorage<string>();

/** Runs `work` with every statement it sends to the database attributed to `actor`. */
export function withAuditActor<T>(actor: AuditActor, work: () => Promise<T>): Promise<T> {
  return actors.run(JSON.stringify(actor), work);
}

/** True inside `withAuditActor`: such statements go through Kysely, which attributes them. */
export const auditing = (): boolean => actors.getStore() !== undefined;

const setActor = (actor: string) =>
  CompiledQuery.raw("select set_config('milepost.audit', $1, true)", [actor]);

/** Kysely's connection, with what the wrapping driver needs to know about it. */
class AttributedConnection implements DatabaseConnection {
  inTransaction = false;
  readonly inner: DatabaseConnection;
  private readonly driver: Driver;
  constructor(inner: DatabaseConnection, driver: Driver) {
    this.inner = inner;
    this.driver = driver;
  }

  /** Each statement in a span of its own (tracing on, inside a trace): see `inStatementSpan`. */
  executeQuery<R>(query: CompiledQuery, options?: object): Promise<QueryResult<R>> {
    return inStatementSpan(query, () => this.attributedQuery<R>(query, options));
  }

  private async attributedQuery<R>(query: CompiledQuery, options?: object): Promise<QueryResult<R>> {
    const actor = actors.getStore();
    if (actor === undefined || this.inTransaction) return this.inner.executeQuery<R>(query, options);
    // A statement outside a transaction is made one, so that the setting is local to it: set for
    // the session, it would outlive the request (and behind PgBouncer reach another client).
    await this.driver.beginTransaction(this.inner, {});
    try {
      await this.inner.executeQuery(setActor(actor));
      const result = await this.inner.executeQuery<R>(query, options);
      await this.driver.commitTransaction(this.inner);
      return result;
    } catch (error) {
      await this.driver.rollbackTransaction(this.inner).catch(() => undefined);
      throw error;
    }
  }

  streamQuery<R>(
    query: CompiledQuery,
    chunkSize: number,
    options?: object,
  ): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize, options);
  }
}

/** The connection this driver handed out (Kysely gives each back to the driver it came from). */
function attributed(connection: DatabaseConnection): AttributedConnection {
  if (connection instanceof AttributedConnection) return connection;
  throw new Error('a connection not acquired through the attributing driver');
}

/**
 * A driver that tells the database who is acting, only for audited requests: their transactions
 * set `milepost.audit` first thing, and their lone statements run in a transaction of their own
 * that does. Everything else passes straight through (the triggers' WHEN clause is then false).
 */
class AttributingDriver implements Driver {
  private readonly inner: Driver;
  constructor(inner: Driver) {
    this.inner = inner;
  }

  init(options?: object): Promise<void> {
    return this.inner.init(options);
  }
  async acquireConnection(options?: object): Promise<DatabaseConnection> {
    return new AttributedConnection(await this.inner.acquireConnection(options), this.inner);
  }
  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const own = attributed(connection);
    await this.inner.beginTransaction(own.inner, settings);
    own.inTransaction = true;
    const actor = actors.getStore();
    if (actor !== undefined) await own.inner.executeQuery(setActor(actor));
  }
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const own = attributed(connection);
    own.inTransaction = false;
    await this.inner.commitTransaction(own.inner);
  }
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const own = attributed(connection);
    own.inTransaction = false;
    await this.inner.rollbackTransaction(own.inner);
  }
  async savepoint(connection: DatabaseConnection, name: string, compile: never): Promise<void> {
    await this.inner.savepoint?.(attributed(connection).inner, name, compile);
  }
  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: never): Promise<void> {
    await this.inner.rollbackToSavepoint?.(attributed(connection).inner, name, compile);
  }
  async releaseSavepoint(connection: DatabaseConnection, name: string, compile: never): Promise<void> {
    await this.inner.releaseSavepoint?.(attributed(connection).inner, name, compile);
  }
  releaseConnection(connection: DatabaseConnection, options?: object): Promise<void> {
    return this.inner.releaseConnection(attributed(connection).inner, options);
  }
  destroy(options?: object): Promise<void> {
    return this.inner.destroy(options);
  }
}

/** `dialect`, with its driver attributing audited requests' statements (see AttributingDriver). */
export function attributingDialect(dialect: Dialect): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => new AttributingDriver(dialect.createDriver()),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
  };
}
