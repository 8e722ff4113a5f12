/** The outline of the United Kingdom and Ireland, cut from Natural Earth at build time (web/gb-outline.ts). */
declare module 'virtual:gb-outline' {
  /** Rings of `[lng0, lat0, lng1, lat1, …]` in degrees, rounded to 1e-4°. */
  const rings: ReadonlyArray<ReadonlyArray<number>>;
  export default rings;
}
