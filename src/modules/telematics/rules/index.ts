/** The telematics module's pure rules, for other modules' rules. */
export {
  crashThresholds,
  detectCrashes,
  DEFAULT_CRASH_THRESHOLDS,
  type CrashDetectionRule,
  type CrashFix,
  type CrashThresholds,
  type DetectedCrash,
} from './crash-detection.ts';
