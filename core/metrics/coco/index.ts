export * from './types';
export * from './params';
export * from './evaluate';
export * from './streaming';
export * from './compare';
export {
  boxIou,
  maskIou,
  rleArea,
  rleBoundingBox,
  rleFromPolygon,
  rleFromString,
  rleUnion,
  segmentationToRle,
  withBoundingBox,
} from './mask';
export type { Rle, BoxedRle } from './mask';
