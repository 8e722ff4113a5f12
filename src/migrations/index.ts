import type { Migration } from 'kysely/migration';
import * as m0001 from './0001-companies.ts';
import * as m0002 from './0002-policies.ts';
import * as m0003 from './0003-payments.ts';
import * as m0004 from './0004-auth.ts';
import * as m0005 from './0005-journeys.ts';
import * as m0006 from './0006-webhooks.ts';
import * as m0007 from './0007-statements.ts';
import * as m0008 from './0008-policy-revision.ts';
import * as m0009 from './0009-bulk-billing.ts';
import * as m0010 from './0010-policy-change-feed.ts';
import * as m0011 from './0011-store-journey.ts';
import * as m0012 from './0012-event-writes.ts';
import * as m0013 from './0013-route-storage.ts';
import * as m0014 from './0014-period-membership.ts';
import * as m0015 from './0015-billing-writes.ts';
import * as m0016 from './0016-journey-overlap.ts';
import * as m0017 from './0017-sandbox-accounts.ts';
import * as m0018 from './0018-refresh-grace.ts';
import * as m0019 from './0019-carried-forward.ts';
import * as m0020 from './0020-renewal-terms.ts';
import * as m0021 from './0021-products.ts';
import * as m0022 from './0022-product-rules.ts';
import * as m0023 from './0023-usage-alerts.ts';
import * as m0024 from './0024-telematics.ts';
import * as m0025 from './0025-device-journeys.ts';
import * as m0026 from './0026-odometer.ts';
import * as m0027 from './0027-back-office.ts';
import * as m0028 from './0028-policy-search-order.ts';
import * as m0029 from './0029-erasure.ts';
import * as m0030 from './0030-bordereau-order.ts';
import * as m0031 from './0031-cash-report-order.ts';
import * as m0032 from './0032-distribution-keys.ts';
import * as m0033 from './0033-event-partitions.ts';
import * as m0034 from './0034-policy-references.ts';
import * as m0035 from './0035-journey-partitions.ts';
import * as m0036 from './0036-due-pages.ts';
import * as m0037 from './0037-policy-audit.ts';
import * as m0038 from './0038-position-attributes.ts';
import * as m0039 from './0039-policy-feed-sources.ts';
import * as m0040 from './0040-outbox-accounts.ts';
import * as m0041 from './0041-no-company-currency.ts';
import * as m0042 from './0042-documents.ts';
import * as m0043 from './0043-document-templates.ts';
import * as m0044 from './0044-direct-debit.ts';
import * as m0046 from './0046-rate-books.ts';
import * as m0047 from './0047-quotes.ts';
import * as m0049 from './0049-claims.ts';
import * as m0050 from './0050-driving-scores.ts';
import * as m0053 from './0053-renewal-prices.ts';
import * as m0056 from './0056-position-minimisation.ts';
import * as m0057 from './0057-score-disputes.ts';
import * as m0058 from './0058-claim-ledger.ts';
import * as m0059 from './0059-quote-purchases.ts';
import * as m0060 from './0060-score-pricing.ts';
import * as m0061 from './0061-claims-owed-notify.ts';
import * as m0063 from './0063-prepaid-installments-and-quote-secrets.ts';
import * as m0064 from './0064-store-quote.ts';
import * as m0065 from './0065-quote-documents-as-json.ts';
import * as m0066 from './0066-journey-keys.ts';
import * as m0067 from './0067-device-offline-after.ts';
import * as m0068 from './0068-audit-failed-outcome.ts';
import * as m0069 from './0069-store-positions.ts';
import * as m0070 from './0070-renewal-held-to-notice.ts';
import * as m0071 from './0071-claim-payment-references.ts';
import * as m0072 from './0072-claim-report-references.ts';
import * as m0073 from './0073-quote-purchases-cancelled.ts';
import * as m0074 from './0074-payment-attempt-pins.ts';

/** Every migration, in order. Forward-only; add new files at the end. */
export const migrations: Record<string, Migration> = {
  '0001-companies': m0001,
  '0002-policies': m0002,
  '0003-payments': m0003,
  '0004-auth': m0004,
  '0005-journeys': m0005,
  '0006-webhooks': m0006,
  '0007-statements': m0007,
  '0008-policy-revision': m0008,
  '0009-bulk-billing': m0009,
  '0010-policy-change-feed': m0010,
  '0011-store-journey': m0011,
  '0012-event-writes': m0012,
  '0013-route-storage': m0013,
  '0014-period-membership': m0014,
  '0015-billing-writes': m0015,
  '0016-journey-overlap': m0016,
  '0017-sandbox-accounts': m0017,
  '0018-refresh-grace': m0018,
  '0019-carried-forward': m0019,
  '0020-renewal-terms': m0020,
  '0021-products': m0021,
  '0022-product-rules': m0022,
  '0023-usage-alerts': m0023,
  '0024-telematics': m0024,
  '0025-device-journeys': m0025,
  '0026-odometer': m0026,
  '0027-back-office': m0027,
  '0028-policy-search-order': m0028,
  '0029-erasure': m0029,
  '0030-bordereau-order': m0030,
  '0031-cash-report-order': m0031,
  '0032-distribution-keys': m0032,
  '0033-event-partitions': m0033,
  '0034-policy-references': m0034,
  '0035-journey-partitions': m0035,
  '0036-due-pages': m0036,
  '0037-policy-audit': m0037,
  '0038-position-attributes': m0038,
  '0039-policy-feed-sources': m0039,
  '0040-outbox-accounts': m0040,
  '0041-no-company-currency': m0041,
  '0042-documents': m0042,
  '0043-document-templates': m0043,
  '0044-direct-debit': m0044,
  '0046-rate-books': m0046,
  '0047-quotes': m0047,
  '0049-claims': m0049,
  '0050-driving-scores': m0050,
  '0053-renewal-prices': m0053,
  '0056-position-minimisation': m0056,
  '0057-score-disputes': m0057,
  '0058-claim-ledger': m0058,
  '0059-quote-purchases': m0059,
  '0060-score-pricing': m0060,
  '0061-claims-owed-notify': m0061,
  '0063-prepaid-installments-and-quote-secrets': m0063,
  '0064-store-quote': m0064,
  '0065-quote-documents-as-json': m0065,
  '0066-journey-keys': m0066,
  '0067-device-offline-after': m0067,
  '0068-audit-failed-outcome': m0068,
  '0069-store-positions': m0069,
  '0070-renewal-held-to-notice': m0070,
  '0071-claim-payment-references': m0071,
  '0072-claim-report-references': m0072,
  '0073-quote-purchases-cancelled': m0073,
  '0074-payment-attempt-pins': m0074,
};
