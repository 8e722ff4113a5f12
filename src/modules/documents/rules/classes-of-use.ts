/*
 * The limitations as to use a certificate of motor insurance states (Road Traffic Act 1988 s.147; the
 * Motor Vehicles (Third Party Risks) Regulations 1972, Schedule Form A, item 6), from the interface's
 * usage code. NOTE: the classes are the market's standard wording, each a superset of the one before
 * (social, domestic and pleasure; with commuting; business classes 1–3, each with commuting), because a
 * certificate that states less use than the policy covers would show a driver within the cover as
 * uninsured to the police and the Motor Insurers' Bureau. An unknown code is stated as sent. Pure.
 */

const CLASSES_OF_USE: Readonly<Record<string, string>> = {
  sdp: 'Use for social, domestic and pleasure purposes.',
  sdp_commuting:
    'Use for social, domestic and pleasure purposes, and by the policyholder for travel to and from a permanent place of work.',
  business_class_1:
    'Use for social, domestic and pleasure purposes, commuting, and in person by the policyholder and their spouse or civil partner in connection with their business or profession.',
  business_class_2:
    'Use for social, domestic and pleasure purposes, commuting, and in person by any named driver in connection with the policyholder’s business or profession.',
  business_class_3:
    'Use for social, domestic and pleasure purposes, commuting, business use by any named driver, and commercial travelling.',
};

/** The certificate's limitations as to use for `usage` (a code such as `sdp_commuting`), exclusions last. */
export function limitationsAsToUse(usage: string): string[] {
  return [
    CLASSES_OF_USE[usage.toLowerCase()] ?? `Use as stated in the schedule: ${usage.replace(/_/g, ' ')}.`,
    'The policy does not cover use for hire or reward, racing, pacemaking, speed testing, competitions, rallies or trials, commercial travelling (unless stated above), use on a race track or at an off-road event, or any purpose in connection with the motor trade.',
  ];
}
