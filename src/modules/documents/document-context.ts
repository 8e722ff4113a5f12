import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Executor } from '../../schema.ts';
import type { Clock } from '../../platform/clock.ts';
import type { NotificationService } from '../notifications/index.ts';
import type { DocumentKind } from './rules/index.ts';

/** What a document is of: the policy, and the version, statement, payment or journey it belongs to. */
export interface DocumentSubject {
  readonly policyId: string;
  readonly companyId: string;
  readonly environment: string;
  readonly kind: DocumentKind;
  readonly policyVersionId: string | null;
  readonly statementId: string | null;
  readonly paymentId: string | null;
  readonly journeyId: string | null;
  /** When it is issued: the time the document states and its template is chosen for. */
  readonly issuedAt: Date;
}

/** A document rendered: its PDF bytes, the file name it is served under, and the template version used. */
export interface RenderedDocument {
  readonly bytes: Uint8Array;
  readonly fileName: string;
  readonly templateVersion: string;
}

/**
 * Thrown by a renderer when what a document was owed for no longer stands: a renewal notice of terms
 * stored for automatic renewal whose terms are gone (the policy cancelled, or automatic renewal turned
 * off, before the notice was made). The document is owed no more; retrying could never make it.
 */
export class DocumentWithdrawn extends Error {}

/** Renders a document of a subject from what the database holds now (the content's owners, the template). */
export type RenderSubject = (db: Executor, subject: DocumentSubject) => Promise<RenderedDocument>;

export interface DocumentServiceDeps {
  readonly db: Executor;
  readonly clock: Clock;
  readonly logger: FastifyBaseLogger;
  readonly notifications: NotificationService;
  readonly render: RenderSubject;
  /** Documents the worker makes at once (default 1): with render threads, more than there are threads. */
  readonly makeConcurrency?: number;
  /** Ends what `render` runs on (its threads), when the service stops. */
  readonly closeRenderer?: () => Promise<void>;
  /** Milliseconds between the worker's passes over documents owed (DOCUMENT_POLL_INTERVAL_MS). */
  readonly pollIntervalMs?: number;
}

/** The lower-case hex SHA-256 of a document's bytes. */
export const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
