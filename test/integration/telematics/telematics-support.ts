import type { TestApp } from '../../support/app.ts';

export interface DeviceBody {
  device_id: string;
  kind: string;
  vin: string | null;
  policy_reference: string | null;
  status: 'online' | 'offline' | 'unbound';
  last_seen_at: string | null;
  bindings: Array<{ policy_reference: string; bound_at: string; unbound_at: string | null }>;
  created_at: string;
}
export interface Problem {
  code: string;
  detail: string;
  errors?: Array<{ path: string; message: string }>;
}
export interface BatchResult {
  accepted: number;
  duplicates: number;
  rejected: Array<{ index: number; reason: string; message: string }>;
}

export type Method = 'GET' | 'POST' | 'DELETE';

/** Requests to the app under test with a tenant's headers. */
export function caller(t: () => TestApp) {
  return (method: Method, url: string, headers: Record<string, string>, payload?: object) =>
    t().app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
}

export async function eventsOfType(t: TestApp, type: string) {
  return t.container.database.db
    .selectFrom('events')
    .select(['type', 'data', 'company_id'])
    .where('type', '=', type)
    .orderBy('sequence')
    .execute();
}
