export {
  decodePolyline,
  encodePolyline,
  firstPoint,
  lastPoint,
  DEFAULT_MAX_POINTS,
  type DecodedPolyline,
  type DecodeOptions,
  type PolylineDecodeResult,
  type PolylineFailure,
  type PolylineFailureReason,
  type PolylinePrecision,
} from './polyline.ts';
export {
  routeDistanceMetres,
  routeLengthMetres,
  segmentDistanceMetres,
  LONG_SEGMENT_METRES,
} from './distance.ts';
