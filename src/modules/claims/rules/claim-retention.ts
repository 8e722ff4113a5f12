/**
 * NOTE: how long an ended claim's personal data is kept. Six years after the claim ended, by default: the
 * Limitation Act 1980 s.5 gives six years to bring a claim in contract (a dispute over the claim's
 * settlement), and the FCA's record-keeping rules (SYSC 9.1) ask that records be kept long enough to show
 * compliance; after that, UK GDPR Art. 5(1)(e) (storage limitation) asks that the person be no longer
 * identifiable. Each company may set its own period (`claim_settings.retention_years`).
 */
export const DEFAULT_CLAIM_RETENTION_YEARS = 6;
