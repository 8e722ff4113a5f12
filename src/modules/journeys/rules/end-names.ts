/**
 * What naming needs of an end's place (the geocoder's `Place` is one): its name, and where the name is
 * a town, the part of it the end is in and the town it is part of.
 */
export interface NamedPlace {
  readonly name: string | null;
  readonly locality?: string | null;
  readonly town?: string | null;
}

/** The names shown for a journey's start and end. */
export interface EndNames {
  readonly start: string | null;
  readonly end: string | null;
}

/**
 * The names of a journey's two ends: each end's place name, except within one town, where the finer name
 * tells the ends apart:
 * - two ends with the same name ("London → London") are each named by their locality where they have one
 *   ("St Pancras → Westminster");
 * - two ends in the same town under different names, one of them the town's own ("Camden Town → London",
 *   Camden Town lying within London), name the end called by the town by its locality ("Camden Town →
 *   Westminster").
 * An end without a locality keeps its name, so nothing that had a name is left without one.
 */
export function endNames(start: NamedPlace, end: NamedPlace): EndNames {
  if (start.name !== null && start.name === end.name)
    return { start: start.locality ?? start.name, end: end.locality ?? end.name };
  const town = start.town ?? null;
  if (town === null || town !== end.town) return { start: start.name, end: end.name };
  const finer = (place: NamedPlace) => (place.name === town ? (place.locality ?? place.name) : place.name);
  return { start: finer(start), end: finer(end) };
}
