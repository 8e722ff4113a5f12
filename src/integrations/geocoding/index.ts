export { UNKNOWN_PLACE, type Place, type ReverseGeocoder } from './geocoder.ts';
export {
  createOfflineGeocoder,
  DEFAULT_DATA_DIR,
  type OfflineGeocoder,
  type OfflineGeocoderOptions,
} from './offline-geocoder.ts';
