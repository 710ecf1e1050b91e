export * from './shapes';
export * from './object-shape';
