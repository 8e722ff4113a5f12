/** The products module's pure rules, for other modules' rules. */
export { capMetres, freeMetres, METRES_PER, type DistanceUnit } from './distances.ts';
export { productVersionAt, type VersionInTime } from './product-versions.ts';
