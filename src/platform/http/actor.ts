/**
 * Who a request acts as, beyond a client or a policyholder: a signed-in staff member (the console) or
 * the holder of the admin API key (automation). Both are audited; the auth hooks set it.
 */
export type RequestActor =
  | {
      readonly kind: 'staff';
      readonly staffId: string;
      readonly email: string;
      readonly role: string;
    }
  | { readonly kind: 'admin-key' };

declare module 'fastify' {
  interface FastifyRequest {
    actor: RequestActor | null;
  }
  interface FastifyContextConfig {
    /** Which credentials a staff session stands in for on this route (from its OpenAPI security). */
    staffScope?: 'admin' | 'client';
    /** False where an audited action's row changes are the system's work, not the actor's (a billing run). */
    auditRows?: boolean;
    /**
     * True where reading is itself worth a record (a person's whole file, finance reports with names):
     * staff reads are recorded too, and every read is recorded before its answer starts to stream.
     */
    auditReads?: boolean;
  }
}
