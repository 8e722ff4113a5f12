export {
  decideErasure,
  ERASED_NAME,
  erasedEmail,
  erasedUsername,
  needleMatcher,
  personalValues,
  pseudonymiseSnapshot,
  scrubJson,
  scrubText,
  UNUSABLE_PASSWORD_HASH,
  type ErasureDecision,
} from './erasure.ts';
export { coarsenedRoute, routeRetentionCutoff } from './retention.ts';
export { journeyFeature, type LineStringFeature, type RoutedJourney } from './subject-access-geojson.ts';
