import type { components, operations, PolicyDetails } from '../../../sdk/src/index.ts';

/** What the console reads at /console/config.json. */
export interface ConsoleConfig {
  readonly brand_name: string;
  readonly environment_default: Environment;
  /** A raster tile template for journey maps; null: the outline shipped in the app. */
  readonly map_tile_url: string | null;
}

export type Environment = 'sandbox' | 'production';
export type Role = 'admin' | 'operations' | 'viewer';

export interface StaffMember {
  readonly staff_id: string;
  readonly email: string;
  readonly role: Role;
  readonly totp_enabled: boolean;
}

export interface TotpEnrolment {
  readonly secret: string;
  readonly otpauth_uri: string;
  /** An `<svg>` document. */
  readonly qr_svg: string;
}

/** The server's staff session: a stage to finish, or `active`. The cookie itself is never seen by the page. */
export interface StaffSession {
  readonly stage: 'new_password' | 'totp_enrol' | 'totp' | 'active';
  readonly csrf_token: string;
  readonly expires_at: string;
  readonly staff: StaffMember;
  readonly totp_enrolment?: TotpEnrolment;
}

export interface Company {
  readonly company_reference: string;
  readonly name: string;
  readonly client_id: string;
  readonly created_at?: string;
  readonly contact_email?: string | null;
  readonly secrets_rotated_at?: string | null;
}

/** The company and environment a per-company request is made for. */
export interface Tenant {
  readonly company: Company;
  readonly environment: Environment;
}

export interface PolicyRow {
  readonly policy_reference: string;
  readonly company_reference: string;
  readonly company_name: string;
  readonly client_id: string;
  readonly environment: Environment;
  readonly status: string;
  readonly policyholder_name: string | null;
  readonly email: string | null;
  readonly vehicle_reg: string | null;
  readonly postcode: string | null;
  readonly user_reference: string | null;
  readonly start_date: string | number;
  readonly end_date: string | number;
}

export interface AuditRow {
  readonly id: string | number;
  readonly occurred_at: string;
  /** `staff:<email>` or `admin-key`. */
  readonly actor: string;
  readonly role: string | null;
  /** The operation, e.g. `journeys.void`. */
  readonly action: string;
  readonly resource: string | null;
  readonly company_reference: string | null;
  readonly environment: string | null;
  readonly policy_reference: string | null;
  readonly request_id: string;
  readonly source_address: string | null;
  readonly outcome: 'ok' | 'denied';
  readonly table: string | null;
  readonly key: string | null;
  readonly operation: 'insert' | 'update' | 'delete' | null;
  readonly before: Readonly<Record<string, unknown>> | null;
  readonly after: Readonly<Record<string, unknown>> | null;
}

export interface StaffAccount {
  readonly staff_id: string;
  readonly email: string;
  readonly role: Role;
  readonly active: boolean;
  readonly totp_enabled: boolean;
  readonly created_at: string;
  readonly last_sign_in_at: string | null;
}

export interface BillingRunCounts {
  readonly date: string;
  readonly due: number;
  readonly billed: number;
  readonly already_billed: number;
  readonly failed: number;
}

export interface BillingRunDone extends BillingRunCounts {
  readonly failures?: ReadonlyArray<{
    readonly policy_reference: string;
    readonly reason: string;
  }>;
}

export type Policy = PolicyDetails;
export type PolicyVersion = PolicyDetails['versions'][number];
/** A payment with its attempts and decline code, as GET /payments lists it. */
export type Payment =
  operations['payments.list']['responses'][200]['content']['application/json']['payments'][number];
/** A failed payment in dunning, as GET /payments/failed lists it. */
export type FailedPayment = Payment & { readonly policy_reference: string };
export type Statement =
  operations['statements.list']['responses'][200]['content']['application/json']['statements'][number];
export type Journey = components['schemas']['Journey'];
export type Device = components['schemas']['Device'];
export type Webhook = components['schemas']['WebhookEndpoint'];
export type WebhookDelivery = components['schemas']['WebhookDelivery'];
export type Product = components['schemas']['Product'];

export interface Page<T> {
  readonly data: readonly T[];
  readonly next_cursor: string | null;
}
