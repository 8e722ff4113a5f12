import { useState, type SyntheticEvent } from 'react';
import { unwrap, type components, type Session } from '../../../sdk/src/index.ts';
import { formatDistance } from '../../shared/format.ts';
import { humanError } from './errors.ts';
import { METRES_PER, type Unit } from './usage-sums.ts';

type Budget = components['schemas']['MileageBudget'];

/** The service's largest budget (usage-schemas.ts). */
const BUDGET_MAX = 1_000_000;

/** The budget as typed, checked in words before anything is sent; a number when it is good. */
function checkBudget(text: string, unit: Unit): number | string {
  const units = unit === 'km' ? 'kilometres' : 'miles';
  const cleaned = text.trim().replace(/,/g, '');
  if (cleaned === '') return `Enter your monthly budget in ${units}, for example 500.`;
  if (!/^\d+(\.\d+)?$/.test(cleaned)) return `Enter the budget as a number of ${units}, like 500 or 750.5.`;
  const value = Number(cleaned);
  if (value <= 0) return `The budget must be more than 0 ${units}.`;
  if (value > BUDGET_MAX) return `The budget can be at most ${BUDGET_MAX.toLocaleString('en-GB')} ${units}.`;
  return value;
}

export function BudgetForm(props: {
  session: Session;
  policyReference: string;
  unit: Unit;
  budget: Budget | null | undefined;
  loadError: string | undefined;
  onSaved: (budget: Budget) => void;
}) {
  const { session, policyReference, unit, budget, loadError, onSaved } = props;
  const [text, setText] = useState('');
  const [problem, setProblem] = useState<string | undefined>();
  const [saved, setSaved] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const units = unit === 'km' ? 'kilometres' : 'miles';

  const submit = async (event: SyntheticEvent<HTMLFormElement>) => {
    event.preventDefault();
    setSaved(undefined);
    const checked = checkBudget(text, unit);
    if (typeof checked === 'string') {
      setProblem(checked);
      return;
    }
    setProblem(undefined);
    setBusy(true);
    try {
      const stored = await unwrap(
        session.client.PUT('/policys/{policy_reference}/mileage-budget', {
          params: { path: { policy_reference: policyReference } },
          body: { distance_per_month: checked },
        }),
      );
      onSaved(stored);
      setText('');
      setSaved(
        `Saved: your budget is ${formatDistance(stored.distance_per_month, stored.usage_unit)} a month.`,
      );
    } catch (caught) {
      setProblem(humanError(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="budget-title" className="card">
      <h2 id="budget-title">Monthly budget</h2>
      {loadError !== undefined ? (
        <p className="message error" role="alert">
          Your budget could not be loaded. {loadError}
        </p>
      ) : budget === undefined ? (
        <p role="status">Loading your budget…</p>
      ) : budget === null ? (
        <p>You have not set a budget. Set one and we will tell you when a month’s driving passes it.</p>
      ) : (
        <p data-testid="budget-now">
          Your budget is {formatDistance(budget.distance_per_month, budget.usage_unit)} a month. This month so
          far:{' '}
          {formatDistance(
            budget.distance_this_month_in_metres / METRES_PER[budget.usage_unit],
            budget.usage_unit,
          )}
          {budget.exceeded ? ', over your budget.' : '.'}
        </p>
      )}
      <p className="hint">A budget is for you to keep track: it never changes what you pay.</p>
      <form noValidate onSubmit={(event) => void submit(event)}>
        <div className="field">
          <label htmlFor="budget-distance">Budget a month, in {units}</label>
          <input
            id="budget-distance"
            name="distance_per_month"
            inputMode="decimal"
            autoComplete="off"
            value={text}
            aria-invalid={problem === undefined ? undefined : true}
            aria-describedby={problem === undefined ? undefined : 'budget-problem'}
            onChange={(event) => {
              setText(event.target.value);
            }}
          />
        </div>
        {problem === undefined ? null : (
          <p id="budget-problem" className="message error" role="alert">
            {problem}
          </p>
        )}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Saving…' : budget == null ? 'Set budget' : 'Change budget'}
        </button>
        <p role="status" className="saved">
          {saved}
        </p>
      </form>
    </section>
  );
}
