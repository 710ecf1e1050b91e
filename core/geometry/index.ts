export * from './boxes';
export * from './shapes';
export * from './object-shape';
export * from './crop';
