/** The usage module's pure rules: a journey's London periods and which usage alerts fall due. */
export {
  dueAlerts,
  londonPeriodsOf,
  yearCountedMetres,
  type AlertLimits,
  type UsageAlertKind,
  type UsageUnit,
} from './usage-alerts.ts';
