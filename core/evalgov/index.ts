/** Evaluation governance (docs/quality-evalgov.md): pure logic behind the /api/evalgov routes. */
export * from './match';
export * from './coco';
export * from './evaluate';
export * from './slice-scope';
export * from './hierarchy';
export * from './safety';
export * from './shadow';
export * from './blind-audit';
export * from './significance';
