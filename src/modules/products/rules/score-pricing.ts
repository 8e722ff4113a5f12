/**
 * What a product's `score_pricing` rule must be beyond its schema: percentages in hundredths, scores in
 * tenths (as scores are kept), each band's `min_score` once. Pure: the rule in, the problems out.
 */

/** The rule as the API receives it. */
export interface ScorePricingInput {
  readonly bands: ReadonlyArray<{ readonly min_score: number; readonly adjustment_percent: number }>;
  readonly cap_percent: number;
}

/** Whether `value` has at most `places` decimals (read from its shortest decimal form). */
function hasAtMostDecimals(value: number, places: number): boolean {
  if (!Number.isFinite(value)) return false;
  const text = String(value);
  if (/e/i.test(text)) return Number.isInteger(value);
  const dot = text.indexOf('.');
  return dot < 0 || text.length - dot - 1 <= places;
}

/** The problems of a rule (paths under `path`); none when it is sound. */
export function scorePricingProblems(
  rule: ScorePricingInput,
  path: string,
): Array<{ path: string; message: string }> {
  const problems: Array<{ path: string; message: string }> = [];
  const seen = new Set<number>();
  rule.bands.forEach((band, i) => {
    if (!hasAtMostDecimals(band.min_score, 1))
      problems.push({
        path: `${path}/bands/${String(i)}/min_score`,
        message: 'must have at most 1 decimal place',
      });
    else if (seen.has(band.min_score))
      problems.push({
        path: `${path}/bands/${String(i)}/min_score`,
        message: 'must differ from every other band’s',
      });
    seen.add(band.min_score);
    if (!hasAtMostDecimals(band.adjustment_percent, 2))
      problems.push({
        path: `${path}/bands/${String(i)}/adjustment_percent`,
        message: 'must have at most 2 decimal places',
      });
  });
  if (!hasAtMostDecimals(rule.cap_percent, 2))
    problems.push({ path: `${path}/cap_percent`, message: 'must have at most 2 decimal places' });
  return problems;
}
