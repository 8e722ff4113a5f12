/** The documents module's pure rules: which documents an event owes, and which erasure keeps. */
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
