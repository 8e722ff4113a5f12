/**
 * The documents module's pure rules: which documents an event owes, what a certificate states as the
 * limitations as to use, and which erasure keeps.
 */
export { limitationsAsToUse } from './classes-of-use.ts';
export {
  certificateChanged,
  DOCUMENT_EVENT_TYPES,
  DOCUMENT_KINDS,
  documentsOwed,
  type DocumentKind,
  type OwedDocument,
  type OwedFacts,
  type QueuedEvent,
} from './documents-owed.ts';
export {
  KEEP_AFTER_TERM_END_YEARS,
  KEPT_REASON,
  keepUntil,
  retentionOnErasure,
  type RetentionDecision,
} from './document-retention.ts';
