/** The model registry and the champion/challenger gate (docs/promotion.md): pure rules and statistics. */
export * from './gate';
export * from './safety';
export * from './significance';
export * from './slices';
export * from './recall';
export * from './compare';
