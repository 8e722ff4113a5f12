import type { Executor } from '../../schema.ts';
import { londonDate } from '../../platform/london-calendar.ts';
import { AppError } from '../../platform/errors.ts';
import { asTenant, type DataEnvironment, type Tenant } from '../companies/index.ts';
import { listStatementJourneys, type Journey } from '../journeys/index.ts';
import {
  findPolicy,
  findPolicyReference,
  listVersions,
  type PolicyResponse,
  type PolicySnapshot,
  type VersionRecord,
} from '../policies/index.ts';
import { findProducts, productVersionAt } from '../products/index.ts';
import type { Statement } from '../statements/index.ts';
import type { DocumentInput } from './document-content.ts';
import { findBranding } from './template-service.ts';
import {
  DocumentWithdrawn,
  type DocumentSubject,
  type RenderedDocument,
  type RenderSubject,
} from './document-context.ts';
import {
  cancellationNoticeContent,
  refundCreditNoteContent,
  renewalNoticeContent,
  statementContent,
  voidCreditNoteContent,
} from './document-billing-content.ts';
import { ipidContent, statementOfFactContent } from './document-fact-content.ts';
import {
  certificateContent,
  fromSeconds,
  scheduleContent,
  usageUnitOf,
  type ProductFacts,
} from './document-policy-content.ts';
import { documentFileName } from './render/file-name.ts';
import { renderInProcess, type RenderPdf } from './render/render-pool.ts';

/** What documents read of other modules' services (the container passes them). */
export interface DocumentSources {
  /** The policy as the API shows it: its payments, its stored renewal terms. */
  readonly policy: (tenant: Tenant, reference: string) => Promise<PolicyResponse>;
  readonly statement: (tenant: Tenant, statementId: string) => Promise<Statement>;
  readonly journey: (tenant: Tenant, journeyId: string) => Promise<Journey>;
}

/** What every kind of document is built from. */
interface Facts {
  readonly db: Executor;
  readonly tenant: Tenant;
  readonly subject: DocumentSubject;
  readonly reference: string;
  readonly versions: readonly VersionRecord[];
  /** The version the document states, or the terms in force when it is issued. */
  readonly version: VersionRecord;
  readonly product: ProductFacts;
  readonly insurerName: string;
}

const SETS_TERMS = new Set(['nb', 'mta', 'rn']);

/** The version a document states: the one it names, else the latest that set the terms by `at`. */
function versionFor(versions: readonly VersionRecord[], id: string | null, at: Date): VersionRecord {
  const named = id === null ? undefined : versions.find((v) => v.id === id);
  if (named !== undefined && named.versionType !== 'st') return named;
  const setting = versions.filter((v) => SETS_TERMS.has(v.versionType) && v.supersededAt === null);
  const inForce = setting.filter((v) => v.effectiveAt.getTime() <= at.getTime()).at(-1) ?? setting.at(-1);
  if (inForce === undefined) throw new AppError('INTERNAL', 'the policy has no version that sets its terms');
  return inForce;
}

/** The product a snapshot names, as its version in force at the term's start; a plain default without one. */
async function productFor(db: Executor, tenant: Tenant, snapshot: PolicySnapshot): Promise<ProductFacts> {
  const reference = snapshot.policy.product_reference;
  const [product] = reference === undefined ? [] : await findProducts(db, tenant, [reference]);
  const version = product && productVersionAt(product.versions, fromSeconds(snapshot.policy.start_date));
  if (product === undefined || version === undefined)
    return {
      reference: reference ?? null,
      name: 'Pay-by-mile motor insurance',
      usageUnit: snapshot.pricing.usage_unit ?? 'mile',
      rules: {},
      effectiveFrom: null,
    };
  return {
    reference: product.reference,
    name: version.name,
    usageUnit: product.usageUnit,
    rules: version.rules,
    effectiveFrom: version.effectiveFrom,
  };
}

/** The statement's journeys with their routes, as the statement billed them. */
async function statementJourneys(facts: Facts, statement: Statement) {
  const byStatement = await listStatementJourneys(facts.db, facts.subject.policyId, [
    {
      id: statement.policy_version_reference,
      period_start_at: new Date(statement.statement_start_date),
      period_end_at: new Date(statement.statement_end_date),
    },
  ]);
  return byStatement.get(statement.policy_version_reference) ?? [];
}

/** The renewal a notice announces: the `rn` version it names, or the terms stored for automatic renewal. */
async function renewalInput(facts: Facts): Promise<DocumentInput> {
  const { subject, versions, reference } = facts;
  const issuedAt = subject.issuedAt;
  const usageUnit = usageUnitOf(facts.version.snapshot, facts.product);
  const named =
    subject.policyVersionId === null ? undefined : versions.find((v) => v.id === subject.policyVersionId);
  if (named !== undefined) {
    // Last year's price: the terms in force before the new term's first version.
    const before = versions.filter(
      (v) => v.sequence < named.sequence && SETS_TERMS.has(v.versionType) && v.term !== named.term,
    );
    const current = before.at(-1) ?? named;
    return {
      kind: 'renewal_notice',
      content: renewalNoticeContent(reference, current.snapshot, named.snapshot, {
        usageUnit,
        autoRenew: named.snapshot.policy.auto_renew ?? false,
        issuedAt,
      }),
    };
  }
  const terms = (await findPolicy(facts.db, facts.tenant, reference))?.renewalTerms ?? null;
  if (terms === null)
    throw new DocumentWithdrawn(`policy ${reference} has no renewal terms stored: the renewal was withdrawn`);
  return {
    kind: 'renewal_notice',
    content: renewalNoticeContent(reference, facts.version.snapshot, terms, {
      usageUnit,
      autoRenew: true,
      issuedAt,
    }),
  };
}

/** The document's input: its kind's content from what the database holds now. */
async function inputOf(facts: Facts, sources: DocumentSources): Promise<DocumentInput> {
  const { subject, reference, version, product, insurerName } = facts;
  const issuedAt = subject.issuedAt;
  switch (subject.kind) {
    case 'certificate':
      return { kind: 'certificate', content: certificateContent(reference, version, insurerName, issuedAt) };
    case 'schedule':
      return {
        kind: 'schedule',
        content: scheduleContent(reference, version, product, { insurerName, issuedAt }),
      };
    case 'ipid':
      return { kind: 'ipid', content: ipidContent(product, version.snapshot, { insurerName, issuedAt }) };
    case 'statement_of_fact':
      return { kind: 'statement_of_fact', content: statementOfFactContent(reference, version, issuedAt) };
    case 'renewal_notice':
      return renewalInput(facts);
    case 'cancellation_notice': {
      const policy = await sources.policy(facts.tenant, reference);
      return {
        kind: 'cancellation_notice',
        content: cancellationNoticeContent(reference, version, policy.payments, issuedAt),
      };
    }
    case 'statement': {
      if (subject.statementId === null)
        throw new AppError('INTERNAL', 'a statement document names no statement');
      const statement = await sources.statement(facts.tenant, subject.statementId);
      const journeys = await statementJourneys(facts, statement);
      const usageUnit = usageUnitOf(version.snapshot, product);
      return {
        kind: 'statement',
        content: statementContent(statement, journeys, { snapshot: version.snapshot, usageUnit, issuedAt }),
      };
    }
    case 'credit_note':
      return creditNoteInput(facts, sources);
  }
}

async function creditNoteInput(facts: Facts, sources: DocumentSources): Promise<DocumentInput> {
  const { subject, reference, version } = facts;
  if (subject.journeyId !== null) {
    const journey = await sources.journey(facts.tenant, subject.journeyId);
    return {
      kind: 'credit_note',
      content: voidCreditNoteContent(journey, version.snapshot, subject.issuedAt),
    };
  }
  const policy = await sources.policy(facts.tenant, reference);
  const refund = policy.payments.find((p) => p.payment_reference === subject.paymentId);
  if (refund === undefined) throw new AppError('INTERNAL', `refund ${String(subject.paymentId)} not found`);
  return {
    kind: 'credit_note',
    content: refundCreditNoteContent(reference, refund, version.snapshot, subject.issuedAt),
  };
}

/**
 * Renders documents from the database as it stands: the subject's policy, version, product, statement
 * or payment, laid out (render/) with the company's template of the day. Throws when the subject is
 * gone: the worker retries it later. `pdf` lays the document out (a render thread's pool, or this thread).
 */
export function createRenderer(sources: DocumentSources, pdf: RenderPdf = renderInProcess): RenderSubject {
  return async (db: Executor, subject: DocumentSubject): Promise<RenderedDocument> => {
    const tenant = asTenant(subject.companyId, subject.environment as DataEnvironment);
    const reference = await findPolicyReference(db, subject.policyId);
    if (reference === undefined) throw new AppError('NOT_FOUND', `policy ${subject.policyId} not found`);
    const versions = await listVersions(db, subject.policyId);
    const version = versionFor(versions, subject.policyVersionId, subject.issuedAt);
    const product = await productFor(db, tenant, version.snapshot);
    // The company's template for the product on the day it is issued (its defaults without one).
    const branding = await findBranding(db, tenant, product.reference, londonDate(subject.issuedAt));
    const facts: Facts = {
      db,
      tenant,
      subject,
      reference,
      versions,
      version,
      product,
      insurerName: branding.insurerName,
    };
    const input = await inputOf(facts, sources);
    return {
      bytes: await pdf(input, branding),
      fileName: documentFileName(input),
      templateVersion: String(branding.templateVersion),
    };
  };
}
