/**
 * The no-claims step-back: how many years of no-claims discount a policyholder keeps at renewal after an
 * at-fault claim settled in the term. Pure: the table and the years in, the years out.
 *
 * A product's table (`no_claims_step_back`) maps years held to years kept after one at-fault claim, e.g.
 * `{ "1": 0, "2": 0, "3": 1, "4": 2, "5": 3 }`: the row of the greatest key not above the years held
 * applies (so `"5"` serves 5 years or more), and years below every key fall to 0. Each further at-fault
 * claim of the term steps back again from where the last left off. A claim never adds years: a table whose
 * row keeps more years than its key is refused.
 *
 * NOTE: the default is the step-back most UK motor insurers publish for an unprotected no-claims discount,
 * two years back for each at-fault claim (5 or more → 3, 4 → 2, 3 → 1, 2 or fewer → 0); a no-claims bonus
 * is the insurer's contract, not a statutory scale, so each product may set its own.
 */

/** Years held → years kept after one at-fault claim; keys are whole years as text. */
export type NoClaimsStepBack = Readonly<Record<string, number>>;

/** The default table: two years back per at-fault claim. */
export const DEFAULT_NO_CLAIMS_STEP_BACK: NoClaimsStepBack = Object.freeze({
  '0': 0,
  '1': 0,
  '2': 0,
  '3': 1,
  '4': 2,
  '5': 3,
  '6': 4,
  '7': 5,
  '8': 6,
  '9': 7,
});

export const MAX_NO_CLAIMS_YEARS = 99;

/** The problems of a table as the API received it (paths under `path`); none when it is sound. */
export function noClaimsStepBackProblems(
  table: NoClaimsStepBack,
  path: string,
): Array<{ path: string; message: string }> {
  const problems: Array<{ path: string; message: string }> = [];
  const keys = Object.keys(table);
  if (keys.length === 0) problems.push({ path, message: 'must have at least one row' });
  for (const key of keys) {
    const years = Number(key);
    const kept = table[key];
    if (!/^\d{1,2}$/.test(key) || years > MAX_NO_CLAIMS_YEARS)
      problems.push({ path: `${path}/${key}`, message: 'must be keyed by whole years held, 0 to 99' });
    else if (kept === undefined || !Number.isInteger(kept) || kept < 0 || kept > years)
      problems.push({
        path: `${path}/${key}`,
        message: `must keep whole years from 0 to ${key}: a claim never adds years`,
      });
  }
  return problems;
}

/** Years kept after one at-fault claim by `table` (assumed sound). */
function stepBackOnce(table: NoClaimsStepBack, years: number): number {
  let bestKey = -1;
  for (const key of Object.keys(table)) {
    const k = Number(key);
    if (k <= years && k > bestKey) bestKey = k;
  }
  return bestKey < 0 ? 0 : Math.min(years, table[String(bestKey)] ?? 0);
}

/** The no-claims years at renewal: `years` stepped back once per at-fault claim settled in the term. */
export function noClaimsYearsAfter(
  years: number,
  atFaultClaims: number,
  table: NoClaimsStepBack = DEFAULT_NO_CLAIMS_STEP_BACK,
): number {
  let kept = Math.max(0, Math.floor(years));
  for (let i = 0; i < atFaultClaims && kept > 0; i++) kept = stepBackOnce(table, kept);
  return kept;
}
