export * from './assignment';
export * from './bytetrack';
