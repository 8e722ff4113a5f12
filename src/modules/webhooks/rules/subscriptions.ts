/** Which events an endpoint receives. Pure. */

/** Whether an endpoint subscribed to `eventTypes` (null: every type) receives an event of `type`. */
export function subscribes(eventTypes: readonly string[] | null, type: string): boolean {
  return eventTypes === null || eventTypes.includes(type);
}

/**
 * The subscription list as stored: duplicates dropped, sorted, so two equal lists compare equal.
 * Returns the entries that are not in `known` as errors, so a typo is refused rather than silently
 * matching nothing for ever.
 */
export function normaliseSubscription(
  eventTypes: readonly string[],
  known: ReadonlySet<string>,
): { ok: true; eventTypes: string[] } | { ok: false; unknown: Array<{ index: number; type: string }> } {
  const unknown = eventTypes.flatMap((type, index) => (known.has(type) ? [] : [{ index, type }]));
  if (unknown.length > 0) return { ok: false, unknown };
  return { ok: true, eventTypes: [...new Set(eventTypes)].sort() };
}
