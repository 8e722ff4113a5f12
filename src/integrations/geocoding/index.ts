export {
  UNKNOWN_PLACE,
  type Box,
  type Gazetteer,
  type GazetteerPlace,
  type Place,
  type ReverseGeocoder,
} from './geocoder.ts';
export {
  createOfflineGeocoder,
  DEFAULT_DATA_DIR,
  type OfflineGeocoder,
  type OfflineGeocoderOptions,
} from './offline-geocoder.ts';
export { PLACES_ATTRIBUTION, placeRoutes } from './place-routes.ts';
