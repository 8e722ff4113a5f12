/** Driving score emails to policyholders. Pure. */
import { renderEmail, type RenderedEmail } from './email-templates.ts';

const KIND_NAMES: Readonly<Record<string, string>> = {
  harsh_braking: 'Harsh braking',
  rapid_acceleration: 'Rapid acceleration',
  harsh_cornering: 'Harsh cornering',
  speeding: 'Speeding',
  fatigue: 'Driving without a break',
};

/** Template `score-dispute-accepted` or `score-dispute-rejected`: staff decided a disputed driving event. */
export function scoreDisputeDecidedEmail(values: {
  firstNames: string;
  policyReference: string;
  /** The event's kind (`harsh_braking`, …). */
  kind: string;
  /** When the event began, as people read it (Europe/London). */
  occurredAt: string;
  outcome: 'accepted' | 'rejected';
  reason: string;
  /** The London month `YYYY-MM` of the event's trip and its score now (accepted only; null: none). */
  month: string;
  monthScore: number | null;
}): RenderedEmail {
  const accepted = values.outcome === 'accepted';
  return renderEmail(
    accepted ? 'We have upheld your driving score dispute' : 'We have looked into your driving score dispute',
    `Hello ${values.firstNames},`,
    [
      [
        accepted
          ? 'We agree with you: the event no longer counts in your driving score, and your scores have been worked out again without it.'
          : 'We have reviewed the event you disputed and it still counts in your driving score.',
        null,
      ],
      ['Policy', values.policyReference],
      ['Event', `${KIND_NAMES[values.kind] ?? values.kind}, ${values.occurredAt}`],
      ['Reason', values.reason],
      ...(accepted
        ? [
            [
              `Score for ${values.month}`,
              values.monthScore === null ? 'none yet' : values.monthScore.toFixed(1),
            ] as const,
          ]
        : []),
    ],
    'Thank you for telling us.',
  );
}
