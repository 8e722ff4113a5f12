import type { components, operations } from '../../../sdk/src/index.ts';

/*
 * The shapes the console reads, named from the generated OpenAPI types (sdk/src/openapi.ts): nothing
 * here is written by hand, so a change in what the service answers is a type error in the console.
 */

type JsonOf<R> = R extends { content: { 'application/json': infer T } } ? T : never;
type Success<Op extends keyof operations> = Extract<keyof operations[Op]['responses'], 200 | 201 | 202>;
/** What an operation answers when it succeeds. */
export type Answer<Op extends keyof operations> = JsonOf<operations[Op]['responses'][Success<Op>]>;

export type StaffSession = Answer<'staff.session'>;
export type Role = StaffSession['staff']['role'];
export type TotpEnrolment = Answer<'staff.beginTotp'>;
export type StaffAccount = Answer<'staff.list'>['data'][number];
/** `sandbox` or `production`: the environments a company's data lives in. */
export type Environment = NonNullable<
  NonNullable<operations['audit.list']['parameters']['query']>['environment']
>;

export type Company = components['schemas']['CompanySummary'];
export type CompanyCredentials = components['schemas']['CompanyCredentials'];
export type AuditRow = Answer<'audit.list'>['data'][number];
export type PolicyRow = Answer<'policies.search'>['data'][number];

export type Policy = Answer<'policies.get'>;
export type PolicyVersion = Policy['versions'][number];
export type Journey = components['schemas']['Journey'];
export type Statement = Answer<'statements.list'>['statements'][number];
/** A payment with its attempts and decline code, as GET /payments lists it. */
export type Payment = Answer<'payments.list'>['payments'][number];
export type Device = components['schemas']['Device'];
export type Webhook = components['schemas']['WebhookEndpoint'];
export type WebhookDelivery = components['schemas']['WebhookDelivery'];
export type Product = components['schemas']['Product'];
export type DocumentTemplate = components['schemas']['DocumentTemplate'];
/** A billing run's result; its progress events carry the counts alone. */
export type BillingRun = Answer<'statements.billingRun'>;
export type BillingRunCounts = Omit<BillingRun, 'failures'>;

/** The company and environment a per-company request is made for. */
export interface Tenant {
  readonly company: Company;
  readonly environment: Environment;
}
export type RateBook = components['schemas']['RateBook'];
export type RateBookVersion = Answer<'rateBooks.getVersion'>;
export type RateBookImpact = Answer<'rateBooks.impact'>;
export type Claim = components['schemas']['Claim'];
export type ClaimState = Claim['state'];
export type ClaimExposure = Claim['exposures'][number];
export type ClaimPayment = Claim['payments'][number];
