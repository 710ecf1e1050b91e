export * from './sequence';
export * from './clear';
export * from './identity';
export * from './hota';
export * from './evaluate';
