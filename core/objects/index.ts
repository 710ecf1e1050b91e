export * from './states';
export * from './assets';
export * from './sources';
export * from './shape-edit';
