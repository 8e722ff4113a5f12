import { installmentPlanApr } from '../../../src/modules/rating/rules/apr.ts';
import type {
  Condition,
  RateBookContent,
  RatingFactor,
} from '../../../src/modules/rating/rules/rate-book.ts';
import { DataTable } from './data-table.tsx';

/** Integer pence as pounds, exactly (no binary fraction on the way): 123456 → £1,234.56. */
export function penceText(pence: number): string {
  const sign = pence < 0 ? '−' : '';
  const whole = Math.trunc(Math.abs(pence) / 100);
  const rest = String(Math.abs(pence) % 100).padStart(2, '0');
  return `${sign}£${whole.toLocaleString('en-GB')}.${rest}`;
}

const APPLIES_TO: Readonly<Record<string, string>> = {
  fixed: 'the fixed premium',
  per_unit: 'the rate per unit',
  both: 'the fixed premium and the rate per unit',
};

const OPS: Readonly<Record<string, string>> = {
  lt: 'is below',
  lte: 'is at most',
  gt: 'is above',
  gte: 'is at least',
  eq: 'is',
  ne: 'is not',
  in: 'is one of',
  not_in: 'is none of',
};

/** An underwriting condition in words: "driver age is below 17 and vehicle group is above 45". */
export function conditionText(condition: Condition): string {
  if ('all' in condition) return condition.all.map((c) => `(${conditionText(c)})`).join(' and ');
  if ('any' in condition) return condition.any.map((c) => `(${conditionText(c)})`).join(' or ');
  const value = Array.isArray(condition.value)
    ? condition.value.map(String).join(', ')
    : String(condition.value);
  return `${condition.field.replace(/_/g, ' ')} ${OPS[condition.op] ?? condition.op} ${value}`;
}

/** A band row as read: "17 to under 21", "under 17", "70 and over". */
const bandText = (from: number | null, to: number | null): string =>
  from === null
    ? `under ${String(to)}`
    : to === null
      ? `${String(from)} and over`
      : `${String(from)} to under ${String(to)}`;

function FactorTable({ factor }: { factor: RatingFactor }) {
  const label = `Factor ${factor.name}`;
  return (
    <section className="panel" aria-label={label}>
      <h4>{factor.name}</h4>
      <p>
        {factor.kind === 'bands' ? 'Bands' : 'Keys'} of {factor.source.replace(/_/g, ' ')}, applied to{' '}
        {APPLIES_TO[factor.applies_to] ?? factor.applies_to}
        {factor.default === undefined ? '; no default.' : `; default ${factor.default}.`}
        {factor.customer_visible === true ? ' Shown to the customer.' : ''}
      </p>
      {factor.kind === 'bands' ? (
        <DataTable
          label={`Table of ${factor.name}`}
          columns={[
            { header: 'Band', cell: (row) => bandText(row.from, row.to) },
            { header: 'Factor', cell: (row) => row.factor, number: true },
          ]}
          rows={factor.rows}
          rowKey={(row) => `${String(row.from)}-${String(row.to)}`}
        />
      ) : (
        <DataTable
          label={`Table of ${factor.name}`}
          columns={[
            { header: 'Key', cell: (row) => row.key },
            { header: 'Factor', cell: (row) => row.factor, number: true },
          ]}
          rows={factor.rows}
          rowKey={(row) => row.key}
        />
      )}
    </section>
  );
}

/**
 * A version's content as tables. NOTE: the service checked the content against the rate book's rules
 * when it was written (every cell), so it is read here as that shape.
 */
export function RateBookContentView({ content }: { content: RateBookContent }) {
  const unit = content.usage_unit === 'km' ? 'kilometre' : 'mile';
  return (
    <div data-testid="version-content">
      <h3>Base rates and limits</h3>
      <dl className="facts">
        <dt>Base annual fixed premium</dt>
        <dd>{penceText(content.base_fixed_premium_pence)}</dd>
        <dt>Base rate per {unit}</dt>
        <dd>£{content.base_rate_per_unit}</dd>
        <dt>Minimum fixed premium</dt>
        <dd>{penceText(content.min_fixed_premium_pence)}</dd>
        <dt>Maximum fixed premium</dt>
        <dd>{penceText(content.max_fixed_premium_pence)}</dd>
        <dt>IPT</dt>
        <dd>{content.ipt_rate} %</dd>
        <dt>Commission</dt>
        <dd>{content.commission_rate} %</dd>
      </dl>
      <h3>Fees</h3>
      <dl className="facts">
        <dt>Admin</dt>
        <dd>{penceText(content.fees.admin_fee_pence)}</dd>
        <dt>Adjustment</dt>
        <dd>{penceText(content.fees.adjustment_fee_pence)}</dd>
        <dt>Cancellation</dt>
        <dd>{penceText(content.fees.cancellation_fee_pence)}</dd>
        <dt>Deposit</dt>
        <dd>{penceText(content.fees.deposit_fee_pence)}</dd>
      </dl>
      <h3>Rating factors, in the order they apply</h3>
      {content.factors.map((factor) => (
        <FactorTable key={factor.name} factor={factor} />
      ))}
      <h3>Installment plans</h3>
      <DataTable
        label="Installment plans"
        columns={[
          { header: 'Plan', cell: (plan) => (plan.kind === 'single' ? 'Single payment' : 'Monthly') },
          {
            header: 'Installments',
            cell: (plan) => (plan.kind === 'single' ? 1 : plan.installments),
            number: true,
          },
          {
            header: 'Loading',
            cell: (plan) => (plan.kind === 'single' ? '—' : plan.loading_rate),
            number: true,
          },
          // Computed as CONC App 1.1 defines it, never typed in.
          {
            header: 'APR',
            cell: (plan) => (plan.kind === 'single' ? '—' : `${installmentPlanApr(plan)} %`),
            number: true,
          },
        ]}
        rows={content.installment_plans}
        rowKey={(plan) => plan.kind}
      />
      <h3>Underwriting rules</h3>
      {content.underwriting_rules.length === 0 ? (
        <p className="empty">No underwriting rules: every quote is accepted.</p>
      ) : (
        <DataTable
          label="Underwriting rules"
          columns={[
            { header: 'Outcome', cell: (rule) => rule.outcome },
            { header: 'When', cell: (rule) => conditionText(rule.when) },
            { header: 'Reason', cell: (rule) => rule.reason },
          ]}
          rows={content.underwriting_rules}
          rowKey={(rule) => `${rule.outcome}:${rule.reason}`}
        />
      )}
    </div>
  );
}
