/** The monthly statement: the period, its map, each day's distance and cost, the caps and credits, the total. */
import type { StatementContent } from '../document-content.ts';
import {
  CONTENT_WIDTH_PT,
  MARGIN_PT,
  ensureSpace,
  facts,
  heading,
  paragraph,
  table,
  type Layout,
} from './layout.ts';
import { drawRouteMap } from './route-map.ts';
import { distance, longDate, money, printable, shortDate } from './text.ts';

const MAP_HEIGHT_PT = 250;

/** The statement's money, line by line: what was charged for, each credit, what is billed. */
function amountRows(s: StatementContent): Array<[string, string]> {
  const rows: Array<[string, string, number]> = [
    ['Distance charge (usage premium)', money(s.usagePremiumPence), 1],
    ['Subscription premium', money(s.subscriptionPremiumPence), 1],
    ['Daily cap credit (already taken off the distance charge)', money(-s.capCreditPence), s.capCreditPence],
    ['Annual cap credit (already taken off)', money(-s.annualCapCreditPence), s.annualCapCreditPence],
    [
      'Free distance credit (already taken off)',
      money(-s.freeDistanceCreditPence),
      s.freeDistanceCreditPence,
    ],
    ['Top-up to the minimum distance charge', money(s.minimumTopUpPence), s.minimumTopUpPence],
    ['Total premium', money(s.totalPremiumPence), 1],
    [
      s.scoreAdjustmentPence < 0
        ? 'Driving score discount (by each month’s score)'
        : 'Driving score surcharge (by each month’s score)',
      money(s.scoreAdjustmentPence),
      s.scoreAdjustmentPence,
    ],
    ['Brought forward from earlier statements', money(s.broughtForwardPence), s.broughtForwardPence],
    ['Credits used', money(-s.creditsUsedPence), s.creditsUsedPence],
    ['Carried forward to later statements', money(s.carriedForwardPence), s.carriedForwardPence],
  ];
  return rows.filter(([, , shown]) => shown !== 0).map(([label, value]) => [label, value]);
}

/** Lays out a statement: summary, route map, day table, capped days, amounts and how they are paid. */
export function renderStatement(l: Layout, s: StatementContent): void {
  const { doc } = l;
  facts(l, [
    ['Policyholder', s.policyholder.name],
    ['Policy number', s.policyReference],
    ['Vehicle', s.registrationMark],
    ['Period', `${longDate(s.periodStartOn)} to ${longDate(s.periodEndOn)}`],
    ['Distance driven', `${distance(s.distanceMetres, s.usageUnit)} in ${String(s.journeyCount)} journeys`],
    ['Amount billed', money(s.billedPremiumPence)],
  ]);
  heading(l, 'Where you drove');
  ensureSpace(l, MAP_HEIGHT_PT + 10);
  drawRouteMap(
    l,
    s.routes,
    { x: MARGIN_PT, y: doc.y, width: CONTENT_WIDTH_PT, height: MAP_HEIGHT_PT },
    `Map of ${String(s.routes.length)} journeys from ${longDate(s.periodStartOn)} to ${longDate(s.periodEndOn)} over the outline of Great Britain`,
  );
  heading(l, 'Day by day');
  table(
    l,
    [
      { header: 'Day', share: 0.3 },
      { header: 'Journeys', share: 0.2, align: 'right' },
      { header: 'Distance', share: 0.25, align: 'right' },
      { header: 'Cost', share: 0.25, align: 'right' },
    ],
    s.days.map((d) => [
      shortDate(d.date),
      String(d.journeyCount),
      distance(d.distanceMetres, s.usageUnit),
      money(d.costPence),
    ]),
    {
      totals: [
        'Total',
        String(s.journeyCount),
        distance(s.distanceMetres, s.usageUnit),
        money(s.days.reduce((sum, d) => sum + d.costPence, 0)),
      ],
    },
  );
  if (s.cappedDays.length > 0) {
    heading(l, 'Capped days');
    table(
      l,
      [
        { header: 'Day', share: 0.25 },
        { header: 'Driven', share: 0.25, align: 'right' },
        { header: 'Charged', share: 0.25, align: 'right' },
        { header: 'Credit', share: 0.25, align: 'right' },
      ],
      s.cappedDays.map((d) => [
        shortDate(d.date),
        distance(d.drivenMetres, s.usageUnit),
        distance(d.chargedMetres, s.usageUnit),
        money(d.creditPence),
      ]),
    );
  }
  heading(l, 'Amounts');
  table(
    l,
    [
      { header: 'Item', share: 0.72 },
      { header: 'Amount', share: 0.28, align: 'right' },
    ],
    amountRows(s),
    { totals: ['Billed for this statement', money(s.billedPremiumPence)] },
  );
  paragraph(l, printable(s.howPaid), { bold: true });
  paragraph(l, `Statement reference ${printable(s.statementReference)}.`, { sizePt: 8 });
}
