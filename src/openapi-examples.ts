import { EXAMPLE_JOURNEY_END, EXAMPLE_JOURNEY_START } from './modules/journeys/index.ts';
import { POLICY_INPUT_EXAMPLE } from './modules/policies/index.ts';

const DAY_SECONDS = 86_400;

/**
 * The OpenAPI document with its example dates moved to the day it is read: a policy whose term began
 * a month ago and runs eleven months more, and a journey that ended ten minutes ago. Examples written
 * with fixed dates go out of cover (a copied policy example would be accepted already ended, and a
 * journey refused as outside cover), so the document a reader copies from always works today.
 */
export function withCurrentExampleDates<T>(doc: T, now: Date): T {
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const start = nowSeconds - 30 * DAY_SECONDS;
  const moved = new Map<number, number>([
    [POLICY_INPUT_EXAMPLE.policy.start_date, start],
    [POLICY_INPUT_EXAMPLE.policy.end_date, start + 365 * DAY_SECONDS - 1],
    [EXAMPLE_JOURNEY_START, nowSeconds - 1_800],
    [EXAMPLE_JOURNEY_END, nowSeconds - 600],
  ]);
  const visit = (value: unknown, inExample: boolean): unknown => {
    if (typeof value === 'number') return inExample ? (moved.get(value) ?? value) : value;
    if (Array.isArray(value)) return value.map((item) => visit(item, inExample));
    if (typeof value !== 'object' || value === null) return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [
        key,
        visit(item, inExample || key === 'example' || key === 'examples'),
      ]),
    );
  };
  return visit(doc, false) as T;
}
