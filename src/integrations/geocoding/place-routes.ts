import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { AppError } from '../../platform/errors.ts';
import { problemResponses } from '../../platform/http/problem.ts';
import type { Gazetteer } from './geocoder.ts';

/** The attribution GeoNames' licence (CC BY 4.0) asks of anything that shows its names. */
export const PLACES_ATTRIBUTION =
  'Place names: GeoNames (https://www.geonames.org), licensed under CC BY 4.0.';
/** How long a browser or a shared cache may keep an answer: the places change only with a release. */
const MAX_AGE_SECONDS = 86_400;

const degrees = (limit: 90 | 180, description: string) =>
  Type.Number({ minimum: -limit, maximum: limit, description });

export const PlacesQuerySchema = Type.Object(
  {
    west: degrees(180, 'Western edge of the box: degrees of longitude (WGS84).'),
    south: degrees(90, 'Southern edge: degrees of latitude; not north of `north`.'),
    east: degrees(180, 'Eastern edge: degrees of longitude; not west of `west`.'),
    north: degrees(90, 'Northern edge: degrees of latitude.'),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 500, default: 100, description: 'The most places to answer.' }),
    ),
  },
  { additionalProperties: false },
);
export type PlacesQuery = Static<typeof PlacesQuerySchema>;

export const PlaceListSchema = Type.Object(
  {
    places: Type.Array(
      Type.Object({
        name: Type.String({ description: 'The place’s name, as GeoNames gives it.' }),
        lat: Type.Number({ description: 'Degrees (WGS84).' }),
        lng: Type.Number({ description: 'Degrees (WGS84).' }),
        kind: Type.Union([Type.Literal('town'), Type.Literal('locality')], {
          description:
            '`town`: a populated place (a city, town or large village); `locality`: a village, or a part of a town ("Soho").',
        }),
      }),
      {
        description:
          'The most prominent first: towns by population, largest first, then localities nearest the box’s centre first. A name appears once within 5 km.',
      },
    ),
    attribution: Type.String({ description: 'The credit a map showing these names must carry.' }),
  },
  { $id: 'PlaceList' },
);

/** GET /places: the gazetteer's towns and localities in a box, for labelling maps. */
export function placeRoutes(deps: { gazetteer: Gazetteer }): FastifyPluginAsyncTypebox {
  const { gazetteer } = deps;
  return async (app) => {
    app.addSchema(PlaceListSchema);
    app.get(
      '/places',
      {
        schema: {
          operationId: 'places.list',
          tags: ['places'],
          summary: 'Named places in a box',
          description:
            'The towns and localities of the offline gazetteer (GeoNames, the one that names journeys’ ends) inside a box, the most prominent first: what a map of a journey labels along its route, without a tile server. Open data and no tenant’s: it takes no credentials, and answers may be cached for a day. The policyholder app asks for a box rounded out to a grid of 0.05°, so a request shows no more of where someone drove than the area around it. Great Britain, Northern Ireland, the Isle of Man and the Channel Islands; elsewhere the list is empty.',
          querystring: PlacesQuerySchema,
          response: { 200: Type.Ref('PlaceList'), ...problemResponses(422, 503) },
        },
      },
      async (request, reply) => {
        const { west, south, east, north, limit = 100 } = request.query;
        const errors = [
          ...(west > east ? [{ path: '/querystring/east', message: 'must not be west of west' }] : []),
          ...(south > north ? [{ path: '/querystring/north', message: 'must not be south of south' }] : []),
        ];
        if (errors.length > 0)
          throw new AppError('VALIDATION_FAILED', 'The box’s edges are the wrong way round', { errors });
        const places = await gazetteer.placesWithin({ west, south, east, north }, limit);
        // Cacheable by shared caches, and the CORS headers depend on Origin (platform/http/cors.ts).
        void reply.header('cache-control', `public, max-age=${MAX_AGE_SECONDS}`).header('vary', 'Origin');
        return { places, attribution: PLACES_ATTRIBUTION };
      },
    );
  };
}
