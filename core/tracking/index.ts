export * from './assignment';
export * from './bytetrack';
export * from './session';
