/** The claims module's pure rules: the state table, photos by content, the crash file. */
export {
  CLAIM_STATES,
  CLAIM_TRANSITIONS,
  EXPOSURE_KINDS,
  eventOfTransition,
  isLive,
  MAX_REPORTED_IN_PROGRESS,
  mayReportClaim,
  mayTransition,
  type ClaimState,
  type ExposureKind,
} from './claim-states.ts';
export { checkPhoto, MAX_PHOTO_BYTES, PHOTO_TYPES, sniffPhotoType, type PhotoType } from './photos.ts';
export {
  coverSummary,
  DEFAULT_RESPONSE_HOURS,
  respondBy,
  traceFinalAt,
  traceWindow,
  versionInForce,
  type CoverSummary,
} from './crash-file.ts';
export { DEFAULT_CLAIM_RETENTION_YEARS } from './claim-retention.ts';
